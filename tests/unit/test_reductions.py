"""Reducing loops: the diagnostics for what the spec rules out, each located."""

from __future__ import annotations

import pytest

import gasync
from gasync.dsl.diagnostics import ErrorGroup, GasyncError
from gasync.planner.reduces import combine, identity

HEAD = "buffer x: f32[4] = zeros;\nbuffer n: i64[4] = zeros;\nchannel c: i32[2];\n"


def _errors(body: str) -> list[str]:
    try:
        gasync.compile_source(HEAD + body + "\n", "r.gasync")
    except ErrorGroup as group:
        # HEAD's channel is unused in most bodies: its E0215, reported next to the other errors, is not
        # what these tests are about
        return [f"{e.span.line}:{e.span.column} {e.code} {e.message}" for e in group.errors if e.code != "E0215"]
    except GasyncError as e:
        return [f"{e.span.line}:{e.span.column} {e.code} {e.message}"]
    return []


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (
            "task main { let b: f32 = parallel for i in 0..4 reduce and { x[i] }; }",
            "4:56 E0219 'reduce and' needs bool or an integer type, found f32",
        ),
        (
            "task main { let r: bool = parallel for i in 0..4 reduce sum { n[i] > 0 }; }",
            "4:57 E0219 'reduce sum' needs a numeric value, found bool",
        ),
        (
            "task main { let b: f32 = parallel for i in 0..4 reduce prod { x[i] }; }",
            "4:56 E0219 unknown reduction 'prod': expected 'sum', 'min', 'max', 'and' or 'or'",
        ),
        (
            "task main { let b: f32 = bulk for i in 0..4 reduce sum { x[i]; }; }",
            "4:56 E0219 a reducing loop's body must end in the iteration's value",
        ),
        (
            "task main { let b: i32 = parallel for i in 0..4 reduce sum { c.recv().await }; }\n"
            "task p { c.send(1).await; }",
            "4:62 E0206 '.await' is not allowed inside 'parallel for'",
        ),
        (
            "task main { let t: i64 = 0; let b: i64 = parallel for i in 0..4 reduce sum { t = 1; n[i] }; }",
            "4:78 E0209 cannot assign to 't' inside 'parallel for': task locals are read-only",
        ),
        (
            "task main { let b: f32 = parallel for i in 0..4 reducee max { x[i] }; }",
            "4:49 E0101 expected '{' or 'reduce', found 'reducee'",
        ),
        (
            "task main { let r: f64 = parallel for i in 0..4 reduce sum { i }; }",
            "4:62 E0204 mismatched types: expected f64, found i32",
        ),
        (
            "fn f() -> i64 { let r: i64 = parallel for i in 0..4 reduce sum { n[i] }; return r; }\n"
            "task main { n[0] = f(); }",
            "4:30 E0206 'parallel for' is not allowed in a plain fn",
        ),
        (
            "task main { let r: i64 = parallel for i in 0..4 reduce sum"
            " { let q: i64 = parallel for j in 0..4 reduce sum { n[j] }; q }; }",
            "4:75 E0208 'parallel for' cannot be nested inside another parallel loop",
        ),
    ],
)
def test_what_the_spec_rules_out_is_a_located_error(body: str, error: str) -> None:
    assert _errors(body) == [error]


def test_a_reduction_is_a_value_for_any_assignment() -> None:
    ok = (
        "task main {\n    n[0] += bulk for i in 0..4 reduce sum { n[i] };\n"
        "    let m: f32 = parallel for i in 0..4 reduce min { x[i] };\n    x[1] = m;\n    c.send(1).await;\n}\n"
        "task p { let v = c.recv().await; n[3] = v as i64; }"
    )
    assert _errors(ok) == []


@pytest.mark.parametrize(
    ("op", "ty", "value"),
    [("sum", "i32", 0), ("min", "i32", 2**31 - 1), ("max", "u64", 0), ("min", "u64", 2**64 - 1),
     ("and", "i64", -1), ("and", "u32", 2**32 - 1), ("or", "bool", False), ("and", "bool", True),
     ("min", "f64", float("inf")), ("max", "f32", float("-inf"))],
)  # fmt: skip
def test_identities(op: str, ty: str, value: object) -> None:
    assert identity(op, ty) == value


def test_integer_sums_wrap_and_nans_are_no_candidates() -> None:
    assert combine("sum", "i32", 2**31 - 1, 1) == -(2**31)
    assert combine("sum", "u32", 2**32 - 1, 2) == 1
    assert combine("max", "f64", float("nan"), 1.5) == 1.5
    assert combine("min", "f32", -2.0, float("nan")) == -2.0


def test_a_tail_of_builtins_over_literals_takes_the_reductions_type() -> None:
    # as `let a: u64 = min(944, 7);` does: the tail was typed without the context (i32), E0204
    ok = (
        "task main {\n    let a: u64 = parallel for i in 0..4 reduce and { ~min(944, 7) };\n"
        "    n[0] = bulk for i in 0..4 reduce sum { abs(-3) + max(1, 2) };\n    x[0] = a as f32;\n}\n"
        "task p { c.send(1).await; }\ntask q { let v = c.recv().await; n[1] = v as i64; }"
    )
    assert _errors(ok) == []


def test_an_if_as_the_iterations_value_is_told_that_if_is_a_statement() -> None:
    # a Rust programmer's `{ if c { 1 } else { 0 } }`: the note said to end the body with an
    # expression and no ';', which it seemed to do
    body = "task main { let b: i64 = parallel for i in 0..4 reduce sum { if n[i] > 0 { 1 } else { 0 } }; n[0] = b; }"
    with pytest.raises(GasyncError) as info:
        gasync.compile_source(HEAD + body + "\ntask p { c.send(1).await; }\ntask q { let v = c.recv().await; }\n")
    (note,) = info.value.notes
    assert note.message.startswith("'if' is a statement, not a value: give the value a 'let'")
