"""A tail where no value goes (decision 67): `if` is a statement (decision 9), so a value at
the end of its block, a loop's or a task's is an error, as in Rust, not a value dropped."""

from __future__ import annotations

import pytest

from gasync.dsl import parse
from gasync.dsl.diagnostics import ErrorGroup, GasyncError, render
from gasync.planner import PlanOptions, plan

HEAD = "buffer xi: i32[8] = zeros;\nsignal stop;\n"


def rendered(src: str) -> str:
    with pytest.raises(GasyncError) as info:
        plan(parse(HEAD + src, "t.gasync"), PlanOptions())
    errors = info.value.errors if isinstance(info.value, ErrorGroup) else [info.value]
    assert len(errors) == 1
    return render(errors[0], "t.gasync", HEAD + src, code=True)


@pytest.mark.parametrize(
    ("body", "first"),
    [
        ("task main {\n    if xi[0] > 0 { 1 } else { 2 }\n}\n", "t.gasync:4:20: error[E0204]"),
        ("task main {\n    if xi[0] > 0 { xi[2] = 1; 5 }\n}\n", "t.gasync:4:31: error[E0204]"),
        ("task main {\n    if xi[0] > 0 { } else if xi[1] > 0 { xi[2] }\n}\n", "t.gasync:4:42: error[E0204]"),
    ],
)
def test_a_value_at_the_end_of_an_if_block_is_an_error(body: str, first: str) -> None:
    text = rendered(body)
    assert text.startswith(first + ": mismatched types: expected '()', found i32")
    assert "note: 'if' is a statement, not an expression, so its blocks give no value" in text
    assert "'let v = 0; if c { v = 1; } else { v = 2; }'" in text
    assert "note: to drop the value, end it with ';'" in text
    assert "return" not in text  # a task returns nothing


def test_an_if_as_a_functions_value_is_told_to_return_from_each_branch() -> None:
    text = rendered("async fn f(c: bool) -> i32 { if c { 1 } else { 2 } }\ntask main { xi[0] = f(true).await; }\n")
    assert text.startswith("t.gasync:3:37: error[E0204]: mismatched types: expected '()', found i32")
    assert "note: to return it, write 'return' in each branch: 'if c { return 1; } else { return 2; }'" in text


@pytest.mark.parametrize(
    "body",
    [
        "task main { xi[0] }",
        "task main { while xi[0] > 0 { 5 } }",
        "task main { for k in 0..3 { k } }",
        "task main { parallel for i in 0..8 { xi[i] } }",
        "task main { select { _ = stop.wait() => { 1 } } }\ntask s { stop.set(); }",
    ],
)
def test_a_value_at_the_end_of_a_block_that_gives_none_is_an_error(body: str) -> None:
    text = rendered(body + "\n")
    assert ": error[E0204]: mismatched types: expected '()', found i32" in text.splitlines()[0]
    assert "note: this block gives no value" in text


def test_let_of_an_if_says_that_if_is_a_statement() -> None:
    text = rendered("task main {\n    let v = if xi[0] > 0 { 1 } else { 2 }; xi[1] = v;\n}\n")
    assert text.startswith("t.gasync:4:13: error[E0101]: expected expression, 'bulk' or 'parallel', found keyword 'if'")
    assert "note: 'if' is a statement, not an expression: to choose a value, assign it" in text
    text = rendered("fn f() -> i32 {\n    return if true { 1 } else { 2 };\n}\ntask main { xi[0] = f(); }\n")
    assert text.startswith("t.gasync:4:12: error[E0101]: expected expression or ';', found keyword 'if'")


def test_a_tail_that_gives_nothing_is_still_a_statement() -> None:
    src = HEAD + (
        "async fn g() { xi[0] = 1; }\n"
        "async fn h() { g().await }\n"  # was "'h' returns no value"
        "task main {\n"
        "    if xi[0] > 0 { g().await } else { stop.set() }\n"
        "    while xi[1] > 0 { join(g(), h()).await }\n"
        "    h().await\n"
        "}\n"
    )
    plan(parse(src, "t.gasync"), PlanOptions())
