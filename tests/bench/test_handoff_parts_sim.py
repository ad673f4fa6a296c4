"""scripts/handoff_parts_probe.py's ping-pong variants give the right values on the CUDA simulator
(no GPU): every variant, in one block of two warps, ends with both sequences at 2 x rounds - 1 and
no watchdog, and the probe's table prints a row per variant. In a child process with
NUMBA_ENABLE_CUDASIM=1 (set before Numba is imported, as runtime/backends.py does)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[2] / "scripts" / "handoff_parts_probe.py"


@pytest.mark.timeout(300)
def test_every_variant_hands_the_values_over_on_the_simulator() -> None:
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    res = subprocess.run([sys.executable, str(SCRIPT), "6", "--placement", "block", "--reps", "1"],
                         capture_output=True, text=True, timeout=280, env=env)  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    rows = [line.split()[0:2] for line in res.stdout.splitlines() if "us/hand-off" in line]
    assert [" ".join(r) if r[0] in ("free+work", "all") else r[0] for r in rows] == [
        "store", "exch", "free", "free+try", "free+work 64", "free+work 256", "all 128",
    ]  # fmt: skip
