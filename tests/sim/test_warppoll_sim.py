"""A group task's poll on all 32 lanes of its warp (codegen/warppoll.py) on the simulator: its
parallel loops run inside it, what must happen once happens once, and it gives up at the
deadline on every lane together. tests/gpu/test_warppoll_gpu.py runs the same programs."""

from __future__ import annotations

import pytest
import warppoll_programs as wp

import gasync
from gasync.codegen import warppoll
from gasync.runtime.errors import RunTimeoutError

pytestmark = [pytest.mark.sim]


@pytest.mark.timeout(240)
def test_a_pipeline_of_local_channels_polls_on_all_lanes_its_loops_inside_the_poll() -> None:
    program = wp.matmul()
    src = program.generated.source
    loader = src[src.index("def poll_loader(") : src.index("def poll_compute(")]
    # no FORK, no argument row: the tile's copy is a call in the poll, then the lanes meet
    assert "rc = 2  # FORK" not in loader and "PARGS" not in loader
    assert "par_1(w, lane, int64(0), int64(64), v_s_1, v_row0, v_k0, v_col0, " in loader
    assert "def par_1(w, lane, lo, hi, v_s_1, v_row0, v_k0, v_col0, G, L):" in src
    assert wp.ALL_LANES in src and "run_parallel_mm(command" not in src
    wp.matmul_check(program.run(backend="sim", timeout=120))


@pytest.mark.timeout(240)
def test_a_store_that_reads_its_own_word_adds_once_in_a_poll_on_all_lanes() -> None:
    program = gasync.compile_source(wp.ADDS, "adds.gasync")
    assert "if lane == 0:  # once (codegen/warppoll.py)" in program.generated.source
    assert program.run(backend="sim", timeout=120).buffers["out"].tolist() == wp.ADDS_OUT


@pytest.mark.timeout(240)
def test_an_atomic_that_is_a_whole_statement_is_made_once_in_a_poll_on_all_lanes() -> None:
    program = gasync.compile_source(wp.ATOMICS, "atomics.gasync")
    src = program.generated.source
    assert wp.ALL_LANES in src
    assert "v_t = uint64(dl.first(G.exec.CMD, w, lane, int64(v_t)))" in src
    res = program.run(backend="sim", timeout=120)
    wp.atomics_check(res)
    # the simulator's one block runs the instances one after the other: the first sees its own 3
    assert sorted(res.buffers["out"][2:].tolist()) == [3, 6]


@pytest.mark.timeout(240)
def test_a_group_with_an_atomic_inside_an_expression_keeps_the_lane_0_poll() -> None:
    program = gasync.compile_source(wp.NESTED, "nested.gasync")
    src = program.generated.source
    assert wp.ALL_LANES not in src and "dgroups.lch_try_recv(" in src
    res = program.run(backend="sim", timeout=120)
    assert int(res.shared["tickets"]) == 4 and int(res.shared["total"]) == 6


@pytest.mark.timeout(240)
@pytest.mark.parametrize("call", sorted(wp.CALLED))
def test_a_fn_without_loops_may_be_called_in_a_poll_on_all_lanes(call: str) -> None:
    all_lanes, out = wp.CALLED[call]
    program = gasync.compile_source(wp.CALLS.replace("CALL", call), "calls.gasync")
    assert (wp.ALL_LANES in program.generated.source) is all_lanes
    assert program.run(backend="sim", timeout=120).buffers["out"].tolist() == out


@pytest.mark.timeout(240)
def test_a_poll_on_all_lanes_gives_up_at_the_deadline_on_every_lane_together() -> None:
    # lane 0 looks, every lane learns (dl.overdue_warp); one lane giving up alone would leave
    # the others at a meeting
    program = gasync.compile_source(wp.SPINS, "spins.gasync")
    assert warppoll.OVERDUE_WARP in program.generated.source
    with pytest.raises(RunTimeoutError) as info:
        program.run(backend="sim", timeout=2)
    assert "the run exceeded its timeout of 2s" in str(info.value)  # its deadline, not the hard limit
