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
        ("task a waits here, inside async fn get", 4, 12),
        ("task b[1, 2] waits here", 7, 43),
    ]
    text = render(err, "w.gasync", TWO_WAITS)
    assert "  task p not started: it runs after a" in text
    assert "w.gasync:7:43: note: task b[1, 2] waits here" in text


PICK_IN_A_FN = """channel a: i32[1];
channel b: i32[1];
buffer out: i32[2] = zeros;
async fn pick() -> i32 {
    select {
        v = a.recv() => { return v; }
        w = b.recv() => { return w; }
    }
    return 0;
}
async fn two() -> i32 { return a.recv().await + a.recv().await; }
task main { out[0] = pick().await; }
task j { let (x, y) = join(two(), b.recv()).await; out[1] = x + y; }
task late after main, j { a.send(1).await; b.send(2).await; }
"""


def test_a_wait_inside_an_awaited_async_fn_names_all_it_waits_on() -> None:
    # a select inside an async fn waits on both arms, and a join on its every future not done
    # yet (the async fn's receive too), not only on the one it registered last; and a second
    # note points inside the async fn
    program = gasync.compile_source(PICK_IN_A_FN, "p.gasync")
    with pytest.raises(DeadlockError) as info:
        program.run(backend="sim", timeout=60)
    err = info.value
    lines = str(err).splitlines()
    assert "  task main waits on recv from channel a and recv from channel b" in lines
    assert "  task j waits on recv from channel a and recv from channel b" in lines
    assert "  task late not started: it runs after main, j" in lines
    assert [(n.message, n.span.line, n.span.column) for n in err.notes if n.span] == [
        ("task main waits here", 12, 22),
        ("task main waits here, inside async fn pick", 5, 5),
        ("task j waits here", 13, 10),
        ("task j waits here, inside async fn two", 11, 32),
    ]


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


SELECT_WITH_A_SLEEP = """channel c: i32[2];
buffer out: i32[1] = zeros;
async fn pick() -> i32 {
    select {
        v = c.recv() => { return v; }
        _ = sleep(1_000_000_000_000) => { return 0; }
    }
    return 0;
}
task main { out[0] = pick().await; }
task late after main { c.send(1).await; }
"""


def test_a_timeout_names_a_select_s_sleep_inside_an_awaited_async_fn() -> None:
    from gasync.runtime.errors import RunTimeoutError

    program = gasync.compile_source(SELECT_WITH_A_SLEEP, "s.gasync")
    with pytest.raises(RunTimeoutError) as info:
        program.run(backend="sim", timeout=2)
    assert "  task main waits on recv from channel c and a sleep" in str(info.value).splitlines()
    assert ("task main waits here, inside async fn pick", 4, 5) in [
        (n.message, n.span.line, n.span.column) for n in info.value.notes if n.span
    ]


def test_many_waiting_instances_are_counted() -> None:
    # past eight instances the report said "w[0, 1, ..., 7, ...]", hiding how many wait
    src = "signal go;\nbuffer out: i32[20] = zeros;\ntask w for i in 0..20 { go.wait().await; out[i] = 1; }\n"
    src += "task s after w { go.set(); }\n"
    error = _deadlock(src)
    assert "  task w[0, 1, 2, 3, 4, 5, 6, 7, ... (20 in all)] waits on signal go" in str(error).splitlines()


def test_the_spin_executor_s_timeout_points_where_tasks_wait() -> None:
    # spin's instances stay RUNNING once polled, and its report had no note of where they wait
    from gasync.runtime.errors import RunTimeoutError

    program = gasync.compile_source(PICK_IN_A_FN, "p.gasync")
    with pytest.raises(RunTimeoutError) as info:
        program.run(backend="sim", timeout=2, executor="spin")
    assert "  task main waits on recv from channel a and recv from channel b" in str(info.value).splitlines()
    assert [(n.message, n.span.line, n.span.column) for n in info.value.notes if n.span] == [
        ("task main waits here", 12, 22),
        ("task main waits here, inside async fn pick", 5, 5),
        ("task j waits here", 13, 10),
        ("task j waits here, inside async fn two", 11, 32),
    ]


def test_a_recv_from_a_closed_empty_channel_says_the_channel_is_closed() -> None:
    # decision 16: such a recv never completes; the report named the channel as if a value might come
    src = "channel c: i32[2];\nbuffer o: i32[1] = zeros;\n"
    src += "task p { c.send(1).await; c.close(); o[0] = c.recv().await; o[0] = c.recv().await; }\n"
    error = _deadlock(src)
    assert "  task p waits on recv from channel c (closed)" in str(error).splitlines()
    assert [n.message for n in error.notes if not n.span] == [
        "channel c is closed and empty: a recv() there never completes ('for await' ends there instead)"
    ]


WAITS_ON_A_LATER_INSTANCE = """buffer o: i32[2] = zeros;
signal go;
group gg for g in 0..2 {
    task t { if g == 0 { go.wait().await; } else { go.set(); } o[g] = 1; }
}
"""


def test_a_timeout_says_why_a_group_instance_or_a_task_never_started() -> None:
    # gg[0] waits for gg[1], which waits for a block that gg[0] holds, and a task for a warp
    # that it holds: the report said only "not started", as if nothing kept them
    from gasync.runtime.errors import RunTimeoutError

    src = WAITS_ON_A_LATER_INSTANCE + "task late { o[1] = 2; }\n"
    with pytest.raises(RunTimeoutError) as info:
        gasync.compile_source(src, "g.gasync").run(backend="sim", timeout=3, executors=1)
    lines = str(info.value).splitlines()
    assert "  task t in group gg[1] not started" in lines
    notes = [n.message for n in info.value.notes if not n.span]
    assert (
        "group gg had instances not started: a block runs one instance of a group at a time and keeps it "
        "until it ends, and every block held one (the run had 1 block); an instance that waits on a later "
        "instance of its group (through a global channel, signal or shared scalar) never ends"
    ) in notes
    assert (
        "task late had not started: a group instance keeps its block's warps until it ends, and only a "
        "block's spare warps run ungrouped tasks meanwhile (more --executors give more)"
    ) in notes


def _deadlock(src: str) -> DeadlockError:
    """The deadlock a simulated run of ``src`` ends in."""
    with pytest.raises(DeadlockError) as info:
        gasync.compile_source(src, "d.gasync").run(backend="sim", timeout=60)
    return info.value
