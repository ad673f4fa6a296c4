"""Shared by every test tier: the tests folder on sys.path, and the ``gpu`` marker's skip.

Test folders have no ``__init__.py`` (pytest runs with ``--import-mode=importlib``),
so helpers shared between tiers, such as the contract suite in ``contract/``,
are imported as top-level modules from this folder.

Hypothesis runs repeatable draws unless ``HYPOTHESIS_PROFILE=explore``.

Tests marked ``gpu`` are skipped, with the reason, where no CUDA GPU is
present; ``pytest -m gpu tests/gpu`` runs only them.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

TESTS = Path(__file__).parent

# Property tests draw the same examples on every run by default, so CI cannot turn
# red on a draw that happened to find an old bug; `HYPOTHESIS_PROFILE=explore pytest`
# draws new ones (a failure found that way becomes a plain test, as the shifted
# literal in tests/unit/test_planner_rules.py did).
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))
# gasync's compiled helpers (runtime/linked.py) go to a store of the tests' own, never the user's
# cache; one for every run and worker on this machine (entries are written whole, then moved)
os.environ.setdefault("GASYNC_LINKED_DIR", str(Path(tempfile.gettempdir()) / f"gasync-test-helpers-{os.getuid()}"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    gpu_items = [item for item in items if item.get_closest_marker("gpu")]
    if not gpu_items:
        return
    from gasync.runtime.backends import gpu_present

    if gpu_present():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU: the driver (libcuda.so.1) reports none on this machine")
    for item in gpu_items:
        item.add_marker(skip)
