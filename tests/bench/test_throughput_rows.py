"""suite.throughput_rows without a GPU: its runs replaced by fakes, the order and the rows are real.

Every program is checked before any is timed, the timed runs go round (each round
times every program once, in one order), and each row gets its own program's samples.
"""

from __future__ import annotations

from typing import Any

import baselines
import pytest
import suite
from suite import Config, GasyncCase


def test_timed_runs_go_round_and_each_row_gets_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    secs = {"a": 0.001, "b": 0.002, "unchecked a": 0.003, "unchecked b": 0.004}
    secs |= {"grid-stride": 0.0005, "per-warp contiguous": 0.00025}

    def timed_run(prog: str, x: Any, y: Any) -> tuple[float, dict[str, Any]]:
        calls.append(f"time {prog}")
        stats = {"executors": 8, "device_ms": 0.1, "polls": 1, "wakes": 0, "waits_in_place": 0}
        return secs[prog] * (1 + 0.01 * calls.count(f"time {prog}")), stats

    def timed_baseline(x: Any, y: Any, kind: str) -> tuple[float, dict[str, Any]]:
        calls.append(f"time {kind}")
        return secs[kind], {}

    monkeypatch.setattr(suite, "_timed_run", timed_run)
    monkeypatch.setattr(suite, "_timed_baseline", timed_baseline)
    monkeypatch.setattr(suite, "unchecked", lambda prog: f"unchecked {prog}")
    monkeypatch.setattr(suite, "checks_note", lambda prog, variant: "checked")
    monkeypatch.setattr(suite, "run_checked", lambda prog, check, **kw: calls.append(f"check {prog}"))
    monkeypatch.setattr(baselines, "fill", lambda y, v: None)
    monkeypatch.setattr(baselines, "numba_affine", lambda x, y, reps, kind: calls.append(f"check {kind}") or [0.0])
    monkeypatch.setattr(baselines, "check_affine", lambda x, y, label: None)
    gpu = {"grid-stride": [0.41, 0.4, 0.42], "per-warp contiguous": [0.2, 0.21, 0.19]}
    monkeypatch.setattr(baselines, "affine_device_ms", lambda x, y, reps, kind: gpu[kind][:reps])
    cases = [GasyncCase("A", "a", "note a", goal=">= 0.9"), GasyncCase("B", "b", "note b", tag=", b")]  # type: ignore[arg-type]
    n = 1000
    rows = suite.throughput_rows("BX", cases, n, None, None, Config(reps=3))
    programs = ["a", "b", "unchecked a", "unchecked b", "grid-stride", "per-warp contiguous"]
    assert calls[:6] == [f"check {p}" for p in programs]
    assert calls[6:] == [f"time {p}" for p in programs] * 3
    by_case = {r.case: r for r in rows}
    assert by_case["A"].samples == pytest.approx([8 * n / (0.001 * (1 + 0.01 * k)) / 1e9 for k in (1, 2, 3)])
    assert by_case["unchecked: B"].value == pytest.approx(8 * n / (0.004 * 1.02) / 1e9)
    best = 8 * n / 0.00025 / 1e9
    assert by_case["gasync / best hand-written"].value == pytest.approx(by_case["A"].value / best)
    assert by_case["gasync / best hand-written"].goal == ">= 0.9"
    grid = by_case[baselines.AFFINE["grid-stride"][0]]
    assert grid.note.endswith("; kernel 0.50 ms (launch + sync), on the GPU 0.410 ms (events)")
    assert by_case[baselines.AFFINE["per-warp contiguous"][0]].note.endswith("on the GPU 0.200 ms (events)")
    assert by_case["gasync / numba grid-stride, b"].value == pytest.approx(by_case["B"].value / (8 * n / 0.0005 / 1e9))
