"""Where a deadlocked or timed-out run's tasks wait, as a user reads it: a note at each await
point where unfinished instances are suspended (read from their state words), and a task not
started after a group named by its group, not by the group's tasks."""

from __future__ import annotations

import pytest

import gasync
from gasync.dsl.diagnostics import render
from gasync.runtime.errors import DeadlockError

pytestmark = [pytest.mark.sim, pytest.mark.timeout(180)]

TWO_WAITS = """channel c: i32[2];
buffer out: i32[1] = zeros;
async fn get() -> i32 {
    return c.recv().await;
}
task a { out[0] = get().await; }
task b for i in 0..3 { if i > 0 { let v = c.recv().await; out[0] = v; } }
task p after a { c.send(1).await; }
"""


def test_a_deadlock_points_at_each_await_where_tasks_wait() -> None:
    program = gasync.compile_source(TWO_WAITS, "w.gasync")
    with pytest.raises(DeadlockError) as info:
        program.run(backend="sim", timeout=60)
    err = info.value
    assert [(n.message, n.span.line, n.span.column) for n in err.notes if n.span] == [
        ("task a waits here", 6, 19),
        ("task b[1, 2] waits here", 7, 43),
    ]
    text = render(err, "w.gasync", TWO_WAITS)
    assert "  task p not started: it runs after a" in text
    assert "w.gasync:7:43: note: task b[1, 2] waits here" in text


AFTER_A_GROUP = """signal s;
buffer out: i32[4] = zeros;
group g for k in 0..2 {
    task p { s.wait().await; out[k] = 1; }
    task q { out[k + 2] = 2; }
}
task after_g after g { out[0] = 5; }
"""


def test_a_task_after_a_group_is_said_to_run_after_the_group() -> None:
    program = gasync.compile_source(AFTER_A_GROUP, "g.gasync")
    with pytest.raises(gasync.GasyncError) as info:
        program.run(backend="sim", timeout=3)
    assert "task after_g not started: it runs after group g" in str(info.value)
