"""A local channel's view (docs/groups.md, invariant 6) moves at each step of a hand-off.

A send claims its position and then publishes the value; a receive claims its position and
then frees the slot. A warp that polls between the two steps finds its slot not ready; if only
the claims moved the view, the step after would leave the view where that warp saw it, and the
group's stuck check would call a hand-off in flight a deadlock (B7 on every SM of an H100 did).
So each operation must move the view (the ring's positions, closed flag and slots' sequences:
runtime/devicegroups.py lch_view) twice. Run on the CUDA simulator in a
child process (NUMBA_ENABLE_CUDASIM is read when Numba is first imported).
"""

from __future__ import annotations

import os
import subprocess
import sys

CHILD = r"""
import numpy as np
from numba import cuda
from gasync.runtime import devicegroups as dg
from gasync.runtime.state import LCH_WORDS

CAP = 2

@cuda.jit
def steps(ring, data, out, views):
    dg.lch_reset(ring, CAP, 0, 1)
    views[0] = dg.lch_view(ring, CAP)
    code, pos = dg.lch_claim_send(ring, CAP, 0)
    views[1] = dg.lch_view(ring, CAP)
    data[pos % CAP] = 7
    dg.lch_publish(ring, CAP, pos)
    views[2] = dg.lch_view(ring, CAP)
    out[1] = code
    took, at = dg.lch_claim(ring, CAP, 0)
    views[3] = dg.lch_view(ring, CAP)
    out[0] = data[at % CAP]
    dg.lch_free(ring, CAP, at)
    views[4] = dg.lch_view(ring, CAP)
    out[2] = took
    dg.lch_close(ring)
    views[5] = dg.lch_view(ring, CAP)

ring, data = np.zeros(LCH_WORDS + 3 * CAP, np.int64), np.zeros(CAP, np.int64)  # words, seqs, mbarriers
out, views = np.zeros(3, np.int64), np.zeros(6, np.int64)
steps[1, 1](ring, data, out, views)
print(out.tolist(), views.tolist())
"""


def test_a_send_and_a_receive_each_move_the_view_at_claim_and_at_completion() -> None:
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # the value 7 taken, LCH_SENT (1), LCH_TOOK (1); the view (slots free for 0 and 1: sequences 0
    # and 2) 2 -> 3 (the send's claim) -> 4 (its publish: 0 -> 1) -> 5 (the receive's claim) -> 8
    # (its free: 1 -> 2 * (0 + CAP)) -> 9 (closed)
    assert proc.stdout.strip() == "[7, 1, 1] [2, 3, 4, 5, 8, 9]"
