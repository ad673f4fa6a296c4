"""Groups on the simulator: what contract cases cannot say (a group instance that can never
finish, a trace's names, the block's size)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from contract import bigshared

import gasync
from gasync.runtime.errors import DeadlockError

pytestmark = [pytest.mark.sim]

LOCAL_DEADLOCK = """\
buffer y: i32[4] = zeros;
group pipe for g in 0..2 {
    local channel a: i32[2];
    local channel b: i32[2];
    task x { let v = a.recv().await; b.send(v).await; }
    task z { let v = b.recv().await; a.send(v).await; y[g] = v; }
}
"""


@pytest.mark.timeout(120)
def test_a_group_waiting_on_its_own_channels_is_a_deadlock() -> None:
    program = gasync.compile_source(LOCAL_DEADLOCK, "dead.gasync")
    with pytest.raises(DeadlockError) as info:
        program.run(backend="sim", timeout=60)
    assert info.value.message.splitlines() == [
        "deadlock: no task can make progress, and nothing can wake these:",
        "  task x in group pipe[0] waits on recv from local channel pipe.a",
        "  task x in group pipe[1] not started",
        "  task z in group pipe[0] waits on recv from local channel pipe.b",
        "  task z in group pipe[1] not started",
    ]
    # a note at each await where one waits, as for ungrouped tasks (the pinned frames' state
    # words are copied out of shared memory as the run stops: codegen/pinned.py keep_lines)
    assert [(n.message, n.span.line, n.span.column) for n in info.value.notes if n.span] == [
        ("task x in group pipe[0] waits here", 5, 22),
        ("task z in group pipe[0] waits here", 6, 22),
    ]


JOIN_DEADLOCK = """\
group gg {
    local channel q: i32[1];
    local channel r: i32[1];
    task a { let (x, y) = join(q.recv(), r.recv()).await; }
    task b { q.send(1).await; r.close(); if false { r.send(1).await; } }
}
"""


@pytest.mark.timeout(120)
@pytest.mark.parametrize("shape", ["join", "select"])
def test_a_join_or_select_on_local_channels_alone_can_be_a_deadlock(shape: str) -> None:
    # (it ran until --timeout, and for ever without one: a join's or a select's wait on the
    # group's own channels was taken for one that something outside the group could end)
    text = JOIN_DEADLOCK
    if shape == "select":
        text = text.replace(
            "let (x, y) = join(q.recv(), r.recv()).await;", "q.recv().await; select { x = r.recv() => {} }"
        )
    program = gasync.compile_source(text, "dead.gasync")
    with pytest.raises(DeadlockError) as info:
        program.run(backend="sim")  # no timeout: the deadlock report ends it
    # the join's q.recv() took the value: what it still waits on is r
    assert info.value.message.splitlines()[1] == "  task a in group gg waits on recv from local channel gg.r"


@pytest.mark.timeout(120)
def test_a_task_stuck_on_a_local_channel_is_a_deadlock_whatever_else_it_awaits() -> None:
    # x also sends on a global channel, later: its wait on a.recv() was taken for one that
    # something outside the group could end, so the run went on to its deadline and said
    # "task x in group gg running"
    src = (
        "channel gc: i64[1];\nbuffer out: i64[1] = zeros;\ntask z { out[0] = gc.recv().await; }\n"
        "group gg {\n    local channel a: i64[1];\n    local channel b: i64[1];\n"
        "    task x { let v = a.recv().await; b.send(v).await; gc.send(v).await; }\n"
        "    task y { let w = b.recv().await; a.send(w).await; }\n}\n"
    )
    with pytest.raises(DeadlockError) as info:
        gasync.compile_source(src, "dead.gasync").run(backend="sim")  # no timeout: the report ends it
    lines = info.value.message.splitlines()
    assert "  task x in group gg waits on recv from local channel gg.a" in lines
    assert "  task y in group gg waits on recv from local channel gg.b" in lines


FED_GROUP = """\
buffer out: i64[2] = zeros;
channel feed: i64[1];
channel back: i64[1];
group gg for g in 0..3 {
    local channel loc: i64[1];
    task p { for k in 0..2 { let v = feed.recv().await; loc.send(v).await; } loc.close(); }
    task q { let s: i64 = 0; for await v in loc { s += v; } back.send(s).await; }
}
task feeder { for k in 0..6 { feed.send(k as i64).await; } }
task drain { for k in 0..3 { out[0] += back.recv().await; } }
task report after gg, drain { out[1] = out[0] + 1; }
"""


@pytest.mark.timeout(120)
def test_ungrouped_tasks_run_beside_a_group_instance_on_the_simulators_one_block() -> None:
    # the group's tasks wait on an ungrouped task (feed) and it on them (back): the block held
    # the instance and nothing ran feeder, until the timeout (decision 54); a spare warp now
    # runs the executor while the block holds an instance
    res = gasync.compile_source(FED_GROUP, "fed.gasync").run(backend="sim", timeout=60)
    assert (res.buffers["out"].tolist(), res.stats["executors"]) == ([15, 16], 3)


OOB_IN_GROUP = """\
buffer x: i32[8] = iota;
buffer out: i32[8] = zeros;
group grp for g in 0..2 {
    local buffer st: i32[4];
    task t for k in 0..2 { st[(x[g * 2 + k] + 1) as i64] = 1; out[g * 2 + k] = st[0]; }
}
"""


@pytest.mark.timeout(120)
def test_a_fault_in_a_group_names_the_task_instance_in_its_group_instance() -> None:
    from gasync.runtime.errors import BoundsError

    program = gasync.compile_source(OOB_IN_GROUP, "oob.gasync")
    with pytest.raises(BoundsError) as info:
        program.run(backend="sim", timeout=60)
    # x[3] + 1 = 4 is out of st: task t's k = 1 in group instance g = 1 (not "t[3]")
    assert info.value.message == (
        "index out of bounds in task t[1] in group grp[1]: the length of 'grp.st' is 4 but the index is 4"
    )


@pytest.mark.timeout(120)
def test_trace_names_group_instances_and_block_holds_the_group() -> None:
    src = "buffer y: i32[6] = zeros;\ngroup p for g in 0..2 { task t for k in 0..3 { y[g * 3 + k] = g * 10 + k; } }\n"
    result = gasync.compile_source(src, "t.gasync").run(backend="sim", timeout=60, trace=True)
    assert result.buffers["y"].tolist() == [0, 1, 2, 10, 11, 12]
    assert result.stats["executors"] == 3  # the one block holds the group instance's 3 warps
    from gasync.runtime.trace import instance_name

    assert result.trace is not None
    names = {instance_name(result.trace, e[2]) for e in result.trace.polls()}
    assert names == {f"t[{k % 3}] in p[{k // 3}]" for k in range(6)}  # its place in its group instance


@pytest.mark.timeout(120)
def test_trace_names_a_group_without_a_range_as_errors_do() -> None:
    src = "buffer y: i32[2] = zeros;\ngroup solo { task t for k in 0..2 { y[k] = k + 1; } }\n"
    result = gasync.compile_source(src, "t.gasync").run(backend="sim", timeout=60, trace=True)
    from gasync.runtime.trace import instance_name

    assert result.trace is not None and result.buffers["y"].tolist() == [1, 2]
    assert {instance_name(result.trace, e[2]) for e in result.trace.polls()} == {"t[0] in solo", "t[1] in solo"}


@pytest.mark.timeout(180)
@pytest.mark.parametrize("name", sorted(bigshared.PROGRAMS))
def test_groups_over_48_kib_run_from_dynamic_shared_memory(name: str) -> None:
    """96 KiB of one group's locals, and two groups of 60 KiB sharing the block's (tests/contract/bigshared.py)."""
    program = gasync.compile_source(bigshared.PROGRAMS[name][0], f"{name}.gasync")
    assert program.generated.dynamic_shared > 48 * 1024
    bigshared.check(name, program.run(backend="sim", timeout=120).buffers)


@pytest.mark.timeout(180)
def test_a_group_of_one_instance_runs_its_local_channels_as_any_other() -> None:
    """One instance of the spec's pipeline: its local channels then have one sender and one
    receiver task instance in the whole program, which the executor's shapes of global channels
    (bell ends, late rings) must not take them for (a NameError in the generated poll before)."""
    path = Path(__file__).resolve().parents[2] / "samples" / "staged_pipeline.gasync"
    res = gasync.compile(path, defines={"GROUPS": 1}).run(backend="sim", timeout=120)
    np.testing.assert_array_equal(res.buffers["y"], 2 * res.buffers["x"] + 1)
    assert (int(res.shared["tiles"]), int(res.shared["checked"])) == (4, 1)


EMPTY_GROUP = "buffer out: i32[1] = zeros;\ngroup gg { }\ntask b { out[0] = 1; }\n"
NO_INSTANCES = (
    "const W: i64 = 2;\nbuffer out: i32[2] = zeros;\ngroup gg for g in 0..2 { task a for k in 0..W { out[g] += 1; } }\n"
)
AFTER_EMPTY = """\
const W: i64 = 2;
buffer out: i32[4] = zeros;
group e { local buffer s: f32[4]; }
group gg for g in 0..2 after e { task a for k in 0..W { out[g] += 1; } }
group h for g in 0..2 after gg { task c { out[2] += 1; } }
task b after gg, e { out[3] = out[0] + out[1] + 10; }
"""


@pytest.mark.timeout(240)
def test_a_group_without_task_instances_runs_nothing() -> None:
    """Decision 61: `group gg { }` and a group whose tasks have 0 instances (`-D W=0`) run as a
    group over an empty range does (a ZeroDivisionError, exit status 3, before); what comes
    after them starts as if they were done."""
    res = gasync.compile_source(EMPTY_GROUP, "e.gasync").run(backend="sim", timeout=60)
    assert (res.buffers["out"].tolist(), res.stats["instances"], res.stats["executors"]) == ([1], 1, 2)
    res = gasync.compile_source(NO_INSTANCES, "w.gasync", defines={"W": 0}).run(backend="sim", timeout=60)
    assert (res.buffers["out"].tolist(), res.stats["instances"]) == ([0, 0], 0)
    res = gasync.compile_source(NO_INSTANCES, "w.gasync").run(backend="sim", timeout=60)
    assert res.buffers["out"].tolist() == [2, 2]
    res = gasync.compile_source(AFTER_EMPTY, "a.gasync", defines={"W": 0}).run(backend="sim", timeout=60)
    assert res.buffers["out"].tolist() == [0, 0, 2, 10]
    res = gasync.compile_source(AFTER_EMPTY, "a.gasync").run(backend="sim", timeout=60)
    assert res.buffers["out"].tolist() == [2, 2, 2, 14]


@pytest.mark.timeout(120)
def test_the_api_refuses_spin_for_groups_as_a_bad_option() -> None:
    from gasync.runtime.errors import InputError

    program = gasync.compile_source(NO_INSTANCES, "w.gasync")
    with pytest.raises(InputError) as info:
        program.run(backend="sim", timeout=60, executor="spin")
    assert str(info.value) == (
        "w.gasync: error[E0301]: executor='spin' does not run groups: a program with groups runs the queue executor"
    )


@pytest.mark.timeout(240)
def test_executors_below_a_groups_warps_is_warned_of(tmp_path: Path) -> None:
    """Decision 52: a block holds the largest group's warps, so `--executors 1` runs 2, and the CLI says so."""
    import json
    import os
    import subprocess
    import sys

    (tmp_path / "w.gasync").write_text(NO_INSTANCES)
    env = dict(os.environ, GASYNC_CACHE_DIR=str(tmp_path / "cache"))

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "gasync", "run", "w.gasync", "--backend", "sim", "--timeout", "60s", "--json"]
        return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=180, cwd=tmp_path, env=env)

    res = run("--executors", "1", "-q")
    assert res.returncode == 0, res.stderr
    assert res.stderr == (
        "gasync: warning: --executors 1: a block holds a whole instance of group 'gg', 2 warps"
        " (one per task instance), so 2 executors run\n"
    )
    doc = json.loads(res.stdout)
    assert (doc["buffers"]["out"], doc["stats"]["executors"]) == ([2, 2], 2)
    res = run("--executors", "3", "-q")  # enough: no word
    assert (res.returncode, res.stderr, json.loads(res.stdout)["stats"]["executors"]) == (0, "", 3)


