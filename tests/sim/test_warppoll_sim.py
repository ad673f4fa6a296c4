"""A group task's poll on all 32 lanes of its warp (codegen/warppoll.py) on the simulator: its
parallel loops run inside it, what must happen once happens once, and it gives up at the
deadline on every lane together."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gasync
from gasync.codegen import warppoll
from gasync.runtime.errors import RunTimeoutError

pytestmark = [pytest.mark.sim]

ROOT = Path(__file__).resolve().parents[2]


def _matmul() -> gasync.Program:
    """The sample, small: 4 group instances of 8 x 8 tiles."""
    return gasync.compile(ROOT / "samples" / "tiled_matmul.gasync", defines={"N": 16, "T": 8})


@pytest.mark.timeout(240)
def test_a_pipeline_of_local_channels_polls_on_all_lanes_its_loops_inside_the_poll() -> None:
    program = _matmul()
    src = program.generated.source
    loader = src[src.index("def poll_loader(") : src.index("def poll_compute(")]
    # no FORK, no argument row: the tile's copy is a call in the poll, then the lanes meet
    assert "rc = 2  # FORK" not in loader and "PARGS" not in loader
    assert "par_1(w, lane, int64(int64(0)), int64((int64(8) * int64(8))), v_s_1, v_row0, v_k0, v_col0, " in loader
    assert "def par_1(w, lane, lo, hi, v_s_1, v_row0, v_k0, v_col0, G, L):" in src
    assert "All 32 lanes poll it" in src and "run_parallel_mm(command" not in src
    res = program.run(backend="sim", timeout=120)
    a, b = res.buffers["a"], res.buffers["b"]
    np.testing.assert_allclose(res.buffers["c"], a @ b, rtol=1e-5)


# a store in the poll that reads what it writes (out[g] += ..., acc[0] += ...), between awaits
# of a local channel: made once, by lane 0, each lane reading it back after the lanes meet
ADDS = """\
buffer out: i64[2] = zeros;
group gg for g in 0..2 {
    local buffer acc: i64[1];
    local channel c: i64[2];
    task p { for k in 0..5 { c.send(k).await; } c.close(); }
    task q {
        for await v in c { acc[0] += v + 1; out[g] += acc[0]; }
        out[g] += 1000 * acc[0];
    }
}
"""


@pytest.mark.timeout(240)
def test_a_store_that_reads_its_own_word_adds_once_in_a_poll_on_all_lanes() -> None:
    program = gasync.compile_source(ADDS, "adds.gasync")
    assert "if lane == 0:  # once (codegen/warppoll.py)" in program.generated.source
    res = program.run(backend="sim", timeout=120)
    # acc after each value: 1, 3, 6, 10, 15; out: their sum, then 1000 * 15
    assert res.buffers["out"].tolist() == [35 + 15_000, 35 + 15_000]


# an atomic outside the loops must happen once: the group keeps the lane-0 poll
EFFECTS = """\
buffer out: i64[2] = zeros;
shared total: i64 = 0;
group gg for g in 0..2 {
    local channel c: i64[2];
    task p { for k in 0..3 { c.send(k).await; } c.close(); }
    task q { for await v in c { total.fetch_add(v); } out[g] = 1; }
}
"""


@pytest.mark.timeout(240)
def test_a_group_with_an_effect_outside_its_loops_keeps_the_lane_0_poll() -> None:
    program = gasync.compile_source(EFFECTS, "effects.gasync")
    src = program.generated.source
    assert "All 32 lanes poll it" not in src and "dgroups.lch_try_recv(" in src
    res = program.run(backend="sim", timeout=120)
    assert res.buffers["out"].tolist() == [1, 1]
    assert int(res.shared["total"]) == 2 * (0 + 1 + 2)


SPINS = """\
buffer flag: i64[1] = zeros;
buffer out: i64[1] = zeros;
group gg {
    local channel c: i64[1];
    task p { while flag[0] == 0 { out[0] = out[0] + 1; } c.send(1).await; }
    task q { let v = c.recv().await; out[0] = v; }
}
"""


@pytest.mark.timeout(240)
def test_a_poll_on_all_lanes_gives_up_at_the_deadline_on_every_lane_together() -> None:
    # a loop that never awaits looks at the deadline now and then: lane 0 looks, every lane
    # learns (dl.overdue_warp); one lane giving up alone would leave the others at a meeting
    program = gasync.compile_source(SPINS, "spins.gasync")
    assert warppoll.OVERDUE_WARP in program.generated.source
    with pytest.raises(RunTimeoutError) as info:
        program.run(backend="sim", timeout=2)
    assert "timeout of 2s" in str(info.value)
