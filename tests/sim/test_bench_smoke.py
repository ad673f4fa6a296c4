"""The benchmark suite's programs (bench/), tiny, on the simulator: ``bench/run.py --sim-smoke``.

Runs the script as the user would, in a subprocess with a time limit, so a
broken benchmark program is found here rather than on the GPU machine.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

RUN = Path(__file__).parents[2] / "bench" / "run.py"
B3_VARIANTS = ("parallel for + fetch_max", "bulk for + fetch_max", "parallel for reduce max", "bulk for reduce max")


@pytest.mark.sim
@pytest.mark.timeout(300)
def test_every_benchmark_program_gives_the_right_values_on_the_simulator() -> None:
    proc = subprocess.run([sys.executable, str(RUN), "--sim-smoke"], capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in ("B1", "B2", "B2b", "B3", "B4", "B5", "B5a", "B6", "T1"):
        assert f"sim-smoke {name}: ok" in proc.stdout
    for variant in B3_VARIANTS:  # each run and checked; the GPU-only baselines said to be skipped
        assert f"sim-smoke B3: gasync {variant}: 10 steps, values ok" in proc.stdout
    assert "sim-smoke B3: skipped, GPU only: hand-written persistent kernel" in proc.stdout
