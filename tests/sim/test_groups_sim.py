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
