"""The benchmarks of groups (issue 14): B7, the staged pipeline, and B8, a tiled matrix product.

B7 is y = 2x + 1 over 2^28 f32 through shared memory (bench/programs/b7_staged.gasync:
loader warps and compute warps of one block per group instance) beside the
hand-written grid-stride and per-warp contiguous kernels, as B4 and B5 are
(suite.throughput_rows). B8 is samples/tiled_matmul.gasync at N x N with T = 32
beside a hand-written Numba kernel of the same tiling: 32 x 32 tiles of A and B
staged in shared memory, one thread per element of C's tile. Both give gasync's
throughput divided by the best hand-written kernel's (bench/summary.py).
"""

from __future__ import annotations

import time
from functools import cache
from typing import Any

import baselines
import numpy as np
from numba import cuda, float32
from suite import (
    PROGRAMS,
    ROOT,
    UNCHECKED,
    Config,
    GasyncCase,
    Row,
    checks_note,
    measured,
    throughput_rows,
    unchecked,
)

import gasync

MATMUL = ROOT / "samples" / "tiled_matmul.gasync"
T = 32  # B8's tile: the hand-written kernel's block is T x T threads


def b7(cfg: Config) -> list[Row]:
    """B7 itself (one group instance on each SM, tiles of 4,096 f32 as the language spec's group
    has them, 8 stages: 128 KB of dynamic shared memory), and shapes of the same program a user
    could choose, beside it in the same run (bench/NOTES.md: B7 is bound by each warp's serial
    chain a tile): 128 instances (B7 until the nineteenth session: 4 of the H200's 132 SMs
    idle), tiles of 1,024, tiles of 8,192 through 6 stages (192 KB; 4 until run 57), two
    instances an SM (tiles of 4,096 through 4 stages), and each group's tiles in one run (RUNS:
    as the per-warp contiguous kernel gives each warp a run of elements, not as grid-stride deals
    them)."""
    n = cfg.pick(1 << 28, 1 << 24)
    x, y = baselines.device_input(n)
    sms = int(cuda.get_current_device().MULTIPROCESSOR_COUNT)
    cases = []
    # One instance on each SM failed E0303 in bench/run.py's process on the H100 until the
    # group stuck check counted publishes and frees (bench/NOTES.md, nineteenth session).
    for groups, tile, stages, name, tag, runs in (
        (sms, 4096, 8, "gasync staged pipeline (group)", "", 0),
        (sms, 4096, 8, "variant: tiles in a run to each group", ", tiles in runs", 1),
        (128, 4096, 8, "variant: 128 group instances", ", 128 instances", 0),
        (sms, 1024, 8, "variant: tiles of 1,024", ", tiles of 1,024", 0),
        (sms, 8192, 6, "variant: tiles of 8,192", ", tiles of 8,192", 0),
        (2 * sms, 4096, 4, "variant: two group instances an SM", ", two an SM", 0),
    ):
        defines = {"N": n, "GROUPS": groups, "TILE": tile, "STAGES": stages, "L": 4, "C": 4, "RUNS": runs}
        prog = gasync.compile(PROGRAMS / "b7_staged.gasync", defines=defines)
        note = (
            f"{groups} group instances of 4 loader + 4 compute warps, {stages} stages of {tile:,} f32 in shared memory"
        )
        cases.append(GasyncCase(f"{name}, N={n:,}", prog, note, tag=tag, goal=">= 0.9" if not tag else ""))
    return throughput_rows("B7", cases, n, x, y, cfg)


@cache
def _matmul_kernel() -> Any:
    @cuda.jit
    def matmul_tiled(a, b, c):
        sa = cuda.shared.array((T, T), float32)
        sb = cuda.shared.array((T, T), float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * T + ty
        col = cuda.blockIdx.x * T + tx
        acc = float32(0.0)
        for kt in range(a.shape[1] // T):
            sa[ty, tx] = a[row, kt * T + tx]
            sb[ty, tx] = b[kt * T + ty, col]
            cuda.syncthreads()
            for kk in range(T):
                acc += sa[ty, kk] * sb[kk, tx]
            cuda.syncthreads()
        c[row, col] = acc

    return matmul_tiled


def numba_matmul(a: Any, b: Any, c: Any) -> float:
    """Seconds of one run (launch + sync) of the hand-written shared-memory kernel."""
    k = _matmul_kernel()
    n = a.shape[0]
    grid = (n // T, n // T)
    t0 = time.perf_counter()
    k[grid, (T, T)](a, b, c)
    cuda.synchronize()
    return time.perf_counter() - t0


def b8(cfg: Config) -> list[Row]:
    """B8 beside the hand-written kernel: each checked first, then timed round by round (each
    round runs gasync, the hand-written kernel and gasync unchecked once: suite.throughput_rows
    says why)."""
    n = cfg.pick(2048, 512)
    prog = gasync.compile(MATMUL, defines={"N": n, "T": T})
    off = unchecked(prog)
    a = np.random.default_rng(1).random((n, n)).astype(np.float32)
    b = np.random.default_rng(2).random((n, n)).astype(np.float32)
    da, db, dc = cuda.to_device(a), cuda.to_device(b), cuda.device_array((n, n), np.float32)
    numba_matmul(da, db, dc)  # JIT
    want = dc.copy_to_host()
    for variant in (prog, off):  # the same sums, maybe fused otherwise
        np.testing.assert_allclose(variant.run(backend="cuda", timeout=120.0).buffers["c"], want, rtol=1e-4)
    secs: dict[str, list[float]] = {"gasync": [], "hand": [], "unchecked": []}
    stats: dict[str, Any] = {}
    for _ in range(cfg.reps):
        stats = prog.run(backend="cuda", timeout=120.0).stats
        secs["gasync"].append(stats["kernel_ms"] / 1e3)
        secs["hand"].append(numba_matmul(da, db, dc))
        secs["unchecked"].append(off.run(backend="cuda", timeout=120.0).stats["kernel_ms"] / 1e3)
    flops = {k: [2 * n**3 / s / 1e9 for s in v] for k, v in secs.items()}
    note = f"{stats['executors']} executors; {(n // T) ** 2:,} group instances of a loader and a compute warp"
    gas = measured("B8", f"gasync tiled matmul (group), N={n:,}, T={T}", flops["gasync"], "GFLOP/s", note=note)
    hand_note = f"{T} x {T} threads per tile"
    ref = measured("B8", "numba shared-memory tiled matmul", flops["hand"], "GFLOP/s", note=hand_note)
    ratio = Row("B8", "gasync / best hand-written", gas.value / ref.value, "ratio", ">= 0.8", f"best: {ref.case}")
    case = f"{UNCHECKED}gasync tiled matmul (group), N={n:,}, T={T}"
    off_row = measured("B8", case, flops["unchecked"], "GFLOP/s", note=f"{note}; {checks_note(prog, off)}")
    return [gas, ref, ratio, off_row]


BENCHMARKS = {"B7": b7, "B8": b8}
