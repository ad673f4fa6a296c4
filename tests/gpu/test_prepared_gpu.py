"""Prepared launches on a real GPU (runtime/prepared.py): the device state kept between runs,
reset before each, with the kernel's parameters marshalled once.

Every run must be exactly as fresh as one through the compiled kernel's own launch (which
allocates every array anew): with new inputs, after a deadlocked or timed-out run, with
host signals, with device arrays in and out. ``stats["launch_path"]`` says which launch
ran; each test asserts it, so a silent fall back to the old path fails here.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from contract.check import assert_expected, assert_same_results, case_params, run_case
from contract.programs import CASES, Case

import gasync
from gasync.runtime import buffers, kernelargs, prepared
from gasync.runtime.errors import DeadlockError, RunTimeoutError

pytestmark = [pytest.mark.gpu, pytest.mark.timeout(300)]

SCALE = """
const N: i64 = 4096;
buffer x: f32[N] = input;
buffer r: f32[N] = random(3);
buffer y: f32[N] = zeros;
shared total: i64 = 0;
task main {
    bulk for i in 0..N { y[i] = 2.0 * x[i] + r[i]; }
    total.fetch_add(1);
}
"""
STUCK = """
signal s;
signal stop;
buffer x: i32[4] = input;
buffer o: i32[4] = zeros;
shared hits: i64 = 0;
task w for i in 0..4 {
    hits.fetch_add(1);
    if x[i] == 1 { s.wait().await; }
    if x[i] == 2 { loop { if stop.is_set() { break; } yield_now().await; } }
    o[i] = x[i] + 10;
}
"""
PREPARED = "prepared"


@pytest.fixture(autouse=True)
def _own_cache(monkeypatch: pytest.MonkeyPatch) -> Iterator[prepared.Cache]:
    """Each test starts with no prepared launch, and its launches are freed after it."""
    cache = prepared.Cache()
    monkeypatch.setattr(prepared, "CACHE", cache)
    yield cache
    cache.clear()


def _unprepared(monkeypatch: pytest.MonkeyPatch, program: gasync.Program, **run: Any) -> gasync.Result:
    """The same run through the compiled kernel's own launch."""
    with monkeypatch.context() as m:
        m.setattr(prepared.CACHE, "max_entries", 0)
        res = program.run(backend="cuda", **run)
    assert res.stats["launch_path"].startswith("compiled kernel: prepared launches are off")
    return res


def _random() -> np.ndarray[Any, Any]:
    """SCALE's buffer r as the program initialises it."""
    plan = gasync.compile_source(SCALE, "scale.gasync").plan
    return buffers.initial(next(b for b in plan.buffers if b.name == "r"))


def test_new_host_inputs_each_run_reuse_one_prepared_launch() -> None:
    program = gasync.compile_source(SCALE, "scale.gasync")
    r = _random()
    for k in range(1, 4):
        x = np.arange(4096, dtype=np.float32) * k
        res = program.run(backend="cuda", inputs={"x": x})
        assert res.stats["launch_path"] == PREPARED
        np.testing.assert_array_equal(res.buffers["y"], 2.0 * x + r)
        assert res.shared["total"] == 1  # 1, not k: the shared scalar was reset
        assert res.stats["prepare_ms"] >= 0 and res.stats["kernel_ms"] >= res.stats["launch_ms"]
    assert (prepared.CACHE.misses, prepared.CACHE.hits, len(prepared.CACHE)) == (1, 2, 1)


def test_new_device_inputs_are_used_in_place_and_results_outlive_the_next_run() -> None:
    from numba import cuda

    program = gasync.compile_source(SCALE, "scale.gasync")
    r = _random()
    xs = [np.arange(4096, dtype=np.float32) * k for k in (1, 2)]
    runs = [program.run(backend="cuda", inputs={"x": cuda.to_device(x)}) for x in xs]
    for x, res in zip(xs, runs, strict=True):  # the first result still holds the first run's y
        assert res.stats["launch_path"] == PREPARED
        np.testing.assert_array_equal(res.buffers["y"].copy_to_host(), 2.0 * x + r)
    given = cuda.to_device(xs[0])
    res = program.run(backend="cuda", inputs={"x": given})
    assert res.buffers["x"] is given  # the caller's own array, as runtime/outputs.py promises
    assert prepared.CACHE.hits == 2


def test_cupy_in_cupy_out_twice() -> None:
    cupy = pytest.importorskip("cupy")
    program = gasync.compile_source(SCALE, "scale.gasync")
    r = _random()
    first = program.run(backend="cuda", inputs={"x": cupy.arange(4096, dtype=cupy.float32)})
    second = program.run(backend="cuda", inputs={"x": cupy.full(4096, 5.0, dtype=cupy.float32)})
    assert first.stats["launch_path"] == second.stats["launch_path"] == PREPARED
    np.testing.assert_array_equal(cupy.asnumpy(first.buffers["y"]), 2.0 * np.arange(4096, dtype=np.float32) + r)
    np.testing.assert_array_equal(cupy.asnumpy(second.buffers["y"]), 2.0 * np.full(4096, 5.0, np.float32) + r)


def test_a_run_after_a_deadlocked_run_is_fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    program = gasync.compile_source(STUCK, "stuck.gasync")
    with pytest.raises(DeadlockError, match=r"task w\[1\] waits on signal s"):
        program.run(backend="cuda", inputs={"x": np.array([0, 1, 0, 0], np.int32)}, timeout=60)
    x = np.array([0, 0, 3, 0], np.int32)
    res = program.run(backend="cuda", inputs={"x": x}, timeout=60)
    assert res.stats["launch_path"] == PREPARED and prepared.CACHE.hits == 1
    assert res.buffers["o"].tolist() == [10, 10, 13, 10] and res.shared["hits"] == 4
    _same_as_unprepared(monkeypatch, program, res, inputs={"x": x}, timeout=60)


