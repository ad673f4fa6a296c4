"""The executor's bookkeeping and fairness on the simulator, at the executor counts where each
bug showed: a task after instances that never exist, which an idle executor took for a deadlock
(the count of instances in flight left it out), and a loop of selects against a sleep that kept
its executor for ever (a due sleep completed in place, so the poll never ended). Each run has a
timeout, so a regression fails rather than hangs."""

from __future__ import annotations

import numpy as np
import pytest

import gasync
from gasync.runtime import exits
from gasync.runtime.errors import DeviceError
from gasync.runtime.options import RunOptions
from gasync.runtime.state import CTL_WORDS, Ctl, Exit, Sched

pytestmark = [pytest.mark.sim, pytest.mark.timeout(180)]

RUN_TIMEOUT_S = 60.0
LIVELOCK_TIMEOUT_S = 20.0  # each of these finishes in a few seconds on the simulator


def run(source: str, executors: int = 0, timeout: float = RUN_TIMEOUT_S) -> gasync.Result:
    program = gasync.compile_source(source, "<fairness>", {})
    return program.run(backend="sim", timeout=timeout, executors=executors)


# --- a task after empty ones starts counted --------------------------------------------------------------------

AFTER_EMPTY = """
buffer x: f32[3] = iota;
task a for k in 0..0 { }
task main after a { let s: f32 = LOOP for i in 0..1 reduce sum { x[i] }; x[1] = s; }
"""

AFTER_EMPTY_GROUP = """
const W: i64 = 0;
buffer x: f32[3] = iota;
group gg for g in 0..W { task t { x[2] = 100.0; } }
task main after gg { let s: f32 = LOOP for i in 0..1 reduce sum { x[i] }; x[1] = s; }
"""


@pytest.mark.parametrize("executors", [2, 4])
@pytest.mark.parametrize("loop", ["parallel", "bulk"])
@pytest.mark.parametrize("source", [AFTER_EMPTY, AFTER_EMPTY_GROUP], ids=["task_array", "group"])
def test_a_task_after_empty_ones_is_no_deadlock(source: str, loop: str, executors: int) -> None:
    # (it stopped with a deadlock naming no task: "(none)")
    res = run(source.replace("LOOP", loop), executors=executors)
    np.testing.assert_array_equal(res.buffers["x"], np.array([0, 0, 2], np.float32))


def test_a_deadlock_with_every_task_done_is_reported_as_the_executors_error() -> None:
    # (the host printed "deadlock: ... nothing can wake these:" over "(none)")
    prog = gasync.compile_source(AFTER_EMPTY.replace("LOOP", "parallel"), "t.gasync")
    ctl = np.zeros(CTL_WORDS, np.int64)
    ctl[Ctl.EXIT] = Exit.DEADLOCK
    ctl[Ctl.DONE] = 1
    back = {"CTL": ctl, "ST": np.full(1, int(Sched.DONE), np.int32), "WAITON": np.zeros(1, np.int32)}
    with pytest.raises(DeviceError) as err:
        exits.check_exit(prog.generated, back, RunOptions())
    assert str(err.value).startswith("internal error in the executor: it reported a deadlock, yet every task finished")


# --- a loop of selects against a short sleep lets the sender run ------------------------------------------------

SELECT_LOOP = """
channel c: i32[2];
buffer out: i32[W] = zeros;
task producer {
    for k in 0..(W * 3) { c.send(k).await; }
    c.close();
}
task consumer for w in 0..W {
    let n: i32 = 0;
    while n < 3 {
        select {
            v = c.recv() => { n += 1; }
            _ = sleep(NS) => { }
        }
    }
    out[w] = n;
}
"""


@pytest.mark.parametrize("ns", ["0", "20_000"])
@pytest.mark.parametrize(("consumers", "executors"), [(1, 1), (2, 2), (3, 3)])
def test_select_loops_against_a_short_sleep_do_not_starve_the_sender(ns: str, consumers: int, executors: int) -> None:
    # (with as many such consumers as executors, the producer stayed queued until the timeout:
    # the sleep was due by the time each select came to it, so no consumer's poll ever ended)
    source = SELECT_LOOP.replace("W", str(consumers)).replace("NS", ns)
    res = run(source, executors=executors, timeout=LIVELOCK_TIMEOUT_S)
    assert res.buffers["out"].tolist() == [3] * consumers


SLEEP_LOOP = """
shared flag: i32 = 0;
buffer out: i32[1] = zeros;
task waiter {
    while flag.load() == 0 {
        let t = sleep(1);
        if flag.load() != 0 { break; }
        t.await;
        sleep(0).await;
    }
    out[0] = flag.load();
}
task setter { flag.store(7); }
"""


def test_a_loop_of_due_sleeps_lets_a_fresh_task_start() -> None:
    res = run(SLEEP_LOOP, executors=1, timeout=LIVELOCK_TIMEOUT_S)
    assert res.buffers["out"].tolist() == [7]


# --- the run's end is seen at once ------------------------------------------------------------------------------

ONE_TASK = """
buffer out: i32[4] = zeros;
task t { out[2] = 5; }
"""


def test_the_executor_that_finishes_the_last_instance_leaves_at_its_next_empty_look() -> None:
    # (the batch that finishes the last instance sets the run's exit, which an idle executor reads
    # at every empty look: one look, where it waited for every 8th, the one with the deadlock
    # check, before; bench/NOTES.md, the fortieth session: B4's last ~60 us on an H100)
    res = run(ONE_TASK, executors=1)
    assert res.buffers["out"].tolist() == [0, 0, 5, 0]
    assert res.stats["idle_spins"] == 1
