"""Every program in samples/ on the reference interpreter gives what its header promises.

The checks are the simulator tier's own (tests/sim/test_samples_sim.py), so
a sample and its expectation are written once; host signals arrive at the
same (here virtual) times.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

import gasync
from gasync import reference

SAMPLES = Path(__file__).parents[2] / "samples"


def _sim_checks() -> ModuleType:
    path = Path(__file__).parents[1] / "sim" / "test_samples_sim.py"
    spec = importlib.util.spec_from_file_location("samples_checks", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CHECKS = _sim_checks()


@pytest.mark.parametrize("path", sorted(SAMPLES.glob("*.gasync")), ids=lambda p: p.stem)
def test_sample_on_the_reference(path: Path) -> None:
    program = gasync.compile(path)
    inputs = CHECKS.INPUTS[path.stem]() if path.stem in CHECKS.INPUTS else {}
    outcome = reference.run(program.plan, inputs, signals=CHECKS.HOST_SIGNALS.get(path.stem, {}))
    CHECKS.CHECKS[path.stem](outcome)
