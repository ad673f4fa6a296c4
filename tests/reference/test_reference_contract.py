"""The reference interpreter against the contract suite's expected values, and its errors.

Every contract case carries values computed independently of gasync
(tests/contract/programs.py); the interpreter must give them all, bugs of
the code generator notwithstanding (it never runs generated code). The
deadlocks of tests/contract/deadlocks.py must be named with the runtime's
exact lines.
"""

from __future__ import annotations

import numpy as np
import pytest
from contract.check import assert_expected
from contract.deadlocks import DEADLOCKS, HEADER
from contract.programs import CASES, Case

import gasync
from gasync import reference


def plan_of(source: str, name: str = "prog", path: str = "") -> gasync.Program:
    return gasync.compile_source(source, path or f"<{name}>", {})


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_contract_case_on_the_reference(case: Case) -> None:
    program = gasync.compile_source(case.source, case.path or f"<{case.name}>", case.defines)
    assert_expected(case, reference.run(program.plan, dict(case.inputs)))


@pytest.mark.parametrize("name", list(DEADLOCKS))
def test_deadlock_names_every_waiting_task(name: str) -> None:
    source, lines = DEADLOCKS[name]
    with pytest.raises(reference.DeadlockError) as info:
        reference.run(plan_of(source, name).plan)
    assert str(info.value).splitlines() == [HEADER, *(f"  {line}" for line in lines)]


def test_a_loop_without_end_stops_at_the_step_limit() -> None:
    source = """
    shared c: i32 = 0;
    task spin { loop { c.fetch_add(1); } }
    task idle for i in 0..2 { yield_now().await; }
    """
    with pytest.raises(reference.StepLimitError) as info:
        reference.run(plan_of(source).plan, max_steps=500)
    assert str(info.value).splitlines() == [
        "the reference run passed its limit of 500 steps; unfinished tasks:",
        "  task spin running",
        "  task idle[0, 1] ready",
    ]


def test_outcome_is_shaped_and_typed_like_a_result() -> None:
    source = """
    buffer b: u32[2, 3] = iota;
    buffer f: f32[2] = fill(1.5);
    shared n: u64 = 7;
    shared x: f32 = 0.5;
    shared ok: bool = false;
    signal s;
    signal never;
    task main { b[1, 2] = 9; n.fetch_add(1); x.store(x + 1.0); ok.store(true); s.set(); }
    """
    out = reference.run(plan_of(source).plan)
    assert out.buffers["b"].dtype == np.uint32 and out.buffers["b"].shape == (2, 3)
    assert out.buffers["b"].tolist() == [[0, 1, 2], [3, 4, 9]]
    assert out.buffers["f"].dtype == np.float32
    assert out.shared == {"n": 8, "x": 1.5, "ok": True}
    assert [type(v) for v in out.shared.values()] == [int, float, bool]
    assert out.signals == {"s": True, "never": False}


def test_host_signal_arrives_at_its_virtual_time() -> None:
    source = """
    shared turns: u64 = 0;
    signal stop;
    task ticker { loop { if stop.is_set() { break; } turns.fetch_add(1); yield_now().await; } }
    """
    out = reference.run(plan_of(source).plan, signals={"stop": 0.001}, poll_ns=1000)
    assert out.signals["stop"] is True
    assert out.shared["turns"] == 1000  # one poll a microsecond until the millisecond is up


def test_sleep_advances_the_virtual_clock_only() -> None:
    source = """
    buffer order: i32[2] = zeros;
    shared next: i32 = 0;
    task slow { sleep(50_000_000_000).await; order[0] = next.fetch_add(1); }
    task quick { sleep(1_000).await; order[1] = next.fetch_add(1); }
    """
    out = reference.run(plan_of(source).plan)
    assert out.buffers["order"].tolist() == [1, 0]
    assert out.stats["virtual_ns"] >= 50_000_000_000


def test_an_index_out_of_bounds_stops_the_run_as_the_runtime_words_it() -> None:
    source = "buffer out: i32[4] = zeros;\nbuffer at: i64[4] = iota;\n"
    source += "task w for k in 0..4 {\n    out[at[k] + 1] = 1;\n}\n"
    with pytest.raises(gasync.GasyncError) as info:
        reference.run(plan_of(source, path="b.gasync").plan)
    err = info.value
    assert (err.code, err.line, err.column) == ("E0312", 4, 9)
    assert err.message == "index out of bounds in task w[3]: the length of 'out' is 4 but the index is 4"
