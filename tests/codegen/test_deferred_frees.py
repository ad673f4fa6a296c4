"""A hand-off's reply without memory round trips (codegen/ends.py; runtime/state.py, Deferred
frees): a lone receive takes its value into a register of its poll, a send keeps its value in
one, and a receive whose next await is a send on another channel leaves its slot's free to that
send, which makes it right before its publish. This checks which receives defer, from the
generated code, and that the values come out right on the simulator whichever way a run goes
(waiting in place, suspending, traced)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import gasync

PINGPONG = (Path(__file__).parents[2] / "bench" / "programs" / "b2_pingpong.gasync").read_text()

# r relays c to d with nothing between its receive and its send; q is slow, so d is often full
RELAY = """
const N: i64 = 40;
buffer out: i64[2] = zeros;
channel c: i64[1];
channel d: i64[1];
task p { for k in 0..N { c.send(k).await; } }
task r {
    loop {
        let v = c.recv().await;
        d.send(v * 2 + 1).await;
        if v == N - 1 { break; }
    }
}
task q {
    let acc: i64 = 0;
    for k in 0..N {
        let v = d.recv().await;
        let slow: i64 = 0;
        for j in 0..50 { slow = slow + j; }
        acc = acc + v + slow - 1225;
    }
    out[0] = acc;
}
"""


# r's send on d follows its receive of b (so it trusts the look that receive took), but a
# callee sent on d since r's receive of a took an older look: that look must not be trusted
CALLEE_SENDS = """
const N: i64 = 30;
buffer out: i64[1] = zeros;
channel a: i64[1];
channel b: i64[1];
channel d: i64[2];
async fn extra(v: i64) { d.send(v + 1000).await; }
task p { for k in 0..N { a.send(k).await; b.send(k).await; } }
task r {
    for k in 0..N {
        let x = a.recv().await;
        extra(x).await;
        let y = b.recv().await;
        d.send(y * 2).await;
    }
}
task q {
    let acc: i64 = 0;
    for k in 0..2 * N { let v = d.recv().await; acc = acc + v; }
    out[0] = acc;
}
"""


def poll(text: str, task: str) -> str:
    src = gasync.compile_source(text, "<frees>").source
    m = re.search(rf"^def poll_{task}\(.*?(?=^@cuda\.jit|\Z)", src, re.M | re.S)
    assert m is not None
    return m.group(0)


def deferred(code: str, chan: str) -> bool:
    takes = re.findall(rf"dsync\.chan_(?:try_recv|take)\(G\.chan, CH_{chan}, .*\)$", code, re.M)
    assert takes
    later = {t.endswith(", True)") for t in takes}
    assert len(later) == 1  # every take of the receive alike
    return later.pop()


def test_each_pingpong_task_leaves_its_receives_free_to_its_send() -> None:
    a, b = poll(PINGPONG, "a"), poll(PINGPONG, "b")
    # b: receive ping, then send pong; a: receive pong at its loop's end, its next turn sends ping
    assert deferred(b, "ping") and deferred(a, "pong")
    assert "ring_send_ping = cuda.local.array(2, int64)" in b
    assert "(CH_ping, CAP_ping, HOW_ping), ring_send_ping)" in b
    assert "(CH_pong, CAP_pong, HOW_pong), ring_send_pong)" in a
    # the value in a register, and the reply's value too
    assert "t_2 = int64(rv_ping[0])" in b and "SCRATCH_I[w]" not in b
    assert "sv_pong = int64(int64((v_v + 1)))" in b
    assert "dsync.chan_try_send(G.chan, CH_pong, CAP_pong, G.chan.CHI, (sv_pong if svok_pong else " in b


def test_the_send_that_follows_trusts_only_the_look_its_receive_took() -> None:
    r = poll(CALLEE_SENDS, "r")
    assert deferred(r, "b") and not deferred(r, "a")  # a's next await is a call
    # the look is forgotten as b's receive begins and as each send on d is tried
    assert re.search(r"seen_d = int64\(-1\)\n\s*took_rdy = dsync\.chan_try_recv\(G\.chan, CH_b,", r)
    assert re.search(r"sent_rdy = dsync\.chan_try_send\(G\.chan, CH_d, .*\n\s*seen_d = int64\(-1\)", r)


def test_a_receive_followed_by_a_loop_or_by_another_receive_frees_its_slot_itself() -> None:
    q = poll(RELAY, "q")  # its receive's next await is the next turn's receive
    assert not deferred(q, "d") and "chan_free" not in q
    loop = "let w: i64 = 0;\n for j in 0..v { w = w + j; }\n d.send(w).await;"
    work = RELAY.replace("d.send(v * 2 + 1).await;", loop)
    assert work != RELAY
    assert not deferred(poll(work, "r"), "c")  # a loop between: the slot is freed as the value is taken
    assert deferred(poll(RELAY, "r"), "c")


def test_a_channel_sent_on_twice_in_one_poll_keeps_no_value() -> None:
    twice = RELAY.replace("d.send(v * 2 + 1).await;", "d.send(v * 2 + 1).await;\n if v < 0 { d.send(v).await; }")
    assert twice != RELAY
    r = poll(twice, "r")
    assert "sv_d" not in r and "FI[fb_i + " in r


@pytest.mark.parametrize("run", [{}, {"executors": 1}, {"executors": 3}, {"trace": True}], ids=str)
def test_the_relay_computes_its_values_on_the_simulator(run: dict[str, int]) -> None:
    program = gasync.compile_source(RELAY, "<frees>")  # (traced: no wait in place, every wait suspends)
    out = program.run(backend="sim", timeout=120, **run).buffers["out"]
    assert int(out[0]) == sum(2 * k + 1 for k in range(40))


@pytest.mark.parametrize("executors", [1, 2])
def test_the_pingpong_computes_its_values_on_the_simulator(executors: int) -> None:
    program = gasync.compile_source(PINGPONG, "<frees>")
    run = program.run(backend="sim", inputs={"reps": np.array([30], np.int64)}, timeout=120, executors=executors)
    assert run.buffers["out"].tolist() == [sum(k + 1 for k in range(30)), 30]


@pytest.mark.parametrize("run", [{}, {"executors": 1}, {"executors": 3}, {"trace": True}], ids=str)
def test_a_callee_sending_between_look_and_send_keeps_every_value(run: dict[str, int]) -> None:
    out = gasync.compile_source(CALLEE_SENDS, "<frees>").run(backend="sim", timeout=120, **run).buffers["out"]
    assert int(out[0]) == sum(k + 1000 for k in range(30)) + sum(2 * k for k in range(30))


@pytest.mark.parametrize("executors", [1, 2])
def test_without_a_first_try_the_wait_tries_and_the_values_come_out(
    executors: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # chanpolls.TRY_FIRST off (a stage of bench/NOTES.md): where the executor may wait in place,
    # a lone receive goes straight to the wait, whose first turn is its try
    from gasync.codegen import chanpolls

    monkeypatch.setattr(chanpolls, "TRY_FIRST", False)
    program = gasync.compile_source(PINGPONG, "<frees>")
    # no try before the wait, whose first turn is the attempt (a busy executor gives up after it)
    assert "took_rdy = dsync.RECV_NONE  # the wait in place's first turn is the attempt\n" in program.source
    # (the wait's G: its part of the poll's, codegen/narrow.py)
    g = r"G(_\d+\([^)]*\))?"
    assert re.search(rf"LONE_RECV_ping, -1, w, {g}, HOW_ping, CH_pong, CAP_pong, rv_ping, 0, True\)", program.source)
    assert re.search(rf"LONE_SEND_pong, -1, w, {g}, HOW_pong, -1, 1, G.exec.SCRATCH_I, w, False\)", program.source)
    run = program.run(backend="sim", inputs={"reps": np.array([30], np.int64)}, timeout=120, executors=executors)
    assert run.buffers["out"].tolist() == [sum(k + 1 for k in range(30)), 30]
    out = gasync.compile_source(RELAY, "<frees>").run(backend="sim", timeout=120, executors=executors).buffers["out"]
    assert int(out[0]) == sum(2 * k + 1 for k in range(40))
