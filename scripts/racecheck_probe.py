"""What compute-sanitizer's racecheck reports for a hand-off through shared memory that a
flag orders (issue 14: the group samples' racecheck logs, bench/NOTES.md).

``compute-sanitizer --tool racecheck python3 scripts/racecheck_probe.py flag|barrier`` on
the GPU. Both kernels hand 32 floats from warp 0 to warp 1 of one block through a
shared array, as a group's loader and compute warps do (runtime/devicegroups.py):
- ``flag``: warp 0's lanes write, meet at ``__syncwarp``, lane 0 publishes a shared word
  with ``st.release.cta``; warp 1's lane 0 waits for it with ``ld.acquire.cta``, its
  lanes meet at ``__syncwarp`` and read. Correct under the PTX memory model (the warp
  meetings and the release/acquire pair order every write before every read);
- ``barrier``: the same with ``__syncthreads`` in place of the flag;
- ``mbar1``, ``mbar32``: a ring of 2 stages, 64 rounds, each stage's ``full`` and ``empty``
  an mbarrier in shared memory (``mbarrier.arrive`` is a release, ``try_wait.parity`` an
  acquire, both .cta): with ``mbar1`` lane 0 arrives and waits for its warp (meeting at
  ``__syncwarp``), as a local channel's lane 0 does; with ``mbar32`` every lane arrives
  (a count of 32) and every lane waits. The rounds reuse each stage, so a read-then-write
  hazard would be seen too;
- ``atomflag``: ``flag`` with the flag's store and loads atomics (an exchange, an add of 0):
  whether racecheck counts an atomic access of shared memory; ``exchflag``: the store an
  exchange, the loads plain ``ld.acquire.cta`` (runtime/order.py, CTA_ATOMIC_STORES alone);
- ``samewarp``, ``samewarpmeet``: warp 0's lanes each write the same value to one shared word
  (as a poll on all lanes saves a local to its frame), then each reads it back, without a
  meeting between or across ``__syncwarp``; ``samewarpload`` reads it back with an
  ``ld.relaxed.cta`` that the compiler cannot take from the store (as a frame's word is read
  back in a later poll).
Each checks what warp 1 read (exit 1 if wrong). If racecheck reports hazards for ``flag``
and none for ``barrier``, it does not follow release/acquire through shared memory, and
hazards of that shape in a group's kernel are that pattern, not races.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))  # the repository root is the package gasync

from numba import cuda, float32, int64  # noqa: E402

from gasync.runtime import devicembar as mbar  # noqa: E402
from gasync.runtime.order import _ld_acquire_cta, _ld_relaxed_cta, _st_release_cta  # noqa: E402

ROUNDS, STAGES = 64, 2
BARS = 2 * STAGES  # full[s] at s, empty[s] at STAGES + s
init_one = mbar.barrier_op("mbarrier.init.shared::cta.b64 [%sa], 1;")  # a phase of one arrival (mbar1)


@cuda.jit(device=True, inline=True)
def wait_phase(mb, slot, parity, lane, each):  # type: ignore[no-untyped-def]
    """Every lane waits (``each``), or lane 0 waits and the warp meets."""
    if each or lane == 0:
        mbar.wait(mb, slot, parity)
    if not each:
        cuda.syncwarp()


@cuda.jit(device=True, inline=True)
def arrive(mb, slot, lane, each):  # type: ignore[no-untyped-def]
    """Every lane arrives (``each``), or the warp meets and lane 0 arrives."""
    if not each:
        cuda.syncwarp()
    if each or lane == 0:
        mbar.arrive(mb, slot)


@cuda.jit
def by_mbarrier(out, each):  # type: ignore[no-untyped-def]
    data = cuda.shared.array((STAGES, 32), float32)
    mb = cuda.shared.array(BARS, int64)
    t = cuda.threadIdx.x
    lane = t % 32
    if t < BARS:
        if each:
            mbar.init(mb, t)  # a phase of 32 arrivals
        else:
            init_one(mb, t)
    cuda.syncthreads()  # (the barriers' start, before either warp runs)
    acc = float32(0.0)
    for r in range(ROUNDS):
        s = r % STAGES
        k = r // STAGES
        if t < 32:
            if k > 0:
                wait_phase(mb, STAGES + s, (k - 1) & 1, lane, each)
            data[s, lane] = float32(r * 32 + lane)
            arrive(mb, s, lane, each)
        else:
            wait_phase(mb, s, k & 1, lane, each)
            acc += data[s, lane]
            arrive(mb, STAGES + s, lane, each)
    if t >= 32:
        out[lane] = acc


@cuda.jit
def by_flag(out, atomic_store, atomic_load):  # type: ignore[no-untyped-def]
    data = cuda.shared.array(32, float32)
    flag = cuda.shared.array(1, int64)
    t = cuda.threadIdx.x
    lane = t % 32
    if t == 0:
        flag[0] = 0
    cuda.syncthreads()  # (the flag's start, before either warp runs)
    if t < 32:
        data[lane] = float32(lane) * 2.0 + 1.0
        cuda.syncwarp()
        if lane == 0:
            if atomic_store:
                cuda.atomic.exch(flag, 0, int64(1))
            else:
                _st_release_cta(flag, 0, int64(1))  # a plain st.release.cta
    else:
        if lane == 0:
            if atomic_load:
                while cuda.atomic.add(flag, 0, int64(0)) == 0:
                    pass
            else:
                while _ld_acquire_cta(flag, 0) == 0:
                    pass
        cuda.syncwarp()
        out[lane] = data[lane]


FLAGS = {"flag": (False, False), "atomflag": (True, True), "exchflag": (True, False)}  # (store, loads) atomic


@cuda.jit
def by_same_value(out, meet, fresh):  # type: ignore[no-untyped-def]
    word = cuda.shared.array(1, int64)
    t = cuda.threadIdx.x
    lane = t % 32
    if t < 32:
        word[0] = int64(7)
        if meet:
            cuda.syncwarp()
        v = _ld_relaxed_cta(word, 0) if fresh else word[0]
        out[lane] = float32(v * 2 + 1 - 14) + float32(lane) * 2.0


@cuda.jit
def by_barrier(out):  # type: ignore[no-untyped-def]
    data = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    lane = t % 32
    if t < 32:
        data[lane] = float32(lane) * 2.0 + 1.0
    cuda.syncthreads()
    if t >= 32:
        out[lane] = data[lane]


def main() -> int:
    which = sys.argv[1] if len(sys.argv) > 1 else "flag"
    out = cuda.to_device(np.zeros(32, np.float32))
    if which.startswith("mbar"):
        by_mbarrier[1, 64](out, which == "mbar32")
        want = sum(np.arange(32, dtype=np.float32) + r * 32 for r in range(ROUNDS)).astype(np.float32)
    else:
        if which.startswith("samewarp"):
            by_same_value[1, 64](out, which == "samewarpmeet", which == "samewarpload")
        elif which in FLAGS:
            by_flag[1, 64](out, *FLAGS[which])
        else:
            by_barrier[1, 64](out)
        want = np.arange(32, dtype=np.float32) * 2 + 1
    got = out.copy_to_host()
    ok = bool(np.array_equal(got, want))
    print(f"{which}: warp 1 read {'what warp 0 wrote' if ok else 'wrong values: ' + str(got)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
