"""scripts/b4shape_probe.py and scripts/b4_timeline_probe.py on the CUDA simulator (no GPU): every
hand-written shape, rotated walk and claimed-tile queue of the first writes y = 2x + 1 over the
whole array (the probe checks each case's values and exits non-zero on a wrong one), and the
second reads a traced B4 run into its loader and per-task lines. In child processes with
NUMBA_ENABLE_CUDASIM=1 (set before Numba is imported)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).parents[2] / "scripts"
ENV = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1", "PYTHONWARNINGS": "ignore"}


def run(*args: str) -> list[str]:
    res = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=280, env=ENV)
    assert res.returncode == 0, res.stderr[-3000:]
    return res.stdout.splitlines()


@pytest.mark.timeout(300)
def test_every_shape_of_b4s_work_writes_the_whole_array() -> None:
    lines = run(str(SCRIPTS / "b4shape_probe.py"), "16384")
    cases = [line.split(":")[0] for line in lines if " ms " in line]
    assert len(cases) == 12 and cases[0].startswith("per-warp contiguous")
    assert sum("rotated" in c for c in cases) == 5 and sum("claiming" in c for c in cases) == 3


@pytest.mark.timeout(300)
def test_b4s_timeline_reads_the_loader_and_each_compute_task_from_a_traced_run() -> None:
    lines = run(str(SCRIPTS / "b4_timeline_probe.py"), "4", "--backend", "sim", "8192")
    assert any(line.startswith("traced: kernel") and "4 compute tasks, 4 tiles" in line for line in lines)
    assert any(line.startswith("loader: 1 polls") for line in lines)  # it sends every tile in one poll
    ends = next(line for line in lines if line.startswith("... ends"))
    assert ends.startswith("... ends (its task's poll after it starts) (4):")  # a tile per compute task
    lasts = next(line for line in lines if line.startswith("... lasts"))
    assert all(float(q.split()[1]) > 0 for q in lasts.split(": ", 1)[1].removesuffix(" us").split(", "))
    assert any(line.startswith("the last poll ends at") for line in lines) and "4 tiles; 0 events dropped" in lines
