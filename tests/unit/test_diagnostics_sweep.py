"""Defects a sweep of the diagnostics found: each program and the exact diagnostics it gives
(code, line:column, message), every independent error reported, once, where it belongs."""

from __future__ import annotations

from pathlib import Path

import pytest
from clirun import gasync

from gasync.dsl import parse
from gasync.dsl.diagnostics import ErrorGroup, GasyncError
from gasync.planner import PlanOptions, plan


def diags(src: str, *defines: tuple[str, str]) -> list[str]:
    with pytest.raises(ErrorGroup) as info:
        plan(parse(src, "t.gasync"), PlanOptions(tuple(defines)))
    return [_line(e) for e in info.value.errors]


def _line(e: GasyncError) -> str:
    return f"{e.code} {e.span.line}:{e.span.column}-{e.span.end_line}:{e.span.end_column} {e.message}"


def notes(src: str, *defines: tuple[str, str]) -> list[list[str]]:
    with pytest.raises(ErrorGroup) as info:
        plan(parse(src, "t.gasync"), PlanOptions(tuple(defines)))
    return [[n.message for n in e.notes] for e in info.value.errors]


# ---- 1: a misused future or recursion no longer hides the file's other errors ----


def test_an_unawaited_future_hides_no_other_error() -> None:
    src = (
        "buffer out: i32[1] = zeros;\nconst C: i32 = nope;\nasync fn ahelper() -> i32 { return 1; }\n"
        "task a { out[0] = true; }\ntask main {\n    let f = ahelper();\n}\n"
    )
    assert diags(src) == [
        "E0202 2:16-2:20 cannot find value 'nope' in this scope",
        "E0204 4:19-4:23 mismatched types: expected i32, found bool",
        "E0207 6:5-6:23 future 'f' is never awaited",
    ]


def test_a_misused_future_gives_no_follow_up_in_its_own_body() -> None:
    # `f + 1` names a future the rewriting took away: no "cannot find value 'f'" after it
    src = (
        "buffer out: i32[1] = zeros;\nasync fn h() -> i32 { return 1; }\n"
        "task main {\n    let f = h();\n    out[0] = f + 1;\n}\ntask b { out[0] = 1.5; }\n"
    )
    assert diags(src) == [
        "E0207 5:14-5:15 future 'f' used as a value",
        "E0204 7:19-7:22 mismatched types: expected i32, found floating-point literal",
    ]


def test_recursion_hides_no_other_error() -> None:
    src = (
        "buffer out: i32[1] = zeros;\ntask a { out[0] = 1.5; }\n"
        "async fn f() -> i32 { return f().await; }\ntask b { out[0] = true; }\n"
    )
    assert diags(src) == [
        "E0204 2:19-2:22 mismatched types: expected i32, found floating-point literal",
        "E0213 3:30-3:33 recursion among async fns: f -> f",
        "E0204 4:19-4:23 mismatched types: expected i32, found bool",
    ]


def test_a_recursive_fns_own_errors_are_reported() -> None:
    src = "fn f(n: i32) -> i32 { let b: bool = n; return f(n); }\ntask main { let x = f(1); }\n"
    assert diags(src) == [
        "E0204 1:37-1:38 mismatched types: expected bool, found i32",
        "E0213 1:47-1:51 recursion among functions: f -> f",
    ]


# ---- 2: an unknown type in a signature is one error ----


def test_an_unknown_type_in_a_signature_is_reported_once() -> None:
    src = (
        "buffer out: i32[1] = zeros;\nfn f(x: badtype) -> i32 { return 1; }\n"
        "async fn g(x: badtype) -> badtype { return 1; }\nasync fn h(x: badtype) -> i32 { return 1; }\n"
        "task main {\n    out[0] = f(1);\n    out[0] = f(2);\n    let a = g(1).await;\n"
        "    let k = h(1);\n    let b = k.await;\n}\n"
    )
    assert diags(src) == [
        "E0202 2:9-2:16 unknown type 'badtype'",
        "E0202 3:15-3:22 unknown type 'badtype'",
        "E0202 3:27-3:34 unknown type 'badtype'",
        "E0202 4:15-4:22 unknown type 'badtype'",
    ]


# ---- 3: the cap on a body's errors says what it left out ----


