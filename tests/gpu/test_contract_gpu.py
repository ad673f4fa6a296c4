"""The contract suite on a real GPU (backend ``cuda``), and the GPU's results against the simulator's.

Skipped with a reason where no CUDA GPU is present (tests/conftest.py);
``pytest -m gpu tests/gpu`` runs only these. The simulator runs in a child
process, so it can run beside the GPU backend in this process.
"""

from __future__ import annotations

import re

import pytest
from contract.check import assert_expected, assert_same_results, case_params, run_case
from contract.programs import CASES, Case

pytestmark = [pytest.mark.gpu, pytest.mark.timeout(180)]

GPU_TIMEOUT_S = 60.0


@pytest.mark.parametrize("case", case_params(CASES, ("cuda",)))
def test_contract_on_gpu(case: Case) -> None:
    assert_expected(case, run_case(case, "cuda", timeout=GPU_TIMEOUT_S))


@pytest.mark.parametrize("case", case_params(CASES, ("cuda", "sim")))
def test_gpu_matches_simulator(case: Case) -> None:
    gpu = run_case(case, "cuda", timeout=GPU_TIMEOUT_S)
    sim = run_case(case, "sim")
    assert_same_results(case, gpu, sim)


@pytest.mark.parametrize("executor", ["queue", "spin"])
@pytest.mark.parametrize("case", case_params(CASES, ("cuda",)))
def test_gpu_executors(case: Case, executor: str) -> None:
    # one test per case: the first GPU compile of each case takes seconds, and all of
    # them in one test ran past its timeout on a fresh machine
    if executor == "spin" and re.search(r"^\s*group\s", case.source, re.M):
        pytest.skip("a program with groups runs the queue executor (docs/language.md, decision 54)")
    for executors in (1, 3):
        assert_expected(case, run_case(case, "cuda", timeout=GPU_TIMEOUT_S, executor=executor, executors=executors))
