"""B2's hand-off built up from the hand-written limit, one piece of gasync's protocol at a time
(bench/NOTES.md, the twenty-first session: three counted changes to B2 missed, and Nsight Compute
shows an atomic round trip waited for right after each exchange). Each variant is a ping-pong
of two warps over two one-slot channels, in global memory; us per hand-off, one process:

- ``store``: wait for the in-slot's sequence with relaxed loads, publish the out-slot's with a
  relaxed store (the floor: no frees, nothing waited for but the value);
- ``exch``: publish with an exchange whose old word is tested at once (a bell end's ring, where
  ptxas puts its wait);
- ``free``: and the receive frees its slot with an exchange tested at once, and the send waits
  for its slot to be free (its look loaded beside the sequence in the wait's turns, as gasync's
  early look is; loaded again only where that look saw it taken);
- ``free+try``: and one load of the in-slot before waiting (the receive's first try);
- ``free+work N``: and N dependent integer steps between seeing a value and publishing the
  reply (the poll's own path; N a run-time value, so a loop as in the generated code);
- ``all N``: every piece.

Placement ``cross`` (two blocks of one warp; the GPU) or ``block`` (one block of two warps; the
simulator runs blocks one after another). Every wait is bounded (a side that waits ``LIMIT``
looks records it and stops). tests/bench/test_handoff_parts_sim.py runs each variant on the
simulator for its values.

Usage on the device: python3 scripts/handoff_parts_probe.py [ROUNDS] [--placement cross|block]
"""

from __future__ import annotations

import argparse
import statistics
import time
from functools import cache
from typing import Any

import numpy as np
from numba import cuda, int64

LIMIT = 1 << 22
SEQ = 2  # words: [side 0's out-slot sequence, side 1's out-slot sequence]
VARIANTS = ("store", "exch", "free", "free+try", "free+work 64", "free+work 256", "all 128")


def pieces(variant: str) -> tuple[bool, bool, bool, int]:
    """(publish by exchange, frees, first try, work steps) of ``variant``."""
    work = int(variant.split()[-1]) if variant[-1].isdigit() else 0
    everything = variant.startswith("all")
    frees = everything or variant.startswith("free")
    return (variant != "store", frees, everything or variant == "free+try", work)


@cache
def kernel(variant: str) -> Any:
    """The ping-pong kernel of ``variant``: (seq, free, rounds, err, zero, work) -> None."""
    from gasync.runtime.devicelib import ld
    from gasync.runtime.order import exch, st_relaxed

    by_exch, frees, first_try, _ = pieces(variant)

    @cuda.jit
    def pingpong(seq, free, rounds, err, zero, work):  # type: ignore[no-untyped-def]
        # side s sends on channel s (its out-slot: seq[s]) and receives on channel 1 - s; value t of
        # channel c is present while seq[c] == 2t + 1; free[c] == 2t means its slot takes value t
        side = cuda.blockIdx.x if cuda.gridDim.x == 2 else cuda.threadIdx.x // 32
        if cuda.threadIdx.x % 32 != 0:
            return
        other = 1 - side
        rang = int64(0)
        x = int64(side + 1)
        look = int64(0)  # the send's slot as the last wait saw it (gasync's early look, taken in the turns)
        for k in range(rounds):
            # side 0 sends first: its turn k sends value k, then receives the reply k
            for step in range(2):
                sending = (step == 0) == (side == 0)
                if sending:
                    if frees and look != 2 * k:  # the send's slot must be free for value k
                        n = 0
                        while ld(free, side) != 2 * k:
                            n += 1
                            if n >= LIMIT:
                                err[side] = 1 + 2 * k
                                return
                    for _ in range(work):
                        x = x * int64(6364136223846793005) + int64(1442695040888963407)
                    val = int64(2 * k + 1) + (x & zero)
                    if by_exch:
                        old = exch(seq, side, val)
                        if old & int64(1) << 62:  # the ring: a waiting end's bit (never set here)
                            rang += 1
                    else:
                        st_relaxed(seq, side, val)
                else:
                    if first_try and ld(seq, other) == 2 * k + 1:  # (a branch on it: its load is waited for)
                        rang += 1
                    n = 0
                    while True:
                        if frees:  # in flight with the sequence's load
                            look = ld(free, side)
                        if ld(seq, other) == 2 * k + 1:
                            break
                        n += 1
                        if n >= LIMIT:
                            err[side] = 2 + 2 * k
                            return
                    if frees:
                        old = exch(free, other, int64(2 * (k + 1)))
                        if old & int64(1) << 62:
                            rang += 1
        err[2 + side] = rang + x * zero

    return pingpong


def run(variant: str, rounds: int, blocks: int) -> float:
    """Seconds per hand-off of one checked run."""
    seq = cuda.to_device(np.zeros(SEQ, np.int64))
    free = cuda.to_device(np.zeros(2, np.int64))
    err = cuda.to_device(np.zeros(4, np.int64))
    work = pieces(variant)[3]
    threads = 32 if blocks == 2 else 64
    cuda.synchronize()
    t0 = time.perf_counter()
    kernel(variant)[blocks, threads](seq, free, np.int64(rounds), err, np.int64(0), np.int64(work))
    cuda.synchronize()
    elapsed = time.perf_counter() - t0
    got = err.copy_to_host()
    if got[0] or got[1]:
        raise AssertionError(f"{variant}: a side waited too long ({got[:2].tolist()})")
    if seq.copy_to_host().tolist() != [2 * rounds - 1, 2 * rounds - 1]:
        raise AssertionError(f"{variant}: the sequences ended at {seq.copy_to_host().tolist()}")
    return elapsed / (2 * rounds)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rounds", nargs="?", type=int, default=20000)
    ap.add_argument("--placement", choices=("cross", "block"), default="cross")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    blocks = 2 if args.placement == "cross" else 1
    for variant in VARIANTS:
        run(variant, min(args.rounds, 100), blocks)  # compile, untimed
        samples = [run(variant, args.rounds, blocks) for _ in range(args.reps)]
        print(f"{variant:16s} {statistics.median(samples) * 1e6:7.3f} us/hand-off ({args.placement})")


if __name__ == "__main__":
    main()
