"""Expressions from the grammar's flat operator lists (dsl/expressions.py), and the
parser's own loop over Lark's tables (dsl/lalr.py).

ASTs compare without their spans, so the spans are checked here as text: each
node as ``Kind@line:col-end_line:end_col(children)``, as the grammar of one
rule per precedence level gave them (a node spans its operands, parentheses
included, and a parenthesised operand keeps its own span inside).
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import pytest

from gasync.dsl import ast
from gasync.dsl.lalr import REJECTED, run, tables_of
from gasync.dsl.lexer import Spec, lex
from gasync.dsl.parser import _lark, parse
from gasync.dsl.reductions import held

sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))
import compile_programs as cp  # noqa: E402

SAMPLES = sorted((Path(__file__).parents[2] / "samples").glob("*.gasync"))

SPANS = [
    (
        "(a) + -b as i64 * c.await",
        "Binary@1:18-1:43(Name@1:19-1:20, "
        "Binary@1:24-1:43(Cast@1:24-1:33(Unary@1:24-1:26(Name@1:25-1:26), ScalarType@1:30-1:33), "
        "Await@1:36-1:43(Name@1:36-1:37)))",
    ),
    (
        "-(x).f(1) as f32 as f64",
        "Cast@1:18-1:41(Cast@1:18-1:34(Unary@1:18-1:27(MethodCall@1:19-1:27(Name@1:20-1:21, "
        "IntLit@1:25-1:26)), ScalarType@1:31-1:34), ScalarType@1:38-1:41)",
    ),
    (
        "a | b ^ c & d << 1 + 2 * 3 < 4 && !e || f",
        "Binary@1:18-1:59(Binary@1:18-1:54(Binary@1:18-1:48(Binary@1:18-1:44(Name@1:18-1:19, "
        "Binary@1:22-1:44(Name@1:22-1:23, Binary@1:26-1:44(Name@1:26-1:27, "
        "Binary@1:30-1:44(Name@1:30-1:31, Binary@1:35-1:44(IntLit@1:35-1:36, "
        "Binary@1:39-1:44(IntLit@1:39-1:40, IntLit@1:43-1:44)))))), IntLit@1:47-1:48), "
        "Unary@1:52-1:54(Name@1:53-1:54)), Name@1:58-1:59)",
    ),
    (
        "((a))",
        "Name@1:20-1:21",
    ),
]


def spans(x: Any) -> str:
    """A node and its sub-nodes with their spans, as text."""
    if dataclasses.is_dataclass(x) and hasattr(x, "span"):
        s = x.span
        inner = [t for f in dataclasses.fields(x) if f.name != "span" and (t := spans(getattr(x, f.name)))]
        kids = "(" + ", ".join(inner) + ")" if inner else ""
        return f"{type(x).__name__}@{s.line}:{s.column}-{s.end_line}:{s.end_column}{kids}"
    if isinstance(x, tuple):
        return ", ".join(t for t in map(spans, x) if t)
    return ""


def value_of(expr: str) -> Any:
    task = parse(f"task t {{ let v = {expr}; }}").items[0]
    assert isinstance(task, ast.Task)
    let = task.body.stmts[0]
    assert isinstance(let, ast.Let)
    return let.value


@pytest.mark.parametrize(("expr", "expected"), SPANS)
def test_nodes_and_spans(expr: str, expected: str) -> None:
    assert spans(value_of(expr)) == expected


def test_a_long_chain_is_left_associative_and_needs_no_recursion() -> None:
    value = value_of(" + ".join(["x"] * 4000))
    depth = 0
    while isinstance(value, ast.Binary):
        assert isinstance(value.right, ast.Name)
        value, depth = value.left, depth + 1
    assert depth == 3999


def test_prefix_operators_apply_innermost_first() -> None:
    value = value_of("- ~!x")
    assert value == ast.Unary("-", ast.Unary("~", ast.Unary("!", ast.Name("x"))))


def test_the_fast_loop_is_in_use_and_builds_what_lark_builds() -> None:
    lark = _lark()
    tables = tables_of(lark)
    assert tables is not None, "this Lark keeps its tables elsewhere: parsing fell back to Lark's slower loop"
    spec = Spec(lark.terminals, lark.ignore_tokens)
    texts = [p.read_text(encoding="utf-8") for p in SAMPLES] + [cp.large_file(30_000), cp.nested_async(8)]
    for text in texts:
        held.errors = []
        ours = run(tables, lex(spec, text))
        theirs = lark.parse(text)
        held.errors = None
        assert spans(tuple(ours)) == spans(tuple(theirs))
        assert ours == theirs


def test_the_fast_loop_rejects_what_lark_rejects() -> None:
    lark = _lark()
    tables = tables_of(lark)
    assert tables is not None
    spec = Spec(lark.terminals, lark.ignore_tokens)
    for text in ["task t { let v = a < b < c; }", "task t {", "task { }", "fn f() { 1 + }"]:
        held.errors = []
        assert run(tables, lex(spec, text)) is REJECTED
        held.errors = None
