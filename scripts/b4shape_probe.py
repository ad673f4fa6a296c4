"""B4's work in its own shape, hand-written (bench/NOTES.md, the thirty-ninth session): is the GPU
time gasync's executors take over B4's 1,024 tiles (span ~0.254 ms on an H100, against 0.198 ms
for the hand-written per-warp kernel) the executor's, or the shape's: few warps (4-8 an SM), each
streaming one long range that starts at a power-of-two offset, with 16-byte loads eight deep?

Each case is one kernel: W warps, warp w streaming [w * PER, (w + 1) * PER) of y = 2x + 1 over
2^26 f32 with the generated map's loop (gasync.runtime.devicevec: eight 16-byte loads a lane, then
their stores), optionally starting its walk at turn (w * ROT) mod its turns and wrapping round, so
that streams that start at the same low address bits do not move through the memory system in step.
Timed as the bench times the hand-written kernels (bench/baselines.device_ms: CUDA events behind a
busy one-thread kernel, the launch call left out); median of 5 runs, in ms and GB/s.

Usage on the device: python3 scripts/b4shape_probe.py"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import numpy as np
from numba import cuda, float32

from gasync.runtime import devicevec as dv
from gasync.runtime import devicewarp as dw

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import baselines  # noqa: E402

N = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 26  # a smaller N for the simulator
GPU = N >> 20 != 0  # (the simulator's runs: one rep each, and a short hold: values, not times)
HOLD = 200_000 if GPU else 10  # the busy kernel's steps before each timed one (baselines.device_ms)
TURN = 32 * 4 * 8  # elements a warp moves a turn: 32 lanes x 4 floats x 8 loads in flight


@cuda.jit(device=True)
def walk(x, y, lo, turns, start, lane):
    """One warp's range [lo, lo + turns * TURN), turn ``start`` first and wrapping round."""
    for t in range(turns):
        tt = t + start
        if tt >= turns:
            tt -= turns
        b = lo + tt * TURN + lane * 4
        r0 = dv.ld_v4(x, b)
        r1 = dv.ld_v4(x, b + 128)
        r2 = dv.ld_v4(x, b + 256)
        r3 = dv.ld_v4(x, b + 384)
        r4 = dv.ld_v4(x, b + 512)
        r5 = dv.ld_v4(x, b + 640)
        r6 = dv.ld_v4(x, b + 768)
        r7 = dv.ld_v4(x, b + 896)
        two, one = float32(2.0), float32(1.0)
        dv.st_v4(y, b, (two * r0[0] + one, two * r0[1] + one, two * r0[2] + one, two * r0[3] + one))
        dv.st_v4(y, b + 128, (two * r1[0] + one, two * r1[1] + one, two * r1[2] + one, two * r1[3] + one))
        dv.st_v4(y, b + 256, (two * r2[0] + one, two * r2[1] + one, two * r2[2] + one, two * r2[3] + one))
        dv.st_v4(y, b + 384, (two * r3[0] + one, two * r3[1] + one, two * r3[2] + one, two * r3[3] + one))
        dv.st_v4(y, b + 512, (two * r4[0] + one, two * r4[1] + one, two * r4[2] + one, two * r4[3] + one))
        dv.st_v4(y, b + 640, (two * r5[0] + one, two * r5[1] + one, two * r5[2] + one, two * r5[3] + one))
        dv.st_v4(y, b + 768, (two * r6[0] + one, two * r6[1] + one, two * r6[2] + one, two * r6[3] + one))
        dv.st_v4(y, b + 896, (two * r7[0] + one, two * r7[1] + one, two * r7[2] + one, two * r7[3] + one))


@cuda.jit
def stream(x, y, per, rot, counter):
    """Warp w's own range [w * PER, (w + 1) * PER)."""
    lane = cuda.threadIdx.x % 32
    w = cuda.grid(1) // 32
    if w * per < x.size:
        turns = per // TURN
        walk(x, y, w * per, turns, (w * rot) % turns, lane)


