"""tests/bench: the benchmark suite's host-side code and hand-written kernels, without a GPU.

bench/'s modules import each other as top-level modules (bench/run.py runs from
that folder), so the folder goes on sys.path here. ``synthetic_doc`` is a small
made-up results document (synthetic-results.json, marked synthetic inside): a
fixture for the summary and report code, never a measurement.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).parents[2]
BENCH = ROOT / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

SYNTHETIC = Path(__file__).with_name("synthetic-results.json")


@pytest.fixture
def synthetic_doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(SYNTHETIC.read_text())
    assert "NOT a measurement" in doc["synthetic"]
    return doc
