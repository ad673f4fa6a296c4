"""The simulator's mbarriers (runtime/devicembar.py) keep the GPU's phases: a phase completes at
its 32nd arrival, and ``passed(parity)`` says whether the phase of that parity has, which one
bit tells as long as the waiter is at most one phase behind (a local channel's slot: its
waiter's lap is the barrier's completed phases).

A ring of one slot handed from warp 0 to warp 1 over several laps, every lane arriving and
waiting as ``lch_send_warp`` and ``lch_recv_warp`` do: what warp 1 reads each lap is what warp 0
wrote that lap. Run on the CUDA simulator in a child process (NUMBA_ENABLE_CUDASIM is read when
Numba is first imported).
"""

from __future__ import annotations

import os
import subprocess
import sys

CHILD = r"""
import numpy as np
from numba import cuda, int64
from gasync.runtime import devicembar as mb

LAPS = 5

@cuda.jit
def handoff(data, out):
    bars = cuda.shared.array(2, int64)  # (an mbarrier is a word of shared memory)
    t = cuda.threadIdx.x
    lane = t % 32
    if t < 2:
        mb.init(bars, t)  # pub at 0, freed at 1
    cuda.syncthreads()
    for lap in range(LAPS):
        if t < 32:
            if lap > 0:
                mb.wait(bars, 1, (lap - 1) % 2)
            data[lane] = lap * 100 + lane
            mb.arrive(bars, 0)
        else:
            mb.wait(bars, 0, lap % 2)
            out[lap, lane] = data[lane]
            mb.arrive(bars, 1)
    cuda.syncthreads()
    if t == 0:
        # after LAPS phases of each: the phase of parity LAPS % 2 has not completed, the other has
        out[LAPS, 0] = int64(mb.passed(bars, 0, LAPS % 2))
        out[LAPS, 1] = int64(mb.passed(bars, 0, (LAPS - 1) % 2))
        mb.inval(bars, 0)
        mb.inval(bars, 1)

data, out = np.zeros(32, np.int64), np.zeros((LAPS + 1, 32), np.int64)
handoff[1, 64](data, out)
want = [[lap * 100 + lane for lane in range(32)] for lap in range(LAPS)]
print(out[:LAPS].tolist() == want, out[LAPS, 0], out[LAPS, 1])
"""


def test_a_slot_handed_on_over_laps_by_every_lane_through_two_barriers() -> None:
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "True 0 1"