def test_a_run_after_a_timed_out_run_is_fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    program = gasync.compile_source(STUCK, "stuck.gasync")
    with pytest.raises(RunTimeoutError):
        program.run(backend="cuda", inputs={"x": np.array([0, 2, 0, 0], np.int32)}, timeout=0.2)
    x = np.array([0, 0, 0, 3], np.int32)
    res = program.run(backend="cuda", inputs={"x": x}, timeout=0.2)  # the same key: the same prepared launch
    assert res.stats["launch_path"] == PREPARED and prepared.CACHE.hits == 1
    assert res.buffers["o"].tolist() == [10, 10, 10, 13] and res.shared["hits"] == 4
    _same_as_unprepared(monkeypatch, program, res, inputs={"x": x}, timeout=0.2)


def _same_as_unprepared(
    monkeypatch: pytest.MonkeyPatch, program: gasync.Program, res: gasync.Result, **run: Any
) -> None:
    old = _unprepared(monkeypatch, program, **run)
    for name in res.buffers:
        np.testing.assert_array_equal(res.buffers[name], old.buffers[name], err_msg=name)
    assert res.shared == old.shared and res.signals == old.signals
    for stat in ("polls", "wakes", "closed_sends", "executors", "blocks", "threads_per_block", "instances"):
        assert res.stats[stat] == old.stats[stat], stat


def test_host_signals_reach_every_run() -> None:
    program = gasync.compile(gasync.__path__[0] + "/samples/counter.gasync")
    for _ in range(3):  # HOSTSIG is zeroed before each run: a stale 1 would stop the tickers at once
        res = program.run(backend="cuda", signals={"stop": 0.005}, timeout=60)
        assert res.stats["launch_path"] == PREPARED
        assert res.signals["stop"] is True and res.shared["counter"] > 0
    assert prepared.CACHE.hits == 2


def test_eviction_rebuilds_and_frees() -> None:
    prepared.CACHE.max_entries = 1
    a = gasync.compile_source(SCALE, "scale.gasync")
    b = gasync.compile_source(STUCK, "stuck.gasync")
    x = np.ones(4096, np.float32)
    for program, inputs in ((a, {"x": x}), (b, {"x": np.zeros(4, np.int32)}), (a, {"x": x})):
        assert program.run(backend="cuda", inputs=inputs, timeout=60).stats["launch_path"] == PREPARED
    assert (prepared.CACHE.misses, prepared.CACHE.hits, len(prepared.CACHE)) == (3, 0, 1)


def test_a_state_over_the_bound_takes_the_compiled_kernels_launch() -> None:
    prepared.CACHE.max_bytes = 1024
    res = gasync.compile_source(SCALE, "scale.gasync").run(backend="cuda", inputs={"x": np.ones(4096, np.float32)})
    assert res.stats["launch_path"].startswith("compiled kernel: its state (")
    assert res.shared["total"] == 1 and len(prepared.CACHE) == 0


def test_two_threads_running_one_program_both_get_their_results() -> None:
    program = gasync.compile_source(SCALE, "scale.gasync")
    r = _random()
    paths: list[str] = []
    failures: list[str] = []

    def work(k: int) -> None:
        for j in range(4):
            x = np.full(4096, float(10 * k + j), np.float32)
            res = program.run(backend="cuda", inputs={"x": x})
            paths.append(res.stats["launch_path"])
            if not np.array_equal(res.buffers["y"], 2.0 * x + r) or res.shared["total"] != 1:
                failures.append(f"thread {k} run {j}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == [] and len(paths) == 8
    assert all(p == PREPARED or p.endswith("in use by another run") for p in paths), paths


@pytest.mark.parametrize("case", case_params(CASES, ("cuda",)))
def test_contract_results_are_those_of_the_compiled_kernels_launch(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as m:
        m.setattr(prepared.CACHE, "max_entries", 0)
        old = run_case(case, "cuda", timeout=60.0)
    assert old.stats["launch_path"].startswith("compiled kernel")
    built, kept = run_case(case, "cuda", timeout=60.0), run_case(case, "cuda", timeout=60.0)
    assert (built.stats["launch_path"], kept.stats["launch_path"]) == (PREPARED, PREPARED)
    assert prepared.CACHE.hits == 1, "the second run did not reuse the first one's prepared launch"
    for res in (built, kept):
        assert_expected(case, res)
        assert_same_results(case, res, old)


def test_programs_that_differ_only_in_initial_values_each_start_from_their_own() -> None:
    # one generated module (the host fills buffers and shared scalars), so one prepared launch
    # would have started the second program from the first's pristine bytes (found by the
    # differential test on the GPU: an `= iota` buffer read as the `= zeros` of the one before)
    text = (
        "buffer b: i64[8] = {};\nshared s: i64 = {};\nbuffer o: i64[2] = zeros;\ntask t {{ o[0] = b[3]; o[1] = s; }}\n"
    )
    for init, start, want in (("zeros", 0, [0, 0]), ("iota", 0, [3, 0]), ("fill(7)", 5, [7, 5]), ("iota", 9, [3, 9])):
        res = gasync.compile_source(text.format(init, start), "init.gasync").run(backend="cuda")
        assert res.stats["launch_path"] == PREPARED
        assert res.stats["launch_call"] == (
            "cuLaunchKernel" if kernelargs.DIRECT else "cuda.core launch: DIRECT is off"
        )
        assert res.buffers["o"].tolist() == want, (init, start)