@cuda.jit
def claimed(x, y, per, rot, counter):
    """Ranges of PER claimed one at a time from a counter (one atomic a claim, lane 0's, handed to
    the warp by a shuffle) until none is left: a hand-written work queue, B4's without a loader."""
    lane = cuda.threadIdx.x % 32
    w = cuda.grid(1) // 32
    turns = per // TURN
    tiles = x.size // per
    while True:
        t = 0
        if lane == 0:
            t = cuda.atomic.add(counter, 0, 1)
        t = dw.first(counter, w, lane, t)  # lane 0's claim in every lane (a shuffle on the GPU)
        if t >= tiles:
            return
        walk(x, y, t * per, turns, (w * rot) % turns, lane)


@cuda.jit
def zero(counter):
    counter[0] = 0


def timed(
    x: object, y: object, warps: int, warps_a_block: int, rot: int, per: int = 0, reps: int = 5 if GPU else 1
) -> float:
    """Median ms of W warps over N, each its own range (``per`` 0) or ranges of ``per`` claimed."""
    kernel = claimed if per else stream
    per = per or N // warps
    assert per % TURN == 0, (warps, per)
    blocks = -(-warps // warps_a_block)
    counter = cuda.to_device(np.zeros(1, np.int64))

    def launch() -> None:
        kernel[blocks, 32 * warps_a_block](x, y, np.int64(per), np.int64(rot), counter)

    launch()  # JIT, untimed
    got = baselines.device_ms(launch, reps, before=lambda: zero[1, 1](counter), hold=HOLD)
    return statistics.median(got)


def main() -> None:
    sms = getattr(cuda.get_current_device(), "MULTIPROCESSOR_COUNT", 1)  # the simulator's: none
    baselines._sm_count = lambda: sms
    x, y = baselines.device_input(N)
    ref = statistics.median(baselines.affine_device_ms(x, y, 9 if GPU else 1, "per-warp contiguous", hold=HOLD))
    gb = 2 * 4 * N / 1e6
    label = f"per-warp contiguous (bench's, {sms} SMs x 32 warps, 4 scalar loads a lane)"
    print(f"{label}: {ref:.4f} ms  {gb / ref:,.0f} GB/s")
    cases = [  # (label, warps, warps a block, rotated, a claimed range's length or 0)
        ("4,096 warps x 16,384 (32 an SM), blocks of 4", 4096, 4, 0, 0),
        ("4,096 warps x 16,384, rotated", 4096, 4, 1, 0),
        ("1,024 warps x 65,536 (B4's tiles), blocks of 4", 1024, 4, 0, 0),
        ("1,024 warps x 65,536, rotated", 1024, 4, 1, 0),
        ("512 warps x 131,072 (B4's probe), blocks of 4", 512, 4, 0, 0),
        ("512 warps x 131,072, rotated", 512, 4, 1, 0),
        ("2,048 warps x 32,768, blocks of 4", 2048, 4, 0, 0),
        ("2,048 warps x 32,768, rotated", 2048, 4, 1, 0),
        ("1,024 warps claiming 1,024 tiles of 65,536 (B4 without its loader)", 1024, 4, 0, 65536),
        ("4,224 warps claiming 1,024 tiles of 65,536 (B4's whole GPU)", 4224, 4, 0, 65536),
        ("4,224 warps claiming 1,024 tiles of 65,536, rotated", 4224, 4, 1, 65536),
    ]
    for label, warps, wab, rot, per in cases:
        # (a smaller N, the simulator's: as many warps and ranges in proportion, two claimers at least)
        warps = max(2 if per else 1, warps * N >> 26)
        per = max(TURN, per * N >> 26) if per else 0
        baselines.fill(y, -1.0)
        ms = timed(x, y, warps, wab, rot, per)
        baselines.check_affine(x, y, label)  # every element written, right
        print(f"{label}: {ms:.4f} ms  {gb / ms:,.0f} GB/s  ({ref / ms:.3f} of per-warp)")


if __name__ == "__main__":
    main()
