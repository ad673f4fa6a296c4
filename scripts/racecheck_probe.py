"""What compute-sanitizer's racecheck reports for a hand-off through shared memory that a
flag orders (issue 14: the group samples' racecheck logs, bench/NOTES.md).

``compute-sanitizer --tool racecheck python3 scripts/racecheck_probe.py flag|barrier`` on
the GPU. Both kernels hand 32 floats from warp 0 to warp 1 of one block through a
shared array, as a group's loader and compute warps do (runtime/devicegroups.py):
- ``flag``: warp 0's lanes write, meet at ``__syncwarp``, lane 0 publishes a shared word
  with ``st.release.cta``; warp 1's lane 0 waits for it with ``ld.acquire.cta``, its
  lanes meet at ``__syncwarp`` and read. Correct under the PTX memory model (the warp
  meetings and the release/acquire pair order every write before every read);
- ``barrier``: the same with ``__syncthreads`` in place of the flag.
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

from gasync.runtime.order import ld_acquire_cta, st_release_cta  # noqa: E402


@cuda.jit
def by_flag(out):  # type: ignore[no-untyped-def]
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
            st_release_cta(flag, 0, int64(1))
    else:
        if lane == 0:
            while ld_acquire_cta(flag, 0) == 0:
                pass
        cuda.syncwarp()
        out[lane] = data[lane]


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
    kernel = by_flag if which == "flag" else by_barrier
    out = cuda.to_device(np.zeros(32, np.float32))
    kernel[1, 64](out)
    got = out.copy_to_host()
    want = np.arange(32, dtype=np.float32) * 2 + 1
    ok = bool(np.array_equal(got, want))
    print(f"{which}: warp 1 read {'what warp 0 wrote' if ok else 'wrong values: ' + str(got)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
