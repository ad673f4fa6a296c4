"""Joins and selects on a real GPU beyond the contract cases: a select whose losing arm had
posted a bulk job (whichever arm wins, every posted job runs to its end untouched)."""

from __future__ import annotations

import pytest
from contract.check import check_losing_bulk_arm
from contract.programs import LOSING_BULK_ARM

import gasync

pytestmark = [pytest.mark.gpu, pytest.mark.timeout(180)]


@pytest.mark.parametrize("executors", [0, 3])
def test_a_select_waits_for_the_bulk_job_of_an_arm_that_lost_on_gpu(executors: int) -> None:
    prog = gasync.compile_source(LOSING_BULK_ARM, "<losing>", {})
    check_losing_bulk_arm(prog.run(backend="cuda", timeout=60.0, executors=executors))
