"""runtime/devicembar.py's mbarriers on a real GPU (PTX ``mbarrier.init``, ``arrive``,
``try_wait.parity``, ``inval``): the simulator's test's kernel, a slot handed from warp 0 to
warp 1 over five laps by every lane, run in a child process without the simulator."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "sim"))
from test_devicembar_sim import CHILD  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.timeout(300)]


def test_a_slot_handed_on_over_laps_by_every_lane_through_two_barriers_on_gpu() -> None:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=240, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "True 0 1"
