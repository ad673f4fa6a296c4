"""Which channel ends read the slots' sequences relaxed (codegen/shapes.py, calm ends).

A calm end's other end writes the sequences relaxed, and its tasks read nothing another task
writes; every other end acquires. The values are checked on every backend by the contract
cases and the channel property test; this checks the choice, from the generated constants.
"""

from __future__ import annotations

import re

import pytest

import gasync
from gasync.codegen import counted, generate

PINGPONG = """
buffer reps: i64[1] = input;
buffer out: i64[2] = zeros;
channel ping: i64[1];
channel pong: i64[1];
task a { let n = reps[0]; let acc: i64 = 0;
  for k in 0..n { ping.send(k).await; let v = pong.recv().await; acc = acc + v; } out[0] = acc; }
task b { let n = reps[0];
  for k in 0..n { let v = ping.recv().await; pong.send(v + 1).await; } out[1] = n; }
"""


def how(text: str, chan: str) -> set[str]:
    src = generate(gasync.compile_source(text, "<calm>").plan).source
    m = re.search(rf"^HOW_{chan} = \d+  # (.*) \(runtime", src, re.M)
    assert m is not None
    return set(m.group(1).split(" | "))


def test_ends_that_read_nothing_written_are_calm_both_ways() -> None:
    # (and no task closes either channel: OPEN, no end reads the closed flag)
    assert how(PINGPONG, "ping") == {"FLAGGED", "QUIET_FREE", "CALM_RECV", "CALM_SEND", "OPEN"}
    assert how(PINGPONG, "pong") == {"FLAGGED", "QUIET_FREE", "CALM_RECV", "CALM_SEND", "OPEN"}


def test_a_receiver_that_reads_what_a_task_writes_acquires() -> None:
    # b reads out[0], which a writes: its receives of ping must acquire (its L1 may be stale)
    text = PINGPONG.replace("out[1] = n; }", "out[1] = n + out[0]; }")
    ping = how(text, "ping")
    assert "FLAGGED" in ping and "CALM_RECV" not in ping
    assert "CALM_RECV" in how(text, "pong")  # a reads nothing written: still calm


def test_a_sender_whose_receivers_free_with_a_release_acquires(monkeypatch: pytest.MonkeyPatch) -> None:
    # the receivers write before their last receive: the frees release, so the sender acquires
    monkeypatch.setattr(counted, "COUNTED", False)  # (its values are counted otherwise: no ring)
    text = (
        "const N: i64 = 64;\nchannel c: i64[8];\nbuffer x: f32[N] = zeros;\nbuffer y: f32[N] = zeros;\n"
        "task s { for t in 0..N { c.send(t).await; } c.close(); }\n"
        "task r for w in 0..4 { for await t in c { y[t] = 2.0 * x[t]; } }\n"
    )
    bits = how(text, "c")
    assert "QUIET_FREE" not in bits and "CALM_SEND" not in bits
    assert "CALM_RECV" in bits  # the receivers read x, which no task writes
    assert "OPEN" not in bits  # s closes it


def test_a_close_in_a_called_fn_counts() -> None:
    text = PINGPONG.replace("task a {", "fn shut() { ping.close(); }\ntask a {").replace(
        "out[0] = acc; }", "shut(); out[0] = acc; }"
    )
    assert "OPEN" not in how(text, "ping")
    assert "OPEN" in how(text, "pong")
