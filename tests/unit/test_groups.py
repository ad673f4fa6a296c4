"""Groups (v1): the front end's nodes, the planner's scoping, rules, fit checks and Plan."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gasync.dsl import ast, parse
from gasync.dsl.diagnostics import ErrorGroup, UnexpectedTokenError, render
from gasync.planner import PlanOptions, plan, verify
from gasync.planner import errors as E
from gasync.planner.model import Plan
from gasync.planner.printer import format_plan
from gasync.planner.verify import PlanInvariantError

PIPE = """\
buffer x: f32[256] = random(1);
buffer y: f32[256] = zeros;
task init { y[0] = 0.0; }
group pipe for g in 0..4 after init {
    local buffer stage: f32[2, 64];
    local channel full: i32[2];
    task loader {
        for s in 0..2 { parallel for i in 0..64 { stage[s, i] = x[g * 64 + i]; } full.send(s).await; }
        full.close();
    }
    task compute for c in 0..3 {
        for await s in full { parallel for i in 0..64 { y[g * 64 + i] = stage[s, i]; } }
    }
}
task report after pipe { y[1] = 1.0; }
"""


def plan_of(src: str) -> Plan:
    return plan(parse(src, "t.gasync"), PlanOptions())


def diagnose(src: str) -> tuple[list[type], str]:
    with pytest.raises(ErrorGroup) as info:
        plan_of(src)
    errs = info.value.errors
    return [type(e) for e in errs], "\n".join(render(e, "t.gasync", src) for e in errs)


def test_group_parses_into_its_nodes() -> None:
    prog = parse("group p for g in 0..2 after a { local buffer s: f32[4]; local channel c: i64[2]; task t { } }")
    (g,) = prog.items
    assert isinstance(g, ast.Group)
    assert (g.name, g.var, g.after) == ("p", "g", (ast.Name("a"),))
    assert g.start == ast.IntLit(0) and g.stop == ast.IntLit(2)
    buf, chan, task = g.members
    assert buf == ast.LocalBuffer("s", ast.ArrayType(ast.ScalarType("f32"), (ast.IntLit(4),)))
    assert chan == ast.LocalChannel("c", ast.ScalarType("i64"), ast.IntLit(2))
    assert task == ast.Task("t", None, None, None, (), ast.Block(()))
    assert g.tasks == (task,) and g.locals == (buf, chan)


def test_group_without_range_is_one_instance() -> None:
    p = plan_of("buffer y: i32[1] = zeros;\ngroup solo { task t { y[0] = 1; } }\n")
    (g,) = p.groups
    assert (g.var, g.count, g.warps) == (None, 1, 1)


def test_local_is_a_reserved_word() -> None:
    with pytest.raises(Exception) as info:
        parse("buffer local: i32[1] = zeros;")
    assert "keyword" in str(info.value) or "local" in str(info.value)


def test_a_local_buffer_with_an_initialiser_says_it_has_none() -> None:
    # (a bare "expected ';', found '='" before, for `= zeros` as a global buffer has)
    src = "group gg {\n    local buffer st: i64[4] = zeros;\n    task a { st[0] = 1; }\n}\n"
    with pytest.raises(UnexpectedTokenError) as info:
        parse(src, "t.gasync")
    err = info.value
    assert (err.code, err.span.line, err.span.column) == ("E0101", 2, 29)
    (note,) = err.notes
    assert note.message == "a local buffer has no initialiser: it starts zeroed in every group instance"


def test_plan_of_a_group() -> None:
    p = plan_of(PIPE)
    (g,) = p.groups
    assert (g.name, g.var, g.var_ty, g.start, g.stop, g.count) == ("pipe", "g", "i32", 0, 4, 4)
    assert (g.tasks, g.task_warps, g.warps, g.after) == (("loader", "compute"), (1, 3), 4, ("init",))
    assert [b.name for b in g.buffers] == ["pipe.stage"] and [c.name for c in g.channels] == ["pipe.full"]
    assert g.shared_bytes == 2 * 64 * 4 + 8 * (4 + 4 * 2)  # words; per slot its sequence, two mbarriers, value
    assert [b.name for b in p.buffers] == ["x", "y"] and p.channels == ()
    tasks = {t.name: t for t in p.tasks}
    assert (tasks["compute"].copies, tasks["compute"].per_copy, tasks["compute"].count) == (4, 3, 12)
    assert tasks["loader"].group == "pipe" and tasks["init"].group is None
    assert tasks["report"].after == ("loader", "compute")
    assert ("init", "loader") in p.edges and ("compute", "report") in p.edges
    text = format_plan(p)
    assert "pipe for g: i32 in 0..4  instances 4, 4 warps and 608 bytes of shared memory each" in text
    assert "    local buffer pipe.stage: f32[2, 64]" in text


def test_plan_of_a_group_without_tasks_says_so() -> None:
    # (it printed "tasks: ; after: -")
    text = format_plan(plan_of("buffer o: i32[1] = zeros;\ngroup g { }\ntask a { o[0] = 1; }\n"))
    assert "  tasks: -; after: -" in text


def test_verify_checks_groups() -> None:
    p = plan_of(PIPE)
    verify(p)
    bad = dataclasses.replace(p, tasks=tuple(dataclasses.replace(t, group=None) for t in p.tasks))
    with pytest.raises(PlanInvariantError, match="task loader of group pipe names group None"):
        verify(bad)


def test_local_item_outside_its_group() -> None:
    src = "buffer y: f32[4] = zeros;\ngroup pipe for g in 0..2 {\n    local buffer stage: f32[4];\n"
    src += "    task a { stage[0] = 1.0; }\n}\ntask other { y[0] = stage[0]; }\n"
    kinds, text = diagnose(src)
    assert kinds == [E.LocalScopeError]
    assert text == (
        "t.gasync:6:21: error: 'stage' is a local buffer of group 'pipe': it is visible only inside that group\n"
        "   |\n"
        " 6 | task other { y[0] = stage[0]; }\n"
        "   |                     ^^^^^\n"
        "t.gasync:3:5: note: 'stage' is defined here, in group 'pipe'\n"
        "   |\n"
        " 3 |     local buffer stage: f32[4];\n"
        "   |     ^^^^^^^^^^^^^^^^^^^^^^^^^^^"
    )


def test_local_channel_of_another_group() -> None:
    src = "group a { local channel c: i32[1]; task s { c.send(1).await; } task r { let v = c.recv().await; } }\n"
    src += "group b { task t { c.close(); } }\n"
    kinds, text = diagnose(src)
    assert kinds == [E.LocalScopeError]
    assert text.startswith(
        "t.gasync:2:20: error: 'c' is a local channel of group 'a': it is visible only inside that group"
    )


def test_group_over_32_warps() -> None:
    src = "group big for g in 0..2 {\n    local channel c: i32[2];\n    task a for k in 0..30 { c.send(1).await; }\n"
    src += "    task b for k in 0..3 { let v = c.recv().await; }\n}\n"
    kinds, text = diagnose(src)
    assert kinds == [E.GroupFitError]
    assert text.splitlines()[0] == (
        "t.gasync:1:1: error: group 'big' needs 33 warps per instance, more than the 32 of one CUDA block"
    )
    assert (
        text.splitlines()[-1]
        == "  = note: each task instance of a group takes one warp of the block (tasks: a 30, b 3)"
    )


def test_group_over_the_shared_memory_limit() -> None:
    src = "const TILE: i64 = 30000;\ngroup fat for g in 0..2 {\n    local buffer stage: f32[2, TILE];\n"
    src += "    task a { stage[0, 0] = 1.0; }\n}\n"
    kinds, text = diagnose(src)
    assert kinds == [E.GroupFitError]
    assert text.splitlines()[0] == (
        "t.gasync:2:1: error: group 'fat' needs 240000 bytes of shared memory per instance (234.4 KiB), more than"
        " the 232448 bytes (227 KiB) a block may use"
    )


def test_just_over_the_shared_memory_limit_says_more_kib_than_the_limit() -> None:
    # (16 bytes over said "(227.0 KiB), more than the 232448 bytes (227 KiB)")
    src = f"group g1 {{ local buffer s: u32[{(227 * 1024 + 16) // 4}];\ntask a {{ s[0] = 1; }} }}\n"
    kinds, text = diagnose(src)
    assert kinds == [E.GroupFitError]
    assert "needs 232464 bytes of shared memory per instance (227.1 KiB), more than the 232448 bytes (227 KiB)" in text


def test_just_under_the_shared_memory_limit() -> None:
    # 227 KiB less one channel's 96 bytes (4 words; 2 sequences, 4 mbarriers, 2 values): fits
    src = f"group g1 {{ local buffer s: u32[{(227 * 1024 - 96) // 4}]; local channel c: i32[2];\n"
    src += "task a { s[0] = 1; c.send(1).await; } task b { let v = c.recv().await; } }\n"
    (g,) = plan_of(src).groups
    assert g.shared_bytes == 227 * 1024


def test_task_of_a_group_with_its_own_after() -> None:
    kinds, text = diagnose("task init { }\ngroup pipe for g in 0..2 {\n    task a after init { }\n}\n")
    assert kinds == [E.GroupRuleError]
    assert text.splitlines()[0] == (
        "t.gasync:3:18: error: task 'a' of group 'pipe' cannot have 'after': the tasks of a group instance start"
        " together"
    )
    assert "note: give 'after' to the group: 'group pipe ... after init {'" in text


def test_task_of_a_group_after_a_task_of_the_same_group() -> None:
    # the group's own 'after a' would be a cycle: the note says what orders two tasks of one instance
    kinds, text = diagnose("group pipe for g in 0..2 {\n    task a { }\n    task b after a { }\n}\n")
    assert kinds == [E.GroupRuleError]
    assert "note: 'a' is a task of group 'pipe' too: let 'b' wait for it on a local channel" in text
    assert "give 'after' to the group" not in text


def test_bulk_for_in_a_group() -> None:
    src = "buffer y: f32[64] = zeros;\ngroup pipe for g in 0..2 {\n"
    src += "    task a { bulk for i in 0..64 { y[i] = 1.0; } }\n}\n"
    kinds, text = diagnose(src)
    assert kinds == [E.GroupRuleError]
    assert text.splitlines()[0] == (
        "t.gasync:3:14: error: task 'a' of group 'pipe' cannot run a 'bulk for': a group's warps stay with it"
    )


def test_bulk_for_in_an_async_fn_a_group_task_reaches() -> None:
    src = "buffer y: f32[64] = zeros;\nasync fn fill() { bulk for i in 0..64 { y[i] = 1.0; } }\n"
    src += "async fn outer() { fill().await; }\ngroup pipe for g in 0..2 {\n    task a { outer().await; }\n}\n"
    kinds, text = diagnose(src)
    assert kinds == [E.GroupRuleError]
    assert text.splitlines()[0] == (
        "t.gasync:2:19: error: task 'a' of group 'pipe' cannot run a 'bulk for': a group's warps stay with it"
    )
    assert "note: the 'bulk for' is in async fn 'fill', which task 'a' runs (it awaits it, or an async fn that" in text


def test_bulk_for_in_a_group_is_reported_beside_the_tasks_other_errors() -> None:
    # (E0222 was left out where the same body had another error, or its group's range failed)
    src = "const N: i64 = 2.5;\nbuffer y: f32[64] = zeros;\ngroup pipe for g in 0..N {\n"
    src += "    task a { let z: i32 = true; bulk for i in 0..64 { y[i] = 1.0; } }\n}\n"
    kinds, text = diagnose(src)
    assert kinds == [E.TypeMismatchError, E.TypeMismatchError, E.GroupRuleError]
    assert "t.gasync:4:33: error: task 'a' of group 'pipe' cannot run a 'bulk for'" in text


def test_static_rules_apply_inside_groups() -> None:
    src = "group pipe for g in 0..2 {\n    local channel unused: i32[2];\n"
    src += "    task b { parallel for i in 0..4 { let v = unused.recv().await; } }\n}\n"
    kinds, text = diagnose(src)
    assert kinds == [E.AwaitContextError]
    kinds, text = diagnose("group pipe {\n    local channel lonely: i32[2];\n    task b { lonely.send(1).await; }\n}\n")
    assert kinds == [E.ChannelUseError]
    assert (
        text.splitlines()[0]
        == "t.gasync:2:5: error: channel 'lonely' (in group 'pipe') has no receiver: no task receives from it"
    )


def test_race_on_a_local_buffer_is_the_race_warning() -> None:
    src = "group pipe for g in 0..2 {\n    local buffer stage: f32[4];\n    task a { stage[0] = 1.0; }\n"
    src += "    task b { stage[0] = 2.0; }\n}\n"
    p = plan_of(src)
    (w,) = p.warnings
    assert w.code == "W0217"
    assert w.message == "tasks 'a' and 'b' may run at once and both write buffer 'stage' (in group 'pipe')"
    # its advice is one that ends the warning (it told to order them through a local channel,
    # which the check does not see: the same warning came back for a program that did)
    assert w.notes[-1].message == (
        "a group's tasks start together and have no 'after': let one of them write it (the other"
        " sends it what to write through a local channel), or write with atomic_add and friends"
    )


def test_a_group_after_itself_is_a_cycle_of_the_group() -> None:
    # (it named its first task, "a -> a", where two groups' cycle names the groups)
    kinds, text = diagnose("buffer y: i32[1] = zeros;\ngroup gg after gg { task a { y[0] = 1; } task b { } }\n")
    assert kinds == [E.AfterCycleError]
    assert text.splitlines()[0] == "t.gasync:2:16: error: cycle in 'after' edges: group gg -> group gg"


def test_two_groups_may_share_local_names() -> None:
    one = "group {n} {{ local buffer s: i32[2]; task {n}t {{ s[0] = 1; y[0] = s[0]; }} }}\n"
    p = plan_of("buffer y: i32[1] = zeros;\n" + one.format(n="a") + one.format(n="b"))
    assert [b.name for g in p.groups for b in g.buffers] == ["a.s", "b.s"]


def test_a_let_cannot_shadow_a_local_item() -> None:
    # as for a global buffer; the message names the local as written, and its group
    src = "buffer y: i32[1] = zeros;\ngroup p { local buffer s: i32[2]; task t { let s: i32 = 5; y[0] = s; } }\n"
    kinds, text = diagnose(src)
    assert text.splitlines()[0] == "t.gasync:2:44: error: let bindings cannot shadow the buffer 's' (in group 'p')"


def test_a_local_item_named_as_the_groups_or_a_tasks_variable_is_an_error() -> None:
    # every use of the name in the group's tasks meant the local item: the variable could not be
    # read (`o[g]` was "'g' (in group 'gg') is a buffer"), and W0218 said the buffer was unused
    src = (
        "buffer o: i64[2] = zeros;\ngroup gg for g in 0..2 {\n    local buffer g: f32[2];\n"
        "    local channel k: i32[1];\n    task a for k in 0..1 { g[0] = 1.0; o[0] = k as i64; }\n}\n"
    )
    kinds, text = diagnose(src)
    assert kinds[:2] == [E.DuplicateNameError, E.DuplicateNameError]
    lines = text.splitlines()
    assert lines[0] == "t.gasync:3:5: error: local buffer 'g' of group 'gg' has the name of the variable of group 'gg'"
    assert "= note: in the group's tasks 'g' would name only the buffer: rename one of them" in text
    head = "t.gasync:4:5: error: local channel 'k' of group 'gg' has the name of the variable of task 'a'"
    assert head in lines


def test_a_note_names_a_local_buffer_as_written() -> None:
    src = (
        "buffer o: f32[2] = zeros;\ngroup gg {\n    local buffer s: f32[2];\n    task a { s[0] = 1.0; o[0] = s; }\n}\n"
    )
    kinds, text = diagnose(src)
    assert text.splitlines()[0] == "t.gasync:4:33: error: 's' (in group 'gg') is a buffer, not a value"
    assert text.splitlines()[-1] == "  = note: index it, as in s[i]"  # not gg.s[i], the name flattening gave it


def test_task_graph_draws_a_group_as_a_cluster() -> None:
    from dottext import bare

    from gasync.viz.taskgraph import task_graph_dot

    dot = bare(task_graph_dot(plan_of(PIPE)))
    assert "subgraph cluster_group_pipe {" in dot
    assert 'label="group pipe x4: 4 warps, 608 bytes of shared memory each"' in dot
    assert '"buffer.pipe.stage" [label="local stage: f32[2, 64]" shape=cylinder]' in dot
    assert '"task.compute" [label="compute x3"' in dot


def test_states_name_the_group() -> None:
    from gasync.viz.states import states_graph_dot

    dot = states_graph_dot(plan_of(PIPE))
    assert "task compute x3 of group pipe x4" in dot


def test_traces_name_the_group_instance() -> None:
    from gasync.runtime.trace import RawTrace, instance_name

    p = plan_of(PIPE)
    raw = RawTrace([], 0, 0, [(t.name, t.first_instance, t.count) for t in p.tasks], {}, 4, "sim")
    raw.groups = [(t.name, "pipe", t.per_copy, 0) for t in p.tasks if t.group]
    compute = next(t for t in p.tasks if t.name == "compute")
    assert compute.per_copy == 3
    assert instance_name(raw, compute.first_instance + 7) == "compute[1] in pipe[2]"
    assert instance_name(raw, 0) == "init"
    again = RawTrace.from_json(raw.to_json())
    assert again.groups == raw.groups


def test_codegen_knows_a_rings_words() -> None:
    from gasync.codegen import groups as cg
    from gasync.runtime import state

    assert cg.LCH_WORDS == state.LCH_WORDS


BIG = """\
const N: i64 = 16384;
buffer y: f32[N] = zeros;
group g for k in 0..1 {
    local buffer stage: f32[N];
    task fill {
        parallel for i in 0..N { stage[i] = 1.0; }
        parallel for i in 0..N { y[i] = stage[i] + 1.0; }
    }
}
"""


def test_a_group_over_the_static_shared_limit_takes_dynamic_shared_memory() -> None:
    """64 KiB of local buffers: more than static arrays may hold (48 KiB), so the kernel takes
    them from dynamic shared memory, which the launch asks for; 512 bytes stay static."""
    from gasync.codegen import generate

    assert generate(plan_of(BIG)).dynamic_shared == 65536
    assert generate(plan_of(PIPE)).dynamic_shared == 0


def test_a_block_over_the_devices_shared_memory_is_a_located_error_naming_group_and_limit() -> None:
    """On the GPU the launch checks a block's shared memory against the device's opt-in maximum
    (the H200's 232,448 bytes where the device does not say): the largest group's locals and the
    kernel's own 288 bytes with its pinned tasks' frame rows (here 56: one warp's 6 int words and 1 float word)."""
    from gasync.codegen import generate
    from gasync.runtime import groupgrid
    from gasync.runtime.errors import DeviceError

    big = generate(plan_of(BIG))
    groupgrid.check_shared(big, groupgrid.H200_SHARED_PER_BLOCK)  # 64 KiB: fits the H200
    with pytest.raises(DeviceError) as info:
        groupgrid.check_shared(big, 48 * 1024)  # a device without the opt-in
    assert str(info.value) == (
        "t.gasync:3:1: group 'g' needs 65536 bytes of shared memory, 65880 with the kernel's own 344, and this"
        " GPU gives a block at most 49152 bytes (48.0 KiB, its opt-in maximum); make the group's local buffers"
        " smaller"
    )
    assert info.value.code == "E0305"
    # within the planner's 227 KiB, but not with the kernel's own words
    edge = generate(plan_of(BIG.replace("16384", "29040").replace("f32", "f64")))
    assert edge.plan.groups[0].shared_bytes == 232320
    with pytest.raises(DeviceError) as info:
        groupgrid.check_shared(edge, groupgrid.H200_SHARED_PER_BLOCK)
    assert f"{232320 + groupgrid.groups.kernel_shared(edge.plan)} with the kernel's own" in str(info.value)
    assert "at most 232448 bytes (227.0 KiB, its opt-in maximum)" in str(info.value)
    groupgrid.check_shared(generate(plan_of(PIPE)), 48 * 1024)  # 512 bytes of stages and a channel: fits


def test_the_device_says_its_shared_memory_limit() -> None:
    from types import SimpleNamespace

    from gasync.runtime import groupgrid

    h100 = SimpleNamespace(get_current_device=lambda: SimpleNamespace(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN=232448))
    ada = SimpleNamespace(get_current_device=lambda: SimpleNamespace(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN=101376))
    silent = SimpleNamespace(get_current_device=lambda: SimpleNamespace())
    assert [groupgrid.shared_limit(c) for c in (h100, ada, silent)] == [232448, 101376, 232448]


EMPTY_GROUP = "buffer out: i32[1] = zeros;\ngroup gg { }\ntask b { out[0] = 1; }\n"
NO_INSTANCES = (
    "const W: i64 = 2;\nbuffer out: i32[2] = zeros;\ngroup gg for g in 0..2 { task a for k in 0..W { out[g] += 1; } }\n"
)


def test_a_group_without_task_instances_compiles_and_is_never_claimed() -> None:
    # decision 61: `group gg { }` and `-D W=0` were a ZeroDivisionError in codegen/occupancy.py
    from gasync.codegen import generate, occupancy

    no_instances = plan(parse(NO_INSTANCES, "t.gasync"), PlanOptions(defines={"W": "0"}))
    for p in (plan_of(EMPTY_GROUP), no_instances):
        assert [(g.name, g.warps, diag) for g in p.groups for diag in [p.warnings]] == [("gg", 0, ())]
        assert occupancy.register_cap(p) == (None, 1)
        source = generate(p).source
        assert "MAX_REGISTERS = None\n" in source
        claim = source[source.index("def group_claim(G):") :].split("\n\n\n")[0]
        assert claim.endswith("    CURSOR, PRED = G.sched.CURSOR, G.sched.PRED\n    return int64(-1)")
        assert "    if False:\n        group_want(w, 1, G" in source  # (G or its part: codegen/narrow.py)
    # beside a group with warps, the empty one neither sizes the block nor takes a claim
    both = plan_of(EMPTY_GROUP + "group h for g in 0..264 { task c for k in 0..2 { out[0] = 2; } }\n")
    assert occupancy.register_cap(both) == (255, 2)  # h's 264 instances on 132 SMs (265 would be 3)
    assert occupancy.kernel_options(both)[0].endswith("so that 2 blocks of group h's 2 warps")
    source = generate(both).source
    claim = source[source.index("def group_claim(G):") :].split("\n\n\n")[0]
    assert "# group h" in claim and "# group gg" not in claim


def test_graph_of_a_group_without_task_instances(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "e.gasync").write_text(EMPTY_GROUP)
    (tmp_path / "w.gasync").write_text(NO_INSTANCES)
    for args in (["e.gasync"], ["w.gasync", "-D", "W=0"]):
        for states in ([], ["--states"]):
            res = subprocess.run(
                [sys.executable, "-m", "gasync", "graph", *states, *args],
                capture_output=True, text=True, timeout=120, cwd=tmp_path,
            )  # fmt: skip
            assert (res.returncode, res.stderr) == (0, "")
            assert res.stdout.startswith("digraph")
    res = subprocess.run(
        [sys.executable, "-m", "gasync", "graph", "w.gasync", "-D", "W=0"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert 'label="group gg x2: 0 warps, 0 bytes of shared memory each"' in res.stdout


def test_the_plan_printout_counts_one_warp_of_a_group_without_a_range() -> None:
    src = "buffer o: i32[1] = zeros;\ngroup solo { local buffer s: i32[4]; task t { s[0] = 1; o[0] = s[0]; } }\n"
    text = format_plan(plan_of(src))
    assert "solo  instances 1, 1 warp and 16 bytes of shared memory\n" in text
