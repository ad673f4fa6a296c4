"""A local channel's view (docs/groups.md, invariant 6) moves at each step of a hand-off.

A send claims its position and then publishes the value; a receive claims its position and
then frees the slot. A warp that polls between the two steps finds its slot not ready; if only
the claims moved the view, the step after would leave the view where that warp saw it, and the
group's stuck check would call a hand-off in flight a deadlock (B7 on every SM of an H100 did).
So each step a waiter may wait for must move the view (runtime/devicegroups.py lch_view: the
ring's positions and closed flag, and whether SEND's slot is free and RECV's holds its value),
and the view must never fall (a view that came back to an old value would pass for no step at
all). Run on the CUDA simulator in a child process (NUMBA_ENABLE_CUDASIM is read when Numba is
first imported).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

CHILD = r"""
import numpy as np
from numba import cuda
from gasync.runtime import devicegroups as dg
from gasync.runtime.state import LCH_WORDS

CAP = 1

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
    # the value 7 taken, LCH_SENT (1), LCH_TOOK (1); the view (4 x the positions and CLOSED, + 1
    # while SEND's slot is free for it, + 2 while RECV's holds its value), one slot: 1 (free for 0)
    # -> 4 (the send's claim: SEND 1) -> 6 (its publish) -> 8 (the receive's claim: RECV 1) -> 9
    # (its free: the slot free for the sender of 1) -> 13 (closed)
    assert proc.stdout.strip() == "[7, 1, 1] [1, 4, 6, 8, 9, 13]"


LAPS = r"""
import json
import numpy as np
from numba import cuda
from gasync.runtime import devicegroups as dg
from gasync.runtime.state import LCH_WORDS

CAP = 2
# a script of steps by two senders (a, b) and two receivers (c, d), each a claim, then a publish
# (a free) later, out of order where two are in flight: 0/4 a's/b's claim, 1/5 its publish, 2/6
# c's/d's claim, 3/7 its free
STEPS = np.array([0, 4, 5, 1, 2, 6, 7, 3, 0, 1, 2, 3, 0, 1, 4, 5, 2, 6, 3, 7], np.int64)

@cuda.jit
def steps(ring, data, script, views):
    dg.lch_reset(ring, CAP, 0, 1)
    views[0] = dg.lch_view(ring, CAP)
    at = cuda.local.array(4, np.int64)  # the position each of a, b, c, d holds
    for k in range(script.size):
        s = script[k]
        who = s // 4 + 2 * ((s % 4) // 2)  # a 0, b 1, c 2, d 3
        if s % 4 == 0:
            code, at[who] = dg.lch_claim_send(ring, CAP, 0)
        elif s % 4 == 1:
            dg.lch_publish(ring, CAP, at[who])
        elif s % 4 == 2:
            took, at[who] = dg.lch_claim(ring, CAP, 0)
        else:
            dg.lch_free(ring, CAP, at[who])
        views[k + 1] = dg.lch_view(ring, CAP)

ring, data = np.zeros(LCH_WORDS + 3 * CAP, np.int64), np.zeros(CAP, np.int64)
views = np.zeros(STEPS.size + 1, np.int64)
steps[1, 1](ring, data, STEPS, views)
print(json.dumps({"script": STEPS.tolist(), "views": views.tolist(), "words": ring[:3].tolist()}))
"""


def test_the_view_never_falls_and_rises_at_every_claim() -> None:
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    proc = subprocess.run([sys.executable, "-c", LAPS], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout)
    script, views, words = got["script"], got["views"], got["words"]
    assert words == [5, 5, 0]  # every claim taken: five positions sent and received, the ring open
    for k, step in enumerate(script):
        before, after = views[k], views[k + 1]
        assert after >= before, (k, step, views)
        if step % 2 == 0:  # a claim
            assert after > before, (k, step, views)
