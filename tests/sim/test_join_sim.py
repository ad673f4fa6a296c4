"""Joins and selects on the simulator beyond the contract cases (tests/contract/programs.py
holds the joins of bulk loops and of every kind of future): the join of two bulk loops
on every executor, and a select whose losing arm had posted a bulk job."""

from __future__ import annotations

import pytest
from contract.check import assert_expected, check_losing_bulk_arm, run_case
from contract.programs import CASES, LOSING_BULK_ARM

import gasync

pytestmark = [pytest.mark.sim, pytest.mark.timeout(120)]

RUN_TIMEOUT_S = 60.0
TWO_BULK = next(c for c in CASES if c.name == "join_of_two_bulk_loops")


@pytest.mark.parametrize(("executor", "executors"), [("queue", 1), ("queue", 3), ("spin", 2)])
def test_join_of_two_bulk_loops_runs_both_on_every_executor(executor: str, executors: int) -> None:
    assert_expected(TWO_BULK, run_case(TWO_BULK, "sim", executor=executor, executors=executors))


def test_a_select_waits_for_the_bulk_job_of_an_arm_that_lost() -> None:
    prog = gasync.compile_source(LOSING_BULK_ARM, "<losing>", {})
    check_losing_bulk_arm(prog.run(backend="sim", timeout=RUN_TIMEOUT_S, executors=3))


def test_a_nested_join_binds_its_outer_values() -> None:
    prog = gasync.compile_source(
        """
        buffer out: i32[3] = zeros;
        async fn f(x: i32) -> i32 { yield_now().await; out[x] = x * 10; return x; }
        task main { let (a, _) = join(f(0), join(f(1), f(2))).await; out[0] = out[0] + a + 5; }
        """,
        "<nested>",
        {},
    )
    assert prog.run(backend="sim", timeout=RUN_TIMEOUT_S).buffers["out"].tolist() == [5, 10, 20]
