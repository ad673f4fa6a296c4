"""suite2.b3's rows without a GPU: its measurements replaced by fakes, the assembly and the failures are real.

A peer that fails (the graph WHILE loop that cannot be built, say) must leave
the other rows, name itself in the error, and add no ratio against itself.
"""

from __future__ import annotations

from typing import Any

import pytest
import suite2
from suite import Config, PartialFailure, Row


def _fake(monkeypatch: pytest.MonkeyPatch, us_per_step: dict[str, float], broken: str = "") -> None:
    def gasync_row(n: int, tol: float, variant: str, cfg: Config) -> Row:
        return Row("B3", f"gasync {variant}", us_per_step[variant], "us/step")

    def peer(case: str) -> Any:
        def solve(n: int, tol: float, reps: int) -> tuple[list[float], int]:
            if case == broken:
                raise RuntimeError("cuGraphInstantiate failed: CUDA_ERROR_NOT_SUPPORTED")
            k = suite2.converge_steps(tol)
            return [us_per_step[case] * k / 1e6] * reps, k

        return solve

    monkeypatch.setattr(suite2, "_gasync_converge", gasync_row)
    monkeypatch.setattr(suite2, "PEERS", {case: (peer(case), how) for case, (_, how) in suite2.PEERS.items()})


TIMES = {
    "parallel for + fetch_max": 76.0,
    "bulk for + fetch_max": 36.0,
    "parallel for reduce max": 5.0,
    "bulk for reduce max": 8.0,
    "hand-written persistent kernel": 2.0,
    "numba host loop": 80.0,
    "CuPy host loop": 20.0,
    "CUDA graph WHILE loop (step + test kernels)": 4.0,
    "CUDA graph WHILE loop (one fused kernel)": 3.0,
}


def test_every_variant_and_peer_gives_a_row_and_the_best_is_compared(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake(monkeypatch, TIMES)
    rows = {r.case: r for r in suite2.b3(Config(quick=True, reps=2))}
    assert rows["gasync best (parallel for reduce max)"].value == 5.0
    assert rows["hand-written persistent kernel"].value == pytest.approx(2.0)
    assert rows["gasync best / hand-written persistent kernel"].value == pytest.approx(2.5)
    assert rows["gasync best / hand-written persistent kernel"].goal == "<= 2.0"
    assert rows["gasync best / CUDA graph WHILE loop"].value == pytest.approx(5.0 / 3.0)  # the faster graph body
    assert rows["gasync best / CuPy host loop"].value == pytest.approx(0.25)
    assert all(r.unit in ("us/step", "ratio") for r in rows.values())


def test_a_peer_that_fails_is_named_and_the_rest_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = "CUDA graph WHILE loop (one fused kernel)"
    _fake(monkeypatch, TIMES, broken)
    with pytest.raises(PartialFailure) as info:
        suite2.b3(Config(quick=True, reps=2))
    assert str(info.value).startswith(f"{broken}: RuntimeError: cuGraphInstantiate failed")
    cases = {r.case: r for r in info.value.rows}
    assert broken not in cases and "CUDA graph WHILE loop (step + test kernels)" in cases
    assert cases["gasync best / CUDA graph WHILE loop"].value == pytest.approx(5.0 / 4.0)  # the body that ran
