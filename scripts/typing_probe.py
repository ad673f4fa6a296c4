"""What a call passing G costs Numba to compile (B6, issue 12): no GPU needed.

``python3 scripts/typing_probe.py``: a device function that calls a small one 1, 10 and 40 times,
compiled to PTX with the state as a namedtuple of 10 x 8 arrays (gasync's G is of that
kind) and as one of 8 arrays, CPU seconds each (the first, "warm", pays Numba's own start).
bench/NOTES.md has what it gave.
"""

import os
import time

os.environ.setdefault("CUDA_HOME", "/usr/local/cuda-13.0")
from collections import namedtuple
from types import SimpleNamespace

import numpy as np
from numba import cuda, typeof, types
from numba.cuda import dispatcher

dispatcher.get_current_device = lambda: SimpleNamespace(compute_capability=(9, 0))

Sub = namedtuple("Sub", [f"A{i}" for i in range(8)])
Big = namedtuple("Big", [f"s{i}" for i in range(10)])
arr = np.zeros((4, 4), np.int64)
big = Big(*[Sub(*[arr.copy() for _ in range(8)]) for _ in range(10)])
small = Sub(*[arr.copy() for _ in range(8)])


def make(calls: int):  # type: ignore[no-untyped-def]
    @cuda.jit(device=True)
    def leaf(G, w, k):  # type: ignore[no-untyped-def]
        return w + k

    ns = {"leaf": leaf}
    src = "def f(G, w):\n    x = 0\n" + "".join(f"    x += leaf(G, w, {i})\n" for i in range(calls)) + "    return x\n"
    exec(src, ns)
    return ns["f"]


for name, obj, calls in (
    ("warm", small, 40),
    *((f"{kind}, {n} calls", obj, n) for n in (1, 10, 40) for kind, obj in (("8 arrays", small), ("80 arrays", big))),
):
    f = make(calls)
    t = time.process_time()
    cuda.compile_ptx(f, (typeof(obj), types.int64), cc=(9, 0), device=True)
    print(f"{name}: {time.process_time() - t:.3f} s")