def test_a_group_task_waiting_outside_its_group_stops_at_a_default_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    # a pinned task waits on a global channel nothing sends to again: no hang without a
    # timeout (decision 53: a deadline of GROUPS_DEADLINE_S), and the report names the wait
    from gasync.runtime import backends
    from gasync.runtime.errors import RunTimeoutError

    monkeypatch.setattr(backends, "GROUPS_DEADLINE_S", 2.0)
    src = (
        "buffer out: i64[4] = zeros;\nchannel c: i64[2];\ntask p { c.send(1).await; }\n"
        "group gg after p { task a { for await v in c { out[0] += v; } } }\n"
    )
    with pytest.raises(RunTimeoutError) as info:
        gasync.compile_source(src, "t.gasync").run(backend="sim")
    text = str(info.value)
    assert "timeout of 2s" in text and "task a in group gg waits on recv from channel c" in text
    assert any("task a of group gg was still waiting or running at the timeout" in n.message for n in info.value.notes)


@pytest.mark.timeout(120)
def test_a_pinned_task_that_sleeps_at_the_timeout_is_waiting_not_running() -> None:
    # a pinned task's state word is RUNNING from its start to its end: the report said "running"
    from gasync.runtime.errors import RunTimeoutError

    src = "buffer out: i64[1] = zeros;\ngroup gg { task q { sleep(1_000_000_000_000).await; out[0] = 1; } }\n"
    with pytest.raises(RunTimeoutError) as info:
        gasync.compile_source(src, "t.gasync").run(backend="sim", timeout=2)
    assert "  task q in group gg waiting" in str(info.value).splitlines()


