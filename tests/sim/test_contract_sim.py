"""The contract suite on Numba's CUDA simulator (backend ``sim``), values checked exactly.

Each run is a child process with a hard time limit (runtime/backends.py), so
no case can hang the suite; the pytest timeout is a second bound.
"""

from __future__ import annotations

import pytest
from contract.check import assert_expected, case_params, run_case
from contract.programs import CASES, Case

pytestmark = [pytest.mark.sim, pytest.mark.timeout(120)]


BY_NAME = {case.name: case for case in CASES}
# Cases that suspend, interleave instances or use atomics: where the executor's policy could show.
SCHEDULING = [
    BY_NAME[name]
    for name in (
        "nested_async_suspending",
        "loops_with_awaits",
        "after_chain_and_diamond",
        "shared_atomics_many_instances",
        "task_array_disjoint_slices",
        "parallel_for_atomics_from_task_array",
        "channel_many_producers_many_consumers",
        "select_recv_pending_then_stop_loses_no_value",
        "loops_against_due_sleeps_let_the_others_run",
    )
]


def test_case_names_are_unique() -> None:
    assert len(BY_NAME) == len(CASES)


@pytest.mark.parametrize("case", case_params(CASES, ("sim",)))
def test_contract_on_sim(case: Case) -> None:
    assert_expected(case, run_case(case, "sim"))


@pytest.mark.parametrize("executors", [1, 3])
@pytest.mark.parametrize("executor", ["queue", "spin"])
@pytest.mark.parametrize("case", case_params(SCHEDULING, ("sim",)))
def test_contract_on_sim_other_executors(case: Case, executor: str, executors: int) -> None:
    assert_expected(case, run_case(case, "sim", executor=executor, executors=executors))
