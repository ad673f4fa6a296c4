"""Which channels are counted (codegen/counted.py): the receivers compute each value from a
ticket, the sender's loop only waits for room. Values on every backend: the contract cases
``counted_channel_*`` and the deadlock ``a_counted_channels_receivers_stop_early``."""

from __future__ import annotations

import pytest

import gasync
from gasync.codegen import generate
from gasync.codegen.shapes import ChannelShapes

HEAD = "const N: i64 = 64;\nchannel c: i64[4];\nbuffer out: i64[N] = zeros;\nbuffer x: i64[N] = zeros;\n"
SENDER = "task s { for t in 0..N { c.send(t * 3 + 1).await; } c.close(); }\n"
RECEIVER = "task r for w in 0..4 { for await v in c { out[(v - 1) / 3] = v; } }\n"


def counted(text: str) -> dict[str, tuple[int, int, int]]:
    plan = gasync.compile_source(HEAD + text, "<counted>").plan
    return {c: (k.start, k.count, k.need) for c, k in ChannelShapes.of(plan).counted.items()}


def test_a_loop_of_sends_of_its_variable_then_a_close_is_counted() -> None:
    assert counted(SENDER + RECEIVER) == {"c": (0, 64, 60)}
    text = SENDER.replace("0..N", "-3..N / 2") + RECEIVER
    assert counted(text) == {"c": (-3, 35, 31)}


def test_the_generated_receive_takes_a_ticket_and_computes_the_value() -> None:
    src = generate(gasync.compile_source(HEAD + SENDER + RECEIVER, "<counted>").plan).source
    assert "COUNT_c = 64" in src and "NEED_c = 60" in src
    assert "tk_rdy = dsync.counted_take(G.chan, CH_c)" in src
    assert "cv_rdy = int64(0 + tk_rdy)" in src
    assert "v_v = int64(int64((cv_rdy * 3 + 1)))" in src
    assert "dsync.counted_room(G.chan, CH_c, NEED_c)" in src
    assert "dsync.chan_try_send(" not in src and "chan_take_ticket(" not in src  # no ring on either side


@pytest.mark.parametrize(
    "sender, receiver",
    [
        # the sender's body has more than the loop and the close
        ("task s { let n = N; for t in 0..n { c.send(t).await; } c.close(); }\n", RECEIVER),
        ("task s { for t in 0..N { c.send(t).await; } }\n", RECEIVER),  # no close
        ("task s { for t in 0..N { c.send(t).await; } c.close(); out[0] = 1; }\n", RECEIVER),
        # the value loads, or may fault
        ("task s { for t in 0..N { c.send(x[t]).await; } c.close(); }\n", RECEIVER),
        ("task s { for t in 0..N { c.send(100 / (t + 1)).await; } c.close(); }\n", RECEIVER),
        # more than one instance sends
        ("task s for k in 0..2 { for t in 0..N { c.send(t).await; } c.close(); }\n", RECEIVER),
        # an after edge either way
        ("task z { out[0] = 1; }\ntask s after z { for t in 0..N { c.send(t).await; } c.close(); }\n", RECEIVER),
        (SENDER, RECEIVER + "task z after s { out[0] = 1; }\n"),
        # a receive that is not a for await
        (SENDER, "task r { let v = c.recv().await; out[0] = v; }\n"),
        (SENDER, "signal q;\ntask r { select { v = c.recv() => { out[0] = v; }, _ = q.wait() => {} } }\n"),
        (SENDER, RECEIVER + "task r2 { let v = c.recv().await; out[1] = v; }\n"),
    ],
)
def test_anything_else_keeps_the_ring(sender: str, receiver: str) -> None:
    assert counted(sender + receiver) == {}


def test_a_second_sender_or_closer_keeps_the_ring() -> None:
    assert counted(SENDER + RECEIVER + "task s2 { c.send(7).await; }\n") == {}
    assert counted(SENDER + RECEIVER + "task s2 { c.close(); }\n") == {}


def test_division_by_a_nonzero_literal_is_counted() -> None:
    assert counted(SENDER.replace("t * 3 + 1", "t / 2 + t % 3") + RECEIVER) == {"c": (0, 64, 60)}
