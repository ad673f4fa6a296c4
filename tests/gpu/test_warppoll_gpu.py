"""A group task's poll on all 32 lanes of its warp (codegen/warppoll.py) on a real GPU: the
programs of tests/warppoll_programs.py, as the simulator's tests run them, each twice (the
second through the prepared launch)."""

from __future__ import annotations

import pytest
import warppoll_programs as wp

import gasync
from gasync.runtime.errors import RunTimeoutError

pytestmark = [pytest.mark.gpu, pytest.mark.timeout(300)]


def test_the_matrix_product_on_all_lanes_on_gpu() -> None:
    program = wp.matmul()
    for _ in range(2):
        wp.matmul_check(program.run(backend="cuda", timeout=60))


def test_a_store_that_reads_its_own_word_adds_once_on_gpu() -> None:
    program = gasync.compile_source(wp.ADDS, "adds.gasync")
    for _ in range(2):
        assert program.run(backend="cuda", timeout=60).buffers["out"].tolist() == wp.ADDS_OUT


def test_an_atomic_that_is_a_whole_statement_is_made_once_on_gpu() -> None:
    program = gasync.compile_source(wp.ATOMICS, "atomics.gasync")
    assert wp.ALL_LANES in program.generated.source
    for _ in range(2):
        res = program.run(backend="cuda", timeout=60)
        wp.atomics_check(res)
        assert set(res.buffers["out"][2:].tolist()) <= {3, 6}  # (the instances may run at once)


@pytest.mark.parametrize("call", sorted(wp.CALLED))
def test_a_fn_without_loops_in_a_poll_on_all_lanes_on_gpu(call: str) -> None:
    program = gasync.compile_source(wp.CALLS.replace("CALL", call), "calls.gasync")
    assert program.run(backend="cuda", timeout=60).buffers["out"].tolist() == wp.CALLED[call][1]


def test_a_poll_on_all_lanes_gives_up_at_the_deadline_on_gpu() -> None:
    program = gasync.compile_source(wp.SPINS, "spins.gasync")
    with pytest.raises(RunTimeoutError) as info:
        program.run(backend="cuda", timeout=2)
    assert "the run exceeded its timeout of 2s" in str(info.value)
