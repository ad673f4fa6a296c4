"""Programs of groups whose tasks poll on all 32 lanes of their warps (codegen/warppoll.py), with
what each must compute: the simulator's tests (tests/sim/test_warppoll_sim.py) and the GPU's
(tests/gpu/test_warppoll_gpu.py) run the same ones."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import gasync
from gasync.runtime.options import Result

ROOT = Path(__file__).resolve().parent.parent
ALL_LANES = "All 32 lanes poll it"  # the pinned loop's comment where they do (codegen/groupkernel.py)


def matmul() -> gasync.Program:
    """The sample, small: 4 group instances of 8 x 8 tiles."""
    return gasync.compile(ROOT / "samples" / "tiled_matmul.gasync", defines={"N": 16, "T": 8})


def matmul_check(res: Result) -> None:
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
ADDS_OUT = [35 + 15_000, 35 + 15_000]  # acc after each value: 1, 3, 6, 10, 15; out: their sum, then 1000 * 15

# an atomic that is a whole statement is lane 0's (its old value shuffled to every lane); one
# inside a larger expression keeps the group on the lane-0 poll
ATOMICS = """\
buffer out: i64[4] = zeros;
shared total: i64 = 0;
shared tickets: u64 = 0;
group gg for g in 0..2 {
    local channel c: i64[2];
    task p { for k in 0..3 { c.send(k).await; } c.close(); }
    task q {
        for await v in c { total.fetch_add(v); }
        let t = tickets.fetch_add(1);
        out[g] = 10 + (t as i64);
        let sum = total.load();
        out[2 + g] = sum;
    }
}
"""
NESTED = ATOMICS.replace("out[g] = 10 + (t as i64);", "out[g] = 10 + (tickets.fetch_add(1) as i64);")


def atomics_check(res: Result) -> None:
    assert int(res.shared["total"]) == 2 * (0 + 1 + 2) and int(res.shared["tickets"]) == 2
    assert sorted(res.buffers["out"][:2].tolist()) == [10, 11]  # one ticket each, 0 and 1


# a fn without loops gives the same on every lane; one with a loop may give up at the deadline
# on one lane and not another, so its caller's group keeps the lane-0 poll
CALLS = """\
buffer out: i64[2] = zeros;
fn twice(x: i64) -> i64 { if x > 100 { return 0; } return 2 * x; }
fn summed(n: i64) -> i64 { let s: i64 = 0; for k in 0..n { s = s + k; } return s; }
group gg for g in 0..2 {
    local channel c: i64[2];
    task p { c.send((g as i64) + 20).await; c.close(); }
    task q { for await v in c { out[g] = twice(v) + CALL; } }
}
"""
CALLED = {"twice(1)": (True, [42, 44]), "summed(4)": (False, [46, 48])}  # (on all lanes, out)

# a loop that never awaits looks at the deadline now and then
SPINS = """\
buffer flag: i64[1] = zeros;
buffer out: i64[1] = zeros;
group gg {
    local channel c: i64[1];
    task p { while flag[0] == 0 { out[0] = out[0] + 1; } c.send(1).await; }
    task q { let v = c.recv().await; out[0] = v; }
}
"""
