"""What a poll's frame round trip costs a pinned warp (bench/NOTES.md, "a pinned task's frame in
shared memory"): does a global store leave its line in L1, so that the next poll's restore hits?

One warp, lane 0, a chain of N dependent steps timed with ``%globaltimer`` (``dl.now_ns``); each step stores a word
and loads its neighbour in the same line (another address, so the compiler cannot forward the
store; the next step's address depends on the value loaded, through a mask that is 0 at run
time), in four kinds:
    global   store to global memory, then load beside it (a poll's spill, then the next restore)
    l1       load a global word that was loaded before and never stored (an L1 hit)
    l2       load a global word with ld.cg (L1 bypassed: an L2 round trip)
    shared   store to shared memory, then load beside it (a frame in shared memory)
Nanoseconds per step each. If ``global`` is near ``l2``, a store evicts its line from L1 and every
restore after a spill is an L2 round trip; near ``l1``, the frame's latency is small.
Usage (device machine): python3 scripts/frame_probe.py
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int64

from gasync.runtime import devicelib as dl

STEPS = 4096
WORDS = 64


@cuda.jit
def chain(kind, mask, words, out):
    sh = cuda.shared.array(WORDS, int64)
    if cuda.threadIdx.x != 0:
        return
    for j in range(WORDS):
        sh[j] = 0
        words[j] = 0
    k = int64(0)
    acc = int64(0)
    for j in range(WORDS):  # warm L1 with every word
        acc += words[j]
    t0 = dl.now_ns()
    for i in range(STEPS):
        j = (k + i) % WORDS
        if kind == 0:
            words[j] = i
            k = words[j ^ 1] & mask  # 0, but only known after the load
        elif kind == 1:
            k = (words[j] + acc) & mask
        elif kind == 2:
            k = (cuda.ldcg(words, j) + acc) & mask
        else:
            sh[j] = i
            k = sh[j ^ 1] & mask
    out[kind] = (dl.now_ns() - t0) * 1000 // STEPS + k  # picoseconds a step


def main() -> None:
    words = cuda.to_device(np.zeros(WORDS, np.int64))
    out = cuda.to_device(np.zeros(4, np.int64))
    names = ("global store, then load", "l1 hit", "l2 (ld.cg)", "shared store, then load")
    for kind in range(4):
        chain[1, 32](kind, 0, words, out)
        chain[1, 32](kind, 0, words, out)  # the second: compiled and warm
    cuda.synchronize()
    got = out.copy_to_host()
    dev = cuda.get_current_device()
    print(f"frame probe on {dev.name}: ns per dependent step ({STEPS} steps, lane 0 of one warp)")
    for name, ps in zip(names, got, strict=True):
        print(f"  {name:26s} {int(ps) / 1000:8.1f}")


if __name__ == "__main__":
    main()
