"""Write the PTX of a small kernel that uses each memory-order helper of runtime/order.py.

On a machine with the CUDA toolkit, ``ptxas -arch=sm_90`` then ``cuobjdump -sass`` show
what each becomes in machine code (which of them carry a MEMBAR), the evidence behind
bench/NOTES.md's account of S2. Usage: python3 scripts/sass_orders.py OUT.ptx
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("CUDA_HOME", "/usr/local/cuda-13.0")

from numba import cuda, int64, types  # noqa: E402

from gasync.runtime import order  # noqa: E402


def kernel(a, b):  # type: ignore[no-untyped-def]
    x = order.ld_acquire(a, 0)  # 1: ld.acquire.gpu
    b[1] = x
    order.st_release(a, 2, x + 1)  # 2: st.release.gpu
    b[3] = order.ld_relaxed(a, 4)  # 3: ld.relaxed.gpu
    b[5] = order.cas_acq_rel(a, 6, int64(0), int64(1))  # 4: atom.acq_rel.gpu.cas
    b[7] = order.cas(a, 8, int64(0), int64(1))  # 5: atom.cas (relaxed)
    order.fence_acq_rel()  # 6: fence.acq_rel.gpu
    b[9] = 1
    cuda.threadfence()  # 7: membar.gl
    b[10] = 2


if __name__ == "__main__":
    ptx, _ = cuda.compile_ptx(kernel, (types.int64[:], types.int64[:]), cc=(9, 0))
    with open(sys.argv[1], "w") as f:
        f.write(ptx)
