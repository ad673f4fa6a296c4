"""A short slice of scripts/fuzz.py in CI: 10 mutated programs that pass ``gasync check``
through ``gasync run --backend sim --timeout 2s`` with random inputs and host signals: no
traceback, no internal error, no exception inside the simulated kernel, no hang."""

from __future__ import annotations

import random

import pytest
from fuzzing.harness import Worker
from fuzzing.mutate import inputs, seeds

pytestmark = [pytest.mark.sim, pytest.mark.timeout(240)]


def test_ten_runnable_mutants_run_on_the_simulator_without_a_defect() -> None:
    corpus = seeds(differential=4, seed=5)
    worker = Worker()
    ran, found = 0, []
    try:
        for k, (text, label) in enumerate(inputs(corpus, random.Random(5), 400, small_only=True, with_seeds=False)):
            if ran == 10:
                break
            if worker.ask("check", text, 60).status != 0:
                continue
            ran += 1
            out = worker.ask("run", text, 90, seed=k, timeout_s=2.0)
            if out.defect:
                found.append((label, out.defect, out.output[-400:]))
    finally:
        worker.close()
    assert ran == 10
    assert found == []