@pytest.mark.timeout(120)
def test_a_pinned_task_in_a_join_or_select_of_local_and_global_futures_names_each_at_the_timeout() -> None:
    # (the report named only the future registered last: "waits on signal never")
    from gasync.runtime.errors import RunTimeoutError

    src = (
        "buffer out: i64[4] = zeros;\nchannel glob: i64[1];\nsignal never;\ngroup gg {\n"
        "    local channel loc: i64[1];\n"
        "    task p { let (a, b) = join(loc.recv(), glob.recv()).await; out[0] = a + b; }\n"
        "    task q { select { v = loc.recv() => { out[1] = v; } _ = never.wait() => { out[2] = 1; } } }\n"
        "    task r { sleep(1_000_000_000_000).await; loc.send(1).await; glob.send(2).await; }\n}\n"
        "task s { if false { never.set(); } }\n"
    )
    with pytest.raises(RunTimeoutError) as info:
        gasync.compile_source(src, "t.gasync").run(backend="sim", timeout=2)
    lines = str(info.value).splitlines()
    assert "  task p in group gg waits on recv from local channel gg.loc and recv from channel glob" in lines
    assert "  task q in group gg waits on recv from local channel gg.loc and signal never" in lines


@pytest.mark.timeout(180)
def test_b2s_group_ping_pong_hands_the_value_back_and_forth() -> None:
    """bench/programs/b2_group.gasync (B2's same-SM row in a group): each round trip's value
    comes back one more, through two local channels of one slot."""
    path = Path(__file__).parents[2] / "bench" / "programs" / "b2_group.gasync"
    reps = 6
    res = gasync.compile(path).run(backend="sim", inputs={"reps": np.array([reps], np.int64)}, timeout=120)
    assert [int(v) for v in res.buffers["out"]] == [reps * (reps + 1) // 2, reps]
