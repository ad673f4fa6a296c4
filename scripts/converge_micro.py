"""Small Numba kernels with the shape of a pinned warp's loop (codegen/groupkernel.py): lane 0
works alone, the warp meets at ``syncwarp``, reads the command lane 0 left in memory, and all
lanes run a "parallel loop" that records ``popc(activemask())``: ``python3
scripts/converge_micro.py`` on the GPU prints, for each shape, the lanes seen running the loop
together (32 alone: the warp merged; 1 and 31: it stayed split, as scripts/converge_probe.py
measured in the generated kernel). Each shape adds one thing the generated loop has."""

from __future__ import annotations

import collections
import sys

import numpy as np
from numba import cuda, int64

ROUNDS = 64


def kernels():  # type: ignore[no-untyped-def]
    """The shapes: lane 0's work between meetings (a device function of the warp's index and
    turn, giving the command), and whether the run's end leaves the loop by return or break."""

    @cuda.jit(device=True)
    def plain(cmd, w, r):
        return int64(2) if r < ROUNDS else int64(-1)

    @cuda.jit(device=True)
    def napping(cmd, w, r):
        n = 0
        while n < 4 and cmd[w] != 7:
            cuda.nanosleep(32)
            n += 1
        return int64(2) if r < ROUNDS else int64(-1)

    @cuda.jit(device=True)
    def breaking(cmd, w, r):
        while True:  # a state machine's loop, left by breaks
            if r >= ROUNDS:
                return int64(-1)
            if cuda.atomic.cas(cmd, w, cmd[w], cmd[w]) >= -100:
                return int64(2)

    def shaped(work, by_break):  # type: ignore[no-untyped-def]
        @cuda.jit
        def k(cmd, hist):
            lane = cuda.threadIdx.x % 32
            w = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) // 32
            r = 0
            while True:
                if lane == 0:
                    cmd[w] = work(cmd, w, r)
                cuda.syncwarp()
                c = cmd[w]
                if c == -1:
                    if by_break:
                        break
                    return
                if c > 0:
                    cuda.atomic.add(hist, cuda.popc(cuda.activemask()), 1)
                cuda.syncwarp()
                r += 1
            hist[0] += 0

        return k

    return {
        "plain": shaped(plain, False),
        "napping": shaped(napping, False),
        "breaking": shaped(breaking, False),
        "leaving_by_break": shaped(plain, True),
    }


def main() -> int:
    for name, k in kernels().items():
        cmd = cuda.to_device(np.zeros(8, np.int64))
        hist = cuda.to_device(np.zeros(33, np.int64))
        k[2, 128](cmd, hist)
        h = hist.copy_to_host()
        seen = collections.Counter({n: int(h[n]) for n in range(33) if h[n]})
        print(f"{name}: lanes together {dict(seen)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