def test_the_cap_says_how_many_errors_it_did_not_show() -> None:
    lines = "".join(f"    let v{k}: i32 = true;\n" for k in range(14))
    with pytest.raises(ErrorGroup) as info:
        plan(parse(f"task main {{\n{lines}}}\n", "t.gasync"))
    errors = info.value.errors
    assert [e.span.line for e in errors] == list(range(2, 12))
    assert [n.message for n in errors[-1].notes] == ["4 more errors in 'main' not shown: at most 10 are shown per body"]
    assert errors[-1].not_shown == 4  # type: ignore[attr-defined]
    assert [e.notes for e in errors[:-1]] == [()] * 9


def test_the_command_lines_summary_counts_the_errors_not_shown(tmp_path: Path) -> None:
    lines = "".join(f"    let v{k}: i32 = true;\n" for k in range(14))
    (tmp_path / "t.gasync").write_text(f"task main {{\n{lines}}}\n")
    res = gasync("check", "t.gasync", cwd=tmp_path)
    assert res.returncode == 1
    assert res.stderr.count("error[E0204]") == 10
    assert res.stderr.splitlines()[-1] == "t.gasync: 14 errors (10 shown)"


# ---- 4: racing tasks of groups are ordered through their groups ----


def test_a_race_between_groups_suggests_ordering_the_groups() -> None:
    src = (
        "buffer y: i32[4] = zeros;\ngroup g for i in 0..2 {\n    task a { y[0] = 1; }\n}\n"
        "group h for i in 0..2 {\n    task b { y[0] = 2; }\n}\n"
    )
    (w,) = plan(parse(src, "t.gasync")).warnings
    assert _line(w) == "W0217 6:14-6:23 tasks 'a' and 'b' may run at once and both write buffer 'y'"
    assert w.notes[-1].message == (
        "order them with 'group h ... after g' ('a' is in group 'g' and 'b' is in group 'h'; a group's task"
        " has no 'after' of its own), or write with atomic_add and friends"
    )
    fixed = src.replace("group h for i in 0..2 {", "group h for i in 0..2 after g {")
    assert plan(parse(fixed, "t.gasync")).warnings == ()


def test_a_plain_task_racing_a_groups_task_is_ordered_by_its_own_after() -> None:
    src = "buffer y: i32[4] = zeros;\ngroup k {\n    task e { y[2] = 1; }\n}\ntask f { y[2] = 3; }\n"
    (w,) = plan(parse(src, "t.gasync")).warnings
    assert w.notes[-1].message == "order them with 'after e', or write with atomic_add and friends"


# ---- 5: codes ----


def test_writes_to_a_const_or_a_shared_scalar_are_read_only_errors() -> None:
    src = "const K: i32 = 1;\nshared m: i32 = 0;\ntask main {\n    K = 2;\n    m = 1;\n}\n"
    assert diags(src) == [
        "E0209 4:5-4:6 cannot assign to the const 'K': a const is read-only",
        "E0209 5:5-5:10 cannot assign to the shared scalar 'm' with '='",
    ]
    assert notes(src)[1] == ["write it with m.store(v) or an atomic method such as fetch_add"]


def test_a_size_from_a_define_says_so() -> None:
    src = "const N: i32 = 4;\nconst M: i32 = N * 2;\nbuffer x: f32[M] = zeros;\n"
    src += "buffer z: f32[0] = zeros;\ntask main { }\n"
    assert diags(src, ("N", "-1")) == [
        "E0210 3:15-3:16 a buffer dimension must be positive, found -2",
        "E0210 4:15-4:16 a buffer dimension must be positive, found 0",
    ]
    assert notes(src, ("N", "-1")) == [["'N' is -1, given by the define '-D N=-1'"], []]


# ---- 6: follow-ons that do not depend on the failed part ----


def test_a_failed_const_is_still_typed_and_an_unused_channel_still_reported() -> None:
    src = "const A: i32 = 1 + true;\nconst B: i64 = A * 2;\nchannel c: i32[4];\nchannel d: i32[4];\n"
    src += "task main { d.send(1).await; let z: bool = 3; }\n"
    assert diags(src) == [
        "E0204 1:16-1:24 mismatched types: i32 + bool",
        "E0204 2:16-2:21 mismatched types: expected i64, found i32",
        "E0215 3:1-3:19 channel 'c' has no sender and no receiver: no task sends on or receives from it",
        "E0204 5:44-5:45 mismatched types: expected bool, found integer literal",
    ]  # (no E0215 for 'd': the task that names it failed, and might have received too)


