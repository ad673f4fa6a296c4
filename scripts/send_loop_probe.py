"""The crediting sender's loop alone, hand-written: what one send costs without gasync's poll.

``python3 scripts/send_loop_probe.py [--sends 4096]`` on the GPU. One thread runs the loop
bench/NOTES.md counts for B4's loader: below its credit a send is the two tagged halves and
the sequence (``st.relaxed.gpu``, gasync's own runtime/order.py helpers) and its tail; every 8
sends it reads 8 slots' sequences at once, then ``fence.sc`` and the closed flag. No receiver:
the ring has a slot for every send. Prints us per send,
the kernel's time divided by the sends (median of 5, the launch included; a second size
shows the launch's share), beside gasync's ~0.75-0.85 us (scripts/channel_probe.py --shape
asleep). If the hand-written loop is several times faster, gasync's cost is in the poll's
code around the same operations (its size, its branches), not in the memory operations.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT.parent))  # the repository root is the package gasync

from numba import cuda, int64  # noqa: E402

from gasync.runtime.devicelib import ld  # noqa: E402
from gasync.runtime.order import fence_sc, st_relaxed  # noqa: E402

SLOT = 16  # words between two slots' sequences (runtime/state.py SLOT_WORDS: a line each)
TAG = (1 << 31) - 1


def make_loop(cap: int, strong: bool = True, fence: bool = True):  # type: ignore[no-untyped-def]
    """The loop for a ring of ``cap`` slots (a power of two, a constant, as gasync's CAP_c is);
    ``strong``: the stores as gasync makes them (st.relaxed.gpu), else plain; ``fence``: the
    credit read's fence.sc."""
    mask = cap - 1

    @cuda.jit
    def send_loop(seq, chi, chx, hht, closed, n):  # type: ignore[no-untyped-def]
        if cuda.threadIdx.x != 0:
            return
        pos = int64(0)
        credit = int64(0)
        for t in range(n):
            if pos >= credit:
                s0 = ld(seq, ((pos & mask) * SLOT))
                s1 = ld(seq, (((pos + 1) & mask) * SLOT))
                s2 = ld(seq, (((pos + 2) & mask) * SLOT))
                s3 = ld(seq, (((pos + 3) & mask) * SLOT))
                s4 = ld(seq, (((pos + 4) & mask) * SLOT))
                s5 = ld(seq, (((pos + 5) & mask) * SLOT))
                s6 = ld(seq, (((pos + 6) & mask) * SLOT))
                s7 = ld(seq, (((pos + 7) & mask) * SLOT))
                if fence:
                    fence_sc()
                if ld(closed, 0) != 0:
                    return
                free = int64(0)
                for k, s in enumerate((s0, s1, s2, s3, s4, s5, s6, s7)):
                    if free == k and s == 2 * (pos + k):
                        free += 1
                if free == 0:
                    return
                credit = pos + free
            slot = pos & mask
            tag = (2 * pos + 1) & TAG
            v = int64(t)
            lo, hi = (tag << 32) | (v & 0xFFFFFFFF), (tag << 32) | ((v >> 32) & 0xFFFFFFFF)
            if strong:
                st_relaxed(chi, slot, lo)
                st_relaxed(chx, slot, hi)
                st_relaxed(seq, slot * SLOT, 2 * pos + 1)
            else:
                chi[slot] = lo
                chx[slot] = hi
                seq[slot * SLOT] = 2 * pos + 1
            pos += 1
            hht[0] = pos

    return send_loop


def per_send(sends: int, cap: int, reps: int = 5, strong: bool = True, fence: bool = True) -> float:
    send_loop = make_loop(cap, strong, fence)
    seq = cuda.to_device((2 * np.arange(cap, dtype=np.int64)).repeat(SLOT))
    chi, chx = cuda.device_array(cap, np.int64), cuda.device_array(cap, np.int64)
    hht, closed = cuda.to_device(np.zeros(4, np.int64)), cuda.to_device(np.zeros(1, np.int32))
    fresh = seq.copy_to_host()
    send_loop[1, 32](seq, chi, chx, hht, closed, sends)  # JIT
    cuda.synchronize()
    times = []
    for _ in range(reps):
        seq.copy_to_device(fresh)
        cuda.synchronize()
        t0 = time.perf_counter()
        send_loop[1, 32](seq, chi, chx, hht, closed, sends)
        cuda.synchronize()
        times.append(time.perf_counter() - t0)
    if int(hht.copy_to_host()[0]) != sends:
        raise AssertionError(f"sent {int(hht.copy_to_host()[0])} of {sends}")
    return statistics.median(times) / sends * 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sends", type=int, default=4096)
    args = ap.parse_args()
    n = args.sends
    for k in (n // 4, n):
        print(f"hand-written send loop, {k:,} sends, capacity {k:,}: {per_send(k, k):.3f} us/send", flush=True)
    for strong, fence, what in ((False, True, "plain stores"), (True, False, "no fence.sc"), (False, False, "both")):
        us = per_send(n, n, strong=strong, fence=fence)
        print(f"hand-written send loop, {n:,} sends, {what}: {us:.3f} us/send", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
