"""Programs that deadlock, and the lines every executor must name them with.

The simulator (tests/sim/test_async_sim.py) and the reference interpreter
(tests/reference/) both report each one with exactly these lines.
"""

from __future__ import annotations

HEADER = "deadlock: no task can make progress, and nothing can wake these:"
DEADLOCKS = {
    "two_tasks_receive_from_each_other": (
        """
        channel a: i32[2];
        channel b: i32[2];
        task x { let v = a.recv().await; b.send(v).await; }
        task y { let v = b.recv().await; a.send(v).await; }
        """,
        ["task x waits on recv from channel a", "task y waits on recv from channel b"],
    ),
    "signal_nobody_sets": (
        """
        signal s;
        buffer o: i32[1] = zeros;
        task w { s.wait().await; o[0] = 1; }
        """,
        ["task w waits on signal s"],
    ),
    "only_some_instances_wait": (
        """
        signal s;
        buffer o: i32[4] = zeros;
        task w for i in 0..4 {
            if i % 2 == 1 { s.wait().await; }
            o[i] = 1;
        }
        """,
        ["task w[1, 3] waits on signal s"],
    ),
    "send_on_a_full_channel_nobody_drains": (
        """
        channel c: i32[2];
        task p { for k in 0..5 { c.send(k).await; } }
        task q { if false { let v = c.recv().await; } }
        """,
        ["task p waits on send on channel c (full)"],
    ),
    "a_counted_channels_receivers_stop_early": (
        # (codegen/counted.py: the receivers compute the values, and the sender still waits for room)
        """
        channel c: i64[4];
        buffer o: i64[64] = zeros;
        task p {
            for t in 0..64 { c.send(t).await; }
            c.close();
        }
        task q for w in 0..2 {
            for await v in c {
                o[v] = v + 1;
                if v >= 10 { break; }
            }
        }
        """,
        ["task p waits on send on channel c (full)"],
    ),
    "recv_after_close_on_an_empty_channel": (
        """
        channel c: i32[2];
        buffer o: i32[2] = zeros;
        task p {
            c.send(1).await;
            c.close();
            o[0] = c.recv().await;
            o[1] = c.recv().await;
        }
        """,
        ["task p waits on recv from channel c (closed)"],
    ),
    "task_after_a_deadlocked_one_not_started": (
        """
        signal s;
        buffer o: i32[1] = zeros;
        task w { s.wait().await; }
        task later after w { o[0] = 1; }
        """,
        ["task w waits on signal s", "task later not started: it runs after w"],
    ),
    "a_select_over_two_closed_empty_channels": (
        """
        channel d: i64[1];
        channel e: i64[1];
        buffer out: i64[2] = zeros;
        task j { select { v = d.recv() => { out[0] = v; } w = e.recv() => { out[1] = w; } } }
        task k { d.close(); e.close(); }
        task k2 after j { d.send(1).await; e.send(2).await; }
        """,
        [
            "task j waits on recv from channel d (closed) and recv from channel e (closed)",
            "task k2 not started: it runs after j",
        ],
    ),
    "a_select_over_a_signal_and_a_full_channel": (
        """
        signal s;
        channel c: i32[1];
        task f { c.send(1).await; }
        task j after f { select { _ = s.wait() => { } _ = c.send(2) => { } } }
        task r after j { let v = c.recv().await; }
        """,
        ["task j waits on signal s and send on channel c (full)", "task r not started: it runs after j"],
    ),
    "a_join_names_only_what_is_left": (
        """
        channel d: i32[1];
        channel e: i32[1];
        signal s;
        buffer out: i32[2] = zeros;
        task j { let (a, b, _) = join(d.recv(), e.recv(), s.wait()).await; out[0] = a + b; }
        task k { d.send(7).await; }
        task m after j { e.send(1).await; s.set(); }
        """,
        ["task j waits on recv from channel e and signal s", "task m not started: it runs after j"],
    ),
}
