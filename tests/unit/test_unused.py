"""W0218, unused items (planner/unused.py): each kind, the exemptions, and where it shows.

Each case gives the exact warnings: code, line:column of the name, message and notes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clirun import gasync

from gasync.dsl import parse
from gasync.dsl.diagnostics import ErrorGroup
from gasync.planner import PlanOptions, plan

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "samples").glob("*.gasync"))
PREFIX = "if this is intentional, prefix it with an underscore: "
Warning_ = tuple[str, str, str, tuple[str, ...]]


def warnings_of(src: str, *defines: tuple[str, str], strict: bool = False) -> list[Warning_]:
    p = plan(parse(src, "t.gasync"), PlanOptions(tuple(defines), strict))
    return [(w.code, f"{w.line}:{w.column}", w.message, tuple(n.message for n in w.notes)) for w in p.warnings]


# ---- consts ----


def test_a_const_nothing_reads() -> None:
    src = "const K: i32 = 3;\nconst N: i64 = 4;\nbuffer out: i32[N] = zeros;\ntask main { out[0] = 1; }\n"
    assert warnings_of(src) == [("W0218", "1:7", "const 'K' is never used", ())]


def test_a_const_that_a_define_sets_is_still_unused_and_a_note_says_so() -> None:
    src = "const K: i32 = 3;\nbuffer out: i32[1] = zeros;\ntask main { out[0] = 1; }\n"
    note = "the define '-D K=7' sets it, but nothing reads it"
    assert warnings_of(src, ("K", "7")) == [("W0218", "1:7", "const 'K' is never used", (note,))]


def test_consts_read_by_used_consts_sizes_ranges_and_initial_values_are_used() -> None:
    src = (
        "const A: i64 = 2;\nconst B: i64 = A * 2;\nconst S: u64 = 9;\nconst F: f32 = 0.5;\nconst C: i32 = 1;\n"
        "const G: i32 = 2;\nconst T: i32 = 3;\n"
        "buffer x: f32[B] = random(S);\nbuffer y: f32[2] = fill(F);\nshared h: i32 = C;\nchannel ch: i32[A];\n"
        "group g for k in 0..G { task w { x[0] = y[0]; } }\n"
        "task p for i in 0..T { ch.send(h.load()).await; }\ntask q { let v = ch.recv().await; y[1] = v as f32; }\n"
    )
    assert warnings_of(src) == []


def test_a_const_only_an_unused_item_reads_is_unused_and_a_note_names_that_item() -> None:
    src = "const M: i64 = 2;\nbuffer tmp: f32[M] = input;\nbuffer out: i32[1] = zeros;\ntask main { out[0] = 1; }\n"
    assert warnings_of(src) == [
        (
            "W0218",
            "1:7",
            "const 'M' is never used",
            ("it is used only from unused code, whose root is buffer 'tmp' (never read or written)",),
        ),
        ("W0218", "2:8", "buffer 'tmp' is never read or written", ()),
    ]


def test_a_parameter_or_loop_variable_of_a_consts_name_does_not_read_it() -> None:
    src = (
        "const N: i32 = 1;\nconst M: i32 = 2;\nbuffer out: i32[1] = zeros;\n"
        "fn f(N: i32) -> i32 { return N; }\ntask main { for M in 0..2 { out[0] = f(M); } }\n"
    )
    assert warnings_of(src) == [
        ("W0218", "1:7", "const 'N' is never used", ()),
        ("W0218", "2:7", "const 'M' is never used", ()),
    ]


# ---- buffers, shared scalars, signals ----


def test_a_buffer_no_task_touches_even_one_given_as_input() -> None:
    src = (
        "buffer tmp: f32[4] = zeros;\nbuffer given: f32[4] = input;\nbuffer x: f32[4] = input;\n"
        "buffer out: f32[4] = zeros;\nbuffer hist: i32[2] = zeros;\n"
        "task main { out[0] = x[1]; atomic_add(hist[0], 1); }\n"
    )
    assert warnings_of(src) == [
        ("W0218", "1:8", "buffer 'tmp' is never read or written", ()),
        ("W0218", "2:8", "buffer 'given' is never read or written", ()),
    ]


def test_a_buffer_only_written_is_an_output_and_used() -> None:
    assert warnings_of("buffer out: i32[1] = zeros;\ntask main { out[0] = 1; }\n") == []


def test_a_shared_scalar_never_used_and_one_only_stored() -> None:
    src = "shared hits: i32 = 0;\nshared total: i64 = 0;\ntask main { total.store(5); }\n"
    assert warnings_of(src) == [("W0218", "1:8", "shared scalar 'hits' is never used", ())]


def test_signals_waited_on_tested_or_only_set_are_used() -> None:
    # 'host' only waits: `--signal host=5ms` sets it; 'done' is only set: an output (Result.signals)
    src = (
        "signal idle;\nsignal host;\nsignal done;\nsignal poll;\nbuffer out: i32[1] = zeros;\n"
        "task main { host.wait().await; done.set(); if poll.is_set() { out[0] = 1; } }\n"
    )
    assert warnings_of(src) == [("W0218", "1:8", "signal 'idle' is never waited on or set", ())]


# ---- fns ----


def test_fns_never_called_and_a_callee_of_one_names_the_root() -> None:
    src = (
        "buffer out: i32[1] = zeros;\n"
        "fn inner(a: i32) -> i32 { return a + 1; }\n"
        "fn helper(a: i32) -> i32 { return inner(a) * 2; }\n"
        "async fn fetch() -> i32 { return 1; }\n"
        "fn used(a: i32) -> i32 { return a; }\n"
        "async fn also_used() -> i32 { return used(2); }\n"
        "task main { out[0] = also_used().await; }\n"
    )
    root = "it is used only from unused code, whose root is fn 'helper' (never called)"
    assert warnings_of(src) == [
        ("W0218", "2:4", "fn 'inner' is never called", (root,)),
        ("W0218", "3:4", "fn 'helper' is never called", ()),
        ("W0218", "4:10", "async fn 'fetch' is never called", ()),
    ]


def test_an_item_reached_from_several_unused_roots_names_them_all() -> None:
    src = (
        "const K: i32 = 2;\nbuffer out: i32[1] = zeros;\n"
        "fn a() -> i32 { return K; }\nfn b() -> i32 { return K + 1; }\ntask main { out[0] = 1; }\n"
    )
    roots = "it is used only from unused code, whose roots are fn 'a' (never called) and fn 'b' (never called)"
    assert warnings_of(src) == [
        ("W0218", "1:7", "const 'K' is never used", (roots,)),
        ("W0218", "3:4", "fn 'a' is never called", ()),
        ("W0218", "4:4", "fn 'b' is never called", ()),
    ]


def test_an_extern_fn_never_called_is_no_warning() -> None:
    src = 'extern fn g(v: f32) -> f32 from "m:g";\nbuffer out: i32[1] = zeros;\ntask main { out[0] = 1; }\n'
    assert warnings_of(src) == []


# ---- locals ----


def test_a_let_never_read() -> None:
    src = "buffer out: i32[1] = zeros;\ntask main {\n    let x = 5;\n    out[0] = 1;\n}\n"
    assert warnings_of(src) == [("W0218", "3:9", "unused variable 'x'", (PREFIX + "'_x'",))]


def test_a_let_only_assigned_to_is_unused() -> None:
    src = "buffer out: i32[1] = zeros;\ntask main {\n    let n = 0;\n    n += 1;\n    n = 4;\n    out[0] = 1;\n}\n"
    assert warnings_of(src) == [
        ("W0218", "3:9", "unused variable 'n'", ("'n' is assigned to, but never read", PREFIX + "'_n'"))
    ]


def test_a_tuple_let_a_shadowed_let_and_a_read_in_an_async_block_or_a_kept_future() -> None:
    src = (
        "buffer out: i32[4] = zeros;\nasync fn g() -> i32 { return 1; }\n"
        "task main {\n"
        "    let (a, b) = join(g(), g()).await;\n"
        "    let x = 1;\n"
        "    let x = 2;\n"
        "    let f = g();\n"
        "    let n = b + x;\n"
        "    let blk = async { out[0] = n; 0 };\n"
        "    out[1] = f.await + blk.await;\n"
        "}\n"
    )
    assert warnings_of(src) == [
        ("W0218", "4:10", "unused variable 'a'", (PREFIX + "'_a'",)),
        ("W0218", "5:9", "unused variable 'x'", (PREFIX + "'_x'",)),
    ]


def test_parameters_loop_and_select_variables_are_not_warned_of() -> None:
    src = (
        "buffer out: i32[1] = zeros;\nchannel c: i32[1];\nsignal s;\n"
        "fn f(unused: i32) -> i32 { return 1; }\n"
        "task p { c.send(1).await; s.set(); }\n"
        "task main for k in 0..2 {\n"
        "    for i in 0..4 { out[0] = f(1); }\n"
        "    select { v = c.recv() => { out[0] = 2; } _ = s.wait() => { } }\n"
        "}\n"
    )
    assert warnings_of(src) == []


def test_a_reduction_let_read_later_and_one_not() -> None:
    src = (
        "buffer x: f32[4] = iota;\nbuffer out: f32[1] = zeros;\n"
        "task main {\n"
        "    let s = parallel for i in 0..4 reduce sum { x[i] };\n"
        "    let m = parallel for i in 0..4 reduce max { x[i] };\n"
        "    out[0] = s;\n"
        "}\n"
    )
    assert warnings_of(src) == [("W0218", "5:9", "unused variable 'm'", (PREFIX + "'_m'",))]


# ---- groups ----


def test_a_local_buffer_its_group_never_uses() -> None:
    src = (
        "buffer out: f32[2] = zeros;\n"
        "group pipe for g in 0..2 {\n"
        "    local buffer stage: f32[4];\n"
        "    local buffer spare: f32[4];\n"
        "    task a { stage[0] = 1.0; out[g] = stage[0]; }\n"
        "}\n"
    )
    assert warnings_of(src) == [
        ("W0218", "4:18", "local buffer 'spare' (in group 'pipe') is never read or written", ())
    ]


def test_a_local_variable_shadowing_a_local_buffer_does_not_use_it() -> None:
    src = (
        "buffer out: i32[2] = zeros;\n"
        "group pipe for g in 0..2 {\n"
        "    local buffer s: f32[4];\n"
        "    task a { for s in 0..2 { out[g] = s; } }\n"
        "}\n"
    )
    assert warnings_of(src) == [("W0218", "3:18", "local buffer 's' (in group 'pipe') is never read or written", ())]


# ---- exemptions, errors, --strict ----


def test_names_starting_with_an_underscore_are_never_warned_of_and_keep_what_they_use() -> None:
    src = (
        "const _K: i32 = 1;\nbuffer _scratch: f32[4] = zeros;\nshared _s: i32 = 0;\nsignal _quiet;\n"
        "fn inner() -> i32 { return 1; }\nfn _keep() -> i32 { return inner(); }\n"
        "buffer out: i32[1] = zeros;\ntask main {\n    let _x = 5;\n    out[0] = 1;\n}\n"
    )
    assert warnings_of(src) == []


def test_a_program_with_an_error_gets_no_unused_warning() -> None:
    src = "const K: i32 = 3;\nbuffer out: i32[1] = zeros;\ntask main {\n    let x = 5;\n    out[0] = true;\n}\n"
    with pytest.raises(ErrorGroup) as info:
        plan(parse(src, "t.gasync"))
    assert [e.code for e in info.value.errors] == ["E0204"]


def test_strict_leaves_unused_items_warnings_beside_a_race_which_comes_first() -> None:
    src = "const K: i32 = 3;\nbuffer out: i32[1] = zeros;\ntask a { out[0] = 1; }\ntask b { out[0] = 2; }\n"
    race = ("W0217", "4:10", "tasks 'a' and 'b' may run at once and both write buffer 'out'")
    assert [w[:3] for w in warnings_of(src)] == [race, ("W0218", "1:7", "const 'K' is never used")]
    with pytest.raises(ErrorGroup) as info:
        plan(parse(src, "t.gasync"), PlanOptions(strict=True))
    assert [e.code for e in info.value.errors] == ["E0217"]
    assert warnings_of(src.replace("task b { out[0] = 2; }", "task b after a { out[0] = 2; }"), strict=True) == [
        ("W0218", "1:7", "const 'K' is never used", ())
    ]


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_no_sample_has_an_unused_item(path: Path) -> None:
    assert [w for w in plan(parse(path.read_text(), str(path))).warnings if w.code == "W0218"] == []


# ---- the command line ----


def test_check_prints_it_counts_it_and_strict_keeps_it_a_warning(tmp_path: Path) -> None:
    (tmp_path / "u.gasync").write_text("buffer out: i32[1] = zeros;\ntask main {\n    let x = 5;\n    out[0] = 1;\n}\n")
    res = gasync("check", "u.gasync", "--strict", "--color", "never", cwd=tmp_path)
    assert (res.returncode, res.stdout) == (0, "")
    assert res.stderr == (
        "u.gasync:3:9: warning[W0218]: unused variable 'x'\n"
        "   |\n"
        " 3 |     let x = 5;\n"
        "   |         ^\n"
        "  = note: if this is intentional, prefix it with an underscore: '_x'\n"
        "u.gasync: ok, 1 warning\n"
    )
    (doc,) = json.loads(gasync("check", "u.gasync", "--json", cwd=tmp_path).stdout)
    where = (doc["line"], doc["column"], doc["end_line"], doc["end_column"])
    assert (doc["severity"], doc["code"], where) == ("warning", "W0218", (3, 9, 3, 10))
    assert (doc["message"], doc["notes"]) == ("unused variable 'x'", [PREFIX + "'_x'"])


def test_an_item_indexed_or_called_where_a_local_has_its_name_is_used() -> None:
    """`g[0]`, `h.fetch_add(1)` and `for await v in c` name the items whatever locals are in scope,
    as the planner reads them; W0218 said the buffer and the shared scalar were never used."""
    src = (
        "buffer g: f32[2] = zeros;\nshared h: i32 = 0;\nchannel c: i32[1];\n"
        "fn f(g: i32) -> i32 { return g; }\n"
        "task a for g in 0..2 { g[0] = 1.0; for h in 0..2 { h.fetch_add(f(h)); } c.send(g).await; }\n"
        "task b { for c in 0..1 { for await v in c { g[1] = v as f32; } } }\n"
    )
    assert warnings_of(src) == []
