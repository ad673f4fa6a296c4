"""Generated code is deterministic, and the code for samples/async_double.gasync matches its golden file.

Refresh the golden file after an intended change to the code generator:
``GASYNC_UPDATE_GOLDEN=1 pytest tests/codegen``, then review the diff.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from contract.programs import CASES

import gasync

ROOT = Path(__file__).parents[2]
GOLDEN = Path(__file__).parent / "golden"
GOLDEN_SAMPLES = ["async_double", "jacobi"]  # jacobi: combined atomics in bulk and parallel loops
DETERMINISM_SAMPLES = ["async_double", "stencil2d"]


def generated_source(stem: str) -> str:
    """The module generated for a sample, compiled under a fixed relative path (it appears in comments)."""
    rel = f"samples/{stem}.gasync"
    return gasync.compile_source((ROOT / rel).read_text(), rel).source


@pytest.mark.parametrize("stem", GOLDEN_SAMPLES)
def test_generated_source_matches_golden(stem: str) -> None:
    golden = GOLDEN / f"{stem}.py.golden"
    source = generated_source(stem)
    if os.environ.get("GASYNC_UPDATE_GOLDEN") == "1":
        golden.write_text(source)
    assert golden.exists(), f"no golden file {golden}: run with GASYNC_UPDATE_GOLDEN=1"
    assert source == golden.read_text(), f"generated code for {stem} changed; GASYNC_UPDATE_GOLDEN=1 refreshes it"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_generating_twice_gives_the_same_source(case: object) -> None:
    first = gasync.compile_source(case.source, f"<{case.name}>", case.defines)  # type: ignore[attr-defined]
    second = gasync.compile_source(case.source, f"<{case.name}>", case.defines)  # type: ignore[attr-defined]
    assert first.source == second.source
    assert first.generated.digest == second.generated.digest


@pytest.mark.parametrize("stem", DETERMINISM_SAMPLES)
def test_source_does_not_depend_on_hash_seed(stem: str) -> None:
    """Set and dict orders that follow string hashes would differ between these two processes."""
    rel = f"samples/{stem}.gasync"
    script = f"import sys, gasync; sys.stdout.write(gasync.compile_source(open({rel!r}).read(), {rel!r}).source)"
    outs = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        res = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60, cwd=ROOT
        )
        assert res.returncode == 0, res.stderr
        outs.append(res.stdout)
    assert outs[0] == outs[1]
    assert outs[0] == generated_source(stem)
