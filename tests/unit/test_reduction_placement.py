"""A reduction is only the whole value of a `let` or an assignment (decision 39): inside an
expression it is E0219 at its `parallel` or `bulk`, not "expected identifier" (E0104)."""

from __future__ import annotations

import pytest

from gasync.dsl import parse
from gasync.dsl.diagnostics import (
    MisplacedReductionError,
    ParseError,
    ReservedWordError,
    UnexpectedTokenError,
    render,
)

HEAD = "buffer o: i64[4] = zeros;\ntask main {\n"


def _error(stmt: str) -> tuple[type, str, str]:
    src = HEAD + f"    {stmt}\n}}\n"
    with pytest.raises(ParseError) as info:
        parse(src, "r.gasync")
    return type(info.value), info.value.code, render(info.value, "r.gasync", src)


def test_a_reduction_inside_a_let_expression() -> None:
    assert _error("let v: i64 = 1 + parallel for i in 0..4 reduce sum { i };") == (
        MisplacedReductionError,
        "E0219",
        "r.gasync:3:22: error: a reduction ('parallel for ... reduce') can only be the whole value of a 'let'"
        " or an assignment\n"
        "   |\n"
        " 3 |     let v: i64 = 1 + parallel for i in 0..4 reduce sum { i };\n"
        "   |                      ^^^^^^^^\n"
        "  = note: name it first ('let r = parallel for ... reduce OP { ... };') and use 'r' here",
    )


def test_a_reduction_in_parentheses() -> None:
    assert _error("o[0] = (parallel for i in 0..4 reduce sum { i });") == (
        MisplacedReductionError,
        "E0219",
        "r.gasync:3:13: error: a reduction ('parallel for ... reduce') can only be the whole value of a 'let'"
        " or an assignment\n"
        "   |\n"
        " 3 |     o[0] = (parallel for i in 0..4 reduce sum { i });\n"
        "   |             ^^^^^^^^\n"
        "  = note: name it first ('let r = parallel for ... reduce OP { ... };') and use 'r' here",
    )


@pytest.mark.parametrize(
    ("stmt", "column"),
    [
        ("o[0] = 1 + bulk for i in 0..4 reduce sum { i };", 16),
        ("o[0] = min(3, bulk for i in 0..(4) reduce max { i });", 19),
        ("o[0] += 2 * (parallel for i in 0..o[0] reduce sum { o[i] });", 18),
    ],
)
def test_a_bulk_reduction_or_one_as_an_argument(stmt: str, column: int) -> None:
    cls, code, text = _error(stmt)
    kw = "bulk" if "bulk" in stmt else "parallel"
    assert (cls, code) == (MisplacedReductionError, "E0219")
    assert text.startswith(
        f"r.gasync:3:{column}: error: a reduction ('{kw} for ... reduce') can only be the whole value of a"
        " 'let' or an assignment\n"
    )


def test_a_loop_without_reduce_where_a_value_belongs() -> None:
    assert _error("let v: i64 = 1 + parallel for i in 0..4 { o[i] = 1; };") == (
        UnexpectedTokenError,
        "E0101",
        "r.gasync:3:22: error: expected expression, found keyword 'parallel'\n"
        "   |\n"
        " 3 |     let v: i64 = 1 + parallel for i in 0..4 { o[i] = 1; };\n"
        "   |                      ^^^^^^^^\n"
        "  = note: a 'parallel for' loop is a statement, not a value; only a reduction"
        " ('parallel for i in a..b reduce OP { ...; value }') gives one, as the whole value of a 'let' or an"
        " assignment",
    )


def test_a_bare_bulk_where_a_value_belongs() -> None:
    cls, code, text = _error("o[0] = 2 * bulk;")
    assert (cls, code) == (UnexpectedTokenError, "E0101")
    assert text.startswith("r.gasync:3:16: error: expected expression, found keyword 'bulk'\n")


def test_a_let_value_loop_without_reduce() -> None:
    assert _error("let v: i64 = parallel for i in 0..4 { o[i] = 1; };") == (
        UnexpectedTokenError,
        "E0101",
        "r.gasync:3:41: error: expected 'reduce' and an operator before the loop's body, found '{'\n"
        "   |\n"
        " 3 |     let v: i64 = parallel for i in 0..4 { o[i] = 1; };\n"
        "   |                                         ^\n"
        "  = note: a 'parallel for' that is the value of a 'let' or an assignment is a reduction:"
        " 'parallel for i in a..b reduce OP { ...; value }' (OP: 'sum', 'min', 'max', 'and' or 'or');"
        " a loop that gives no value is a statement of its own",
    )


def test_a_reduction_as_a_statement_of_its_own() -> None:
    assert _error("parallel for i in 0..4 reduce sum { i };") == (
        MisplacedReductionError,
        "E0219",
        "r.gasync:3:28: error: a reduction ('parallel for ... reduce') gives a value, and this one goes nowhere\n"
        "   |\n"
        " 3 |     parallel for i in 0..4 reduce sum { i };\n"
        "   |                            ^^^^^^\n"
        "  = note: name it ('let r = parallel for ... reduce OP { ... };') or assign it; a loop run for its"
        " effects alone has no 'reduce'",
    )


@pytest.mark.parametrize(
    "stmt",
    ["o[0] = 1; bulk for i in 0..(2 * 2) reduce max { i }", "if o[0] == 0 { bulk for i in 0..4 reduce max { i } }"],
)
def test_a_bulk_reduction_as_a_statement_after_another(stmt: str) -> None:
    cls, code, text = _error(stmt)
    assert (cls, code) == (MisplacedReductionError, "E0219")
    assert "error: a reduction ('bulk for ... reduce') gives a value, and this one goes nowhere" in text


def test_another_word_where_a_loop_body_belongs() -> None:
    cls, code, text = _error("parallel for i in 0..4 foo { o[i] = 1; }")
    assert (cls, code) == (UnexpectedTokenError, "E0101")
    assert text.startswith("r.gasync:3:28: error: expected '{', found identifier 'foo'\n")


def test_an_operator_after_a_whole_reduction() -> None:
    assert _error("let v: i64 = parallel for i in 0..4 reduce sum { i } + 1;") == (
        UnexpectedTokenError,
        "E0101",
        "r.gasync:3:58: error: expected ';', found '+'\n"
        "   |\n"
        " 3 |     let v: i64 = parallel for i in 0..4 reduce sum { i } + 1;\n"
        "   |                                                          ^\n"
        "  = note: a reduction is the whole value of a 'let' or an assignment: name it ('let r = ...;') and use"
        " the name in the expression",
    )


def test_a_keyword_as_a_name_is_still_e0104() -> None:
    cls, code, text = _error("let parallel = 1;")
    assert (cls, code) == (ReservedWordError, "E0104")
    assert "expected identifier, found keyword 'parallel'" in text


def test_a_reduction_as_a_whole_value_still_parses() -> None:
    body = (
        "    let v: i64 = parallel for i in 0..4 reduce sum { i };\n    o[0] += bulk for i in 0..4 reduce max { i };\n"
    )
    src = HEAD + body + "}\n"
    assert parse(src, "r.gasync").items
