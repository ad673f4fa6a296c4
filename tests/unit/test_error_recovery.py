"""Error recovery: every top-level statement of a body is checked, so one check reports several errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clirun import gasync

from gasync.dsl import parse
from gasync.dsl.diagnostics import ErrorGroup, render
from gasync.planner import errors as E
from gasync.planner import plan
from gasync.planner.recovery import MAX_BODY_ERRORS

TWO = "buffer out: f32[2] = zeros;\ntask main {\n    let x: i32 = 1.5;\n    out[0] = x;\n}\n"


def errors_of(src: str) -> list[str]:
    with pytest.raises(ErrorGroup) as info:
        plan(parse(src, "t.gasync"))
    return [render(e, "t.gasync", src).splitlines()[0] for e in info.value.errors]


def test_two_errors_in_one_body() -> None:
    # the failed let still binds 'x' with its declared type, so the second error is about x's type
    assert errors_of(TWO) == [
        "t.gasync:3:18: error: mismatched types: expected i32, found floating-point literal",
        "t.gasync:4:14: error: mismatched types: expected f32, found i32",
    ]


def test_the_cli_reports_both(tmp_path: Path) -> None:
    (tmp_path / "two.gasync").write_text(TWO)
    res = gasync("check", "two.gasync", "--json", cwd=tmp_path)
    assert res.returncode == 1
    assert [(d["code"], d["line"], d["column"]) for d in json.loads(res.stdout)] == [("E0204", 3, 18), ("E0204", 4, 14)]
    assert res.stderr.endswith("two.gasync: 2 errors\n")


def test_a_name_whose_let_failed_gives_no_second_error() -> None:
    src = "buffer out: i32[2] = zeros;\ntask main {\n    let y = nope + 1;\n    out[0] = y;\n    out[1] = true;\n}\n"
    assert errors_of(src) == [
        "t.gasync:3:13: error: cannot find value 'nope' in this scope",
        "t.gasync:5:14: error: mismatched types: expected i32, found bool",
    ]


def test_errors_in_fns_and_tasks_and_nested_blocks() -> None:
    src = (
        "fn f(a: i32) -> i32 {\n    let b: bool = a;\n    return a + 1.0;\n}\n"
        "task main {\n    if true { break; }\n    let c = f(1, 2);\n}\n"
    )
    assert errors_of(src) == [
        "t.gasync:2:19: error: mismatched types: expected bool, found i32",
        "t.gasync:3:16: error: mismatched types: expected i32, found floating-point literal",
        "t.gasync:6:15: error: 'break' outside of a loop",
        "t.gasync:7:13: error: 'f' takes 1 argument but 2 were given",
    ]


def test_a_body_with_errors_is_not_also_missing_its_return() -> None:
    src = "fn f() -> i32 {\n    let a: i32 = true;\n}\ntask main { let v = f(); }\n"
    assert errors_of(src) == ["t.gasync:2:18: error: mismatched types: expected i32, found bool"]


def test_the_errors_of_one_body_are_capped() -> None:
    lines = "".join(f"    let v{k}: i32 = true;\n" for k in range(MAX_BODY_ERRORS + 5))
    with pytest.raises(ErrorGroup) as info:
        plan(parse(f"task main {{\n{lines}}}\n", "t.gasync"))
    assert len(info.value.errors) == MAX_BODY_ERRORS
    assert all(isinstance(e, E.TypeMismatchError) for e in info.value.errors)
    assert info.value.errors[-1].span.line == MAX_BODY_ERRORS + 1


def test_after_an_error_in_a_loop_the_next_statement_is_outside_it() -> None:
    # the failed 'for' leaves no scope or loop behind: 'i' is unknown and 'break' is outside a loop again
    src = "task main {\n    for i in 0..4 { let z: bool = 1; }\n    let w = i;\n    break;\n}\n"
    assert errors_of(src) == [
        "t.gasync:2:35: error: mismatched types: expected bool, found integer literal",
        "t.gasync:3:13: error: cannot find value 'i' in this scope",
        "t.gasync:4:5: error: 'break' outside of a loop",
    ]


def test_a_group_whose_range_failed_still_binds_its_variable() -> None:
    # the bad const was the only mistake; its group's tasks use 'g' (no "cannot find value 'g'")
    # and are still checked for their own errors
    src = (
        "const N: i64 = 2.5;\nbuffer out: i64[4] = zeros;\n"
        "group gg for g in 0..N {\n    task t { out[g] = 1; let z: i32 = true; }\n}\n"
    )
    assert errors_of(src) == [
        "t.gasync:1:16: error: mismatched types: expected i64, found floating-point literal",
        "t.gasync:4:39: error: mismatched types: expected i32, found bool",
    ]
