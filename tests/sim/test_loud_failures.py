"""A full ring is reported with its own exit code and the instance, never dropped silently.

The device helper runs on Numba's simulator in a child process (the simulator is
chosen before Numba is imported); the host's report is checked from the arrays a
run would copy back.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import gasync
from gasync.runtime import exits
from gasync.runtime.errors import DeviceError
from gasync.runtime.state import CTL_WORDS, RING_WORDS, Ctl, Exit, Ring

FULL_RING = """
import numpy as np
from gasync.runtime import devicelib as dl
from gasync.runtime.state import CTL_WORDS, RING_WORDS, Ctl, Exit, Ring
qseq = np.arange(2, dtype=np.int64)
qdata = np.zeros(2, np.int32)
qht = np.zeros(RING_WORDS, np.int64)
ctl = np.zeros(CTL_WORDS, np.int64)
push = lambda v: dl.queue_push(qseq, qdata, qht, 1, v, ctl, Exit.QUEUE_FULL)
print(push(7), push(8))
print(push(9))
print(int(ctl[Ctl.EXIT]), int(ctl[Ctl.DETAIL]), int(qht[Ring.TAIL]), [int(v) for v in qdata])
print(dl.queue_pop(qseq, qdata, qht, 1), dl.queue_pop(qseq, qdata, qht, 1), dl.queue_pop(qseq, qdata, qht, 1))
"""


def test_a_push_on_a_full_ring_stops_the_run_with_its_code() -> None:
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    res = subprocess.run([sys.executable, "-c", FULL_RING], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split("\n")[:4] == ["True True", "False", f"{int(Exit.QUEUE_FULL)} 9 2 [7, 8]", "7 8 -1"]


@pytest.mark.parametrize(
    ("code", "what"),
    [
        (Exit.QUEUE_FULL, "the run queue had no free slot"),
        (Exit.WAITLIST_FULL, "a wait list had no free slot"),
        (Exit.SLEEPERS_FULL, "the sleepers' ring had no free slot"),
    ],
)
def test_the_host_names_the_ring_and_the_instance(code: Exit, what: str) -> None:
    prog = gasync.compile_source(
        "buffer out: i32[4] = zeros;\ntask worker for k in 0..4 { out[k] = k; }\ntask main { out[0] = 1; }\n",
        "t.gasync",
    )
    ctl = np.zeros(CTL_WORDS, np.int64)
    ctl[Ctl.EXIT] = code
    ctl[Ctl.DETAIL] = 2  # worker[2]
    back = {"CTL": ctl, "ST": np.zeros(5, np.int32), "WAITON": np.zeros(5, np.int32), "QHT": np.zeros(RING_WORDS)}
    with pytest.raises(DeviceError) as err:
        exits.check_exit(prog.generated, back, gasync.runtime.RunOptions())
    assert str(err.value).startswith(
        f"internal error in the executor: {what} for task worker[2], so a wake would have been lost "
        f"(exit code {int(code)}; please report it); unfinished tasks:\n"
    )
    assert Ring.TAIL == 16  # head and tail on separate 128-byte lines
