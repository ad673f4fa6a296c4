"""Which sends look at their next slot early (codegen/ends.py, early_looks; runtime/devicechan.py,
chan_look): a lone sender of a channel no task closes, in a poll that also receives, looks as
the receive completes, and the send takes that look instead of loading the slot's sequence.
The values are checked on every backend by the contract cases, the channel property test and
the ping-pong run below; this checks the choice, from the generated code."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

import gasync

# B2's program (the benchmark's own): a sends on ping and receives on pong, b the other way
PINGPONG = (Path(__file__).parents[2] / "bench" / "programs" / "b2_pingpong.gasync").read_text()


def poll(text: str, task: str) -> str:
    src = gasync.compile_source(text, "<looks>").source
    m = re.search(rf"^def poll_{task}\(.*?(?=^@cuda\.jit|\Z)", src, re.M | re.S)
    assert m is not None
    return re.sub(r"\bG_\d+\((?:G\.\w+(?:, )?)*\)", "G", m.group(0))  # G's parts as G (codegen/narrow.py)


def sends(code: str, chan: str) -> set[str]:
    """The early look each try of a send on ``chan`` passes (before the free it may make first)."""
    owed = r"(?:dsync\.NO_FREE|\(CH_\w+, CAP_\w+, HOW_\w+\)), [\w.]+"
    return set(re.findall(rf"dsync\.chan_try_send\(G\.chan, CH_{chan}, .*, (\w+|int64\(-1\)), {owed}\)$", code, re.M))


def test_each_pingpong_task_looks_at_its_sends_slot_as_its_receive_completes() -> None:
    a, b = poll(PINGPONG, "a"), poll(PINGPONG, "b")
    assert "seen_ping = int64(-1)" in a and "seen_pong = int64(-1)" in b
    # after the first try's success; after the wait in place, the look the wait took in its turns
    assert a.count("seen_ping = dsync.chan_look(G.chan, CH_ping, CAP_ping)") == 1
    assert b.count("seen_pong = dsync.chan_look(G.chan, CH_pong, CAP_pong)") == 1
    wait = "await_in_place(0, CH_pong, CAP_pong, LONE_RECV_pong, -1, w, G, HOW_pong, CH_ping, CAP_ping, rv_pong, 0, "
    assert wait in a
    assert "seen_ping = dsync.spin_look(G.chan, CH_ping, CAP_ping, rv_pong)" in a
    assert "seen_pong = dsync.spin_look(G.chan, CH_pong, CAP_pong, rv_ping)" in b
    # a send's wait in place takes no look
    assert (
        "await_in_place(1, CH_ping, CAP_ping, LONE_SEND_ping, -1, w, G, HOW_ping, -1, 1, G.exec.SCRATCH_I, w, False)"
        in a
    )
    assert sends(a, "ping") == {"seen_ping"} and sends(b, "pong") == {"seen_pong"}
    assert "seen_pong" not in a and "seen_ping" not in b  # a receive end looks at nothing


def test_a_channel_that_a_task_closes_is_not_looked_at_early() -> None:
    # a send seen free before a close would then land after it: the send loads its slot
    text = PINGPONG.replace("out[1] = got;", "out[1] = got;\n    pong.close();")
    assert text != PINGPONG
    b = poll(text, "b")
    assert "chan_look" not in b and sends(b, "pong") == {"int64(-1)"}
    assert sends(poll(text, "a"), "ping") == {"seen_ping"}


def test_a_channel_with_two_senders_or_a_poll_without_receives_is_not_looked_at_early() -> None:
    two = PINGPONG + "task c { pong.send(0).await; }\n"
    assert "chan_look" not in poll(two, "b") and sends(poll(two, "b"), "pong") == {"int64(-1)"}
    only = (
        "buffer out: i32[1] = zeros;\nchannel c: i32[1];\n"
        "task s { for k in 0..4 { c.send(k).await; } }\n"
        "task r { for k in 0..4 { let v = c.recv().await; out[0] = v; } }\n"
    )
    assert "chan_look" not in poll(only, "s")


def test_the_pingpong_with_early_looks_computes_its_values_on_the_simulator() -> None:
    program = gasync.compile_source(PINGPONG, "<looks>")
    out = program.run(backend="sim", inputs={"reps": np.array([40], np.int64)}, timeout=120).buffers["out"]
    assert out.tolist() == [sum(k + 1 for k in range(40)), 40]  # a sums b's replies k + 1; b counts


def test_the_pingpong_waiting_in_place_computes_its_values_on_the_simulator() -> None:
    # two executors, one a task: each receive waits in place, and the wait takes the early look
    program = gasync.compile_source(PINGPONG, "<looks>")
    run = program.run(backend="sim", inputs={"reps": np.array([40], np.int64)}, timeout=120, executors=2)
    assert run.buffers["out"].tolist() == [sum(k + 1 for k in range(40)), 40]
    assert run.stats["waits_in_place"] > 0
