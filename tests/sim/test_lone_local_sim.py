"""A local channel's lone ends (codegen/shapes.py ``local_how``; runtime/state.py, groups): which
ends the plan finds lone, and programs whose lone ends claim with a store, on the simulator."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gasync
from gasync.codegen import generate
from gasync.codegen.groups import LCH_LANE0, LCH_LONE_RECV, LCH_LONE_SEND, LCH_NAMES, LCH_OPEN
from gasync.codegen.shapes import ChannelShapes

pytestmark = [pytest.mark.sim]

ROOT = Path(__file__).resolve().parents[2]

# one sender and one receiver a group instance, the sender closes: lone both ways, not open
CLOSED_PAIR = """\
const N: i64 = 40;
buffer out: i64[4] = zeros;
group pair for g in 0..2 {
    local channel c: i64[2];
    task a {
        for k in 0..N { c.send(k * 3 + (g as i64)).await; }
        c.close();
    }
    task b {
        let s: i64 = 0;
        let n: i64 = 0;
        for await v in c { s = s + v; n = n + 1; }
        out[2 * (g as i64)] = s;
        out[2 * (g as i64) + 1] = n;
    }
}
"""

# two senders (a task of two warps) and a lone receiver, one of whose receives is in a join
CROWD_TO_ONE = """\
buffer out: i64[2] = zeros;
group fan {
    local channel c: i64[1];
    local channel done: i64[1];
    task s for k in 0..2 {
        for j in 0..10 { c.send((k as i64) * 100 + (j as i64)).await; }
        done.send(1).await;
    }
    task r {
        let s: i64 = 0;
        for j in 0..20 { s = s + c.recv().await; }
        out[0] = s;
        let (x, y) = join(done.recv(), done.recv()).await;
        out[1] = x + y;
    }
}
"""


def _how(src: str) -> dict[str, int]:
    return ChannelShapes.of(gasync.compile_source(src, "t.gasync").plan).local_how


def test_the_plan_finds_lone_ends_open_rings_and_crowds() -> None:
    # no sender writes a local buffer in these two: lane 0 alone passes each slot (LCH_LANE0)
    assert _how(CLOSED_PAIR) == {"pair.c": LCH_LONE_SEND | LCH_LONE_RECV | LCH_LANE0}
    # task s has two warps an instance: no lone sender
    crowd = LCH_LONE_RECV | LCH_OPEN | LCH_LANE0
    assert _how(CROWD_TO_ONE) == {"fan.c": crowd, "fan.done": crowd}
    # the spec's loader writes its stages before it sends: every lane's writes go with the slot
    spec = ChannelShapes.of(gasync.compile(ROOT / "samples" / "staged_pipeline.gasync").plan).local_how
    assert spec == {"pipe.full": LCH_LONE_SEND, "pipe.free": LCH_LONE_RECV | LCH_OPEN}


def test_codegen_and_runtime_give_the_bits_one_meaning() -> None:
    from gasync.runtime import devicegroups as dg

    for name, bit in LCH_NAMES:
        assert getattr(dg, name) == bit, name


def test_generated_calls_name_the_bits() -> None:
    src = generate(gasync.compile_source(CLOSED_PAIR, "t.gasync").plan).source
    bits = "dgroups.LCH_LONE_SEND | dgroups.LCH_LONE_RECV | dgroups.LCH_LANE0)"
    assert src.count(bits) == 2  # the send and the receive
    assert "LCH_OPEN" not in src and "LCH_CLOSED_SEND" in src  # (a send may find it closed)
    crowd = generate(gasync.compile_source(CROWD_TO_ONE, "t.gasync").plan).source
    assert "LCH_OPEN" in crowd and "LCH_CLOSED_SEND" not in crowd  # open rings: no closed sends to count


@pytest.mark.timeout(240)
def test_lone_ends_hand_over_every_value_and_end_at_the_close() -> None:
    res = gasync.compile_source(CLOSED_PAIR, "t.gasync").run(backend="sim", timeout=200)
    want = [sum(k * 3 + g for k in range(40)) for g in range(2)]
    np.testing.assert_array_equal(res.buffers["out"], [want[0], 40, want[1], 40])


@pytest.mark.timeout(240)
def test_a_lone_receiver_takes_from_a_crowd_of_senders() -> None:
    res = gasync.compile_source(CROWD_TO_ONE, "t.gasync").run(backend="sim", timeout=200)
    np.testing.assert_array_equal(res.buffers["out"], [sum(range(10)) * 2 + 100 * 10, 2])


# lone ends of open rings both ways: every claim on all lanes (runtime/devicegroups.py,
# lch_claim_lanes); ``tile``'s writer sends on ``full``, so that ring keeps its mbarriers
STAGED_PAIR = """\
buffer out: i64[2] = zeros;
group duo {
    local buffer tile: i64[2, 64];
    local channel full: i64[2];
    local channel free: i64[2];
    task make {
        for k in 0..30 {
            let s = k % 2;
            if k >= 2 { let _f = free.recv().await; }
            parallel for i in 0..64 { tile[s, i] = k * 100 + i; }
            full.send(s).await;
        }
    }
    task take {
        let acc: i64 = 0;
        for k in 0..30 {
            let s = full.recv().await;
            acc = acc + tile[s, 63] - tile[s, 0];
            out[1] = out[1] + tile[s, 5];
            free.send(s).await;
        }
        out[0] = acc;
    }
}
"""


@pytest.mark.timeout(240)
def test_lone_ends_of_open_rings_claim_on_every_lane_with_and_without_mbarriers() -> None:
    assert _how(STAGED_PAIR) == {
        "duo.full": LCH_LONE_SEND | LCH_LONE_RECV | LCH_OPEN,
        "duo.free": LCH_LONE_SEND | LCH_LONE_RECV | LCH_OPEN | LCH_LANE0,
    }
    res = gasync.compile_source(STAGED_PAIR, "t.gasync").run(backend="sim", timeout=200)
    np.testing.assert_array_equal(res.buffers["out"], [30 * 63, sum(k * 100 + 5 for k in range(30))])
    path = ROOT / "bench" / "programs" / "b2_group.gasync"
    res = gasync.compile(path).run(backend="sim", inputs={"reps": np.array([25], np.int64)}, timeout=200)
    np.testing.assert_array_equal(res.buffers["out"], [sum(range(1, 26)), 25])