def test_a_group_too_big_is_reported_next_to_another_error() -> None:
    tasks = "".join(f"    task t{k} {{ }}\n" for k in range(33))
    src = f"buffer out: i32[1] = zeros;\ngroup g {{\n{tasks}}}\ntask main {{ out[0] = true; }}\n"
    assert diags(src) == [
        "E0221 2:1-36:2 group 'g' needs 33 warps per instance, more than the 32 of one CUDA block",
        "E0204 37:22-37:26 mismatched types: expected i32, found bool",
    ]


# ---- 7: wording ----


def test_counts_and_articles_read_as_english() -> None:
    src = (
        "buffer out: i32[4] = zeros;\nfn f(x: i32) -> i32 { return x; }\nasync fn h() -> i32 { return 1; }\n"
        "task main {\n    out[0] = f(1, 2);\n    out[1] = min(1);\n    let (a, b) = join(h()).await;\n}\n"
    )
    assert diags(src) == [
        "E0205 5:14-5:21 'f' takes 1 argument but 2 were given",
        "E0205 6:14-6:20 'min' takes 2 arguments but 1 was given",
        "E0204 7:5-7:34 join gives 1 value but the pattern has 2",
    ]
    from gasync.planner.errors import a_or_an

    assert [a_or_an(w) for w in ("i32", "i64", "f32", "u32", "bool", "async fn", "extern", "buffer")] == [
        "an i32",
        "an i64",
        "an f32",
        "a u32",
        "a bool",
        "an async fn",
        "an extern",
        "a buffer",
    ]


def test_messages_name_the_parallel_loop_that_it_is() -> None:
    src = (
        "async fn h() -> i32 { return 1; }\ntask main {\n    let z: i32 = 0;\n"
        "    parallel for i in 0..4 { let q = h().await; }\n    bulk for i in 0..4 { z = 1; }\n"
        "    bulk for i in 0..4 { break; }\n}\n"
    )
    assert diags(src) == [
        "E0206 4:38-4:47 '.await' is not allowed inside 'parallel for'",
        "E0209 5:26-5:31 cannot assign to 'z' inside 'bulk for': task locals are read-only",
        "E0208 6:26-6:31 'break' cannot leave a 'bulk for': its iterations run at once",
    ]


def test_a_local_item_is_named_as_written_with_its_group() -> None:
    src = "group p {\n    local buffer s: i32[2];\n    task t { s[5] = 1; let s: i32 = 2; }\n}\n"
    assert diags(src) == [
        "E0218 3:16-3:17 index out of bounds: the length of 's' (in group 'p') is 2 but the index is 5",
        "E0203 3:24-3:39 let bindings cannot shadow the buffer 's' (in group 'p')",
    ]


# ---- 8: spans ----


def test_spans_point_at_what_is_wrong() -> None:
    src = (
        "buffer out: i32[2] = zeros;\nchannel c: i32[2];\nfn g() -> i64 { if true { return 1; } }\n"
        "const out: i32 = 3;\nfn min(a: i32) -> i32 { return a; }\n"
        "task main {\n    c.foo();\n    break;\n    for i in 0..2 { i = 1; }\n    c.send(1).await;\n}\n"
        "task r { let v = c.recv().await; }\n"
    )
    assert diags(src) == [
        "E0208 3:11-3:14 'g' must return an i64 on every path",
        "E0203 4:7-4:10 the name 'out' is defined more than once",
        "E0203 5:4-5:7 'min' is a builtin and cannot be redefined",
        "E0202 7:7-7:10 no method 'foo' on channel 'c'",
        "E0208 8:5-8:10 'break' outside of a loop",
        "E0209 9:21-9:26 cannot assign to 'i': a loop variable is read-only",
    ]
    assert notes(src)[1] == ["'out' was first defined here as a buffer"]
    assert notes(src)[3] == ["its methods are send(v), recv() and close()"]
