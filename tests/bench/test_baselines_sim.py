"""The hand-written limit kernels give the right values on the CUDA simulator (no GPU).

In a child process with NUMBA_ENABLE_CUDASIM=1 (set before Numba is imported, as
runtime/backends.py does): the same-SM ping-pong, both ways to wait, must end
with the word at 2 x rounds and no watchdog; the per-warp contiguous kernel must
write y = 2x + 1 everywhere, including a tail that is not a whole turn of 128.
The cross-SM ping-pong cannot run there (the simulator runs blocks one after
another, so block 0 would wait for block 1 forever): its watchdog is what
the test checks instead, with a small limit. B3's persistent kernel must
take exactly the steps the residual 2^-k gives and leave x == 2^-k, at two
block sizes, as must the Numba host loop.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).parents[2] / "bench"

CHILD = r"""
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from numba import cuda
import baselines, pingpong

for wait in pingpong.WAITS:
    elapsed, smids = pingpong.run_once("same SM", wait, 3)
    assert smids == [0, 0], smids
    print("same SM", wait, "ok")
try:
    pingpong.run_once("cross SM", "cas", 2, limit=50)
except AssertionError as exc:
    assert "watchdog" in str(exc), exc
    print("cross SM watchdog ok")
else:
    raise AssertionError("the cross-SM ping-pong cannot finish on the simulator: its watchdog should fire")

n, per_warp = 1000, 256  # 4 warps: three whole ranges and a tail of 232
x = (np.arange(n) % 1024 * 0.5).astype(np.float32)
y = np.full(n, -1.0, np.float32)
baselines._numba_kernels()["per-warp contiguous"][2, 64](x, y, np.int64(per_warp))
baselines.check_affine(x, y, "per-warp contiguous (simulator)")
assert np.array_equal(y, 2 * x + 1)
print("per-warp contiguous ok")

baselines._sm_count = lambda: 1  # (the simulator has no SM count: one block of 8 x 256 threads)
y[:] = -1.0  # the GPU-time runs: the kernel behind the hold kernel, with its events around it, still writes y
assert len(baselines.affine_device_ms(x, y, 2, "grid-stride", hold=10)) == 2
assert np.array_equal(y, 2 * x + 1)
print("device ms runs ok")

import converge
for threads, n in ((64, 256), (32, 100)):  # whole turns of the block, and a tail
    _, steps = converge.persistent_converge(n, 1e-2, 1, threads=threads)  # checks steps, x and the residual
    assert steps == 7, steps
_, steps = converge.numba_converge_host(100, 1e-2, 1)
assert steps == 7, steps
print("B3 persistent kernel and numba host loop ok")
"""


@pytest.mark.sim
@pytest.mark.timeout(120)
def test_limit_kernels_on_the_simulator() -> None:
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONWARNINGS="ignore")
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(BENCH)], capture_output=True, text=True, timeout=100, env=env
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    done = ("same SM cas ok", "same SM load ok", "cross SM watchdog ok", "per-warp contiguous ok", "device ms runs ok")
    done += ("B3 persistent",)
    for line in done:
        assert line in proc.stdout
