"""Running a contract case on a backend and comparing its result with the expected values."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from contract.programs import Case

import gasync
from gasync.runtime.options import Result

SIM_TIMEOUT_S = 60.0


def case_params(cases: list[Case], backends: tuple[str, ...]) -> list[Any]:
    """Cases as pytest params; a case with a known bug on any of ``backends`` is a strict xfail."""
    out = []
    for case in cases:
        buggy = any(case.buggy_on(b) for b in backends)
        marks = [pytest.mark.xfail(strict=True, reason=f"BUG: {case.bug}")] if buggy else []
        out.append(pytest.param(case, id=case.name, marks=marks))
    return out


def run_case(case: Case, backend: str, **options: Any) -> Result:
    """Compile ``case`` and run it on ``backend`` with its inputs."""
    program = gasync.compile_source(case.source, case.path or f"<{case.name}>", case.defines)
    options.setdefault("timeout", case.timeout or SIM_TIMEOUT_S)
    return program.run(backend=backend, inputs=dict(case.inputs), **options)


def value_of(result: Result, name: str) -> Any:
    if name in result.buffers:
        return result.buffers[name]
    assert name in result.shared, f"no buffer or shared scalar named {name!r} in the result"
    return result.shared[name]


def assert_expected(case: Case, result: Result) -> None:
    """Every expected buffer and shared scalar: exact for integers, within ``case.rtol`` for floats."""
    for name, want in case.expect.items():
        got = np.asarray(value_of(result, name))
        expected = np.asarray(want, dtype=got.dtype) if np.asarray(want).dtype != object else np.asarray(want)
        assert got.shape == expected.shape, f"{case.name}: {name} has shape {got.shape}, expected {expected.shape}"
        if got.dtype.kind == "f" and case.rtol:
            np.testing.assert_allclose(got, expected, rtol=case.rtol, atol=0, err_msg=f"{case.name}: {name}")
        else:
            np.testing.assert_array_equal(got, expected, err_msg=f"{case.name}: {name}")
    for name, want in case.stats.items():
        assert result.stats[name] == want, f"{case.name}: stats[{name!r}] is {result.stats[name]!r}, expected {want!r}"
    for name, flag in case.signals.items():
        assert result.signals[name] is flag or result.signals[name] == flag, f"{case.name}: signal {name}"


def assert_same_results(case: Case, got: Result, reference: Result, rtol: float = 1e-5) -> None:
    """``got`` equals ``reference`` on every buffer, shared scalar and signal (floats within ``rtol``)."""
    assert got.buffers.keys() == reference.buffers.keys()
    assert got.shared.keys() == reference.shared.keys()
    for name in (*reference.buffers, *reference.shared):
        a, b = np.asarray(value_of(got, name)), np.asarray(value_of(reference, name))
        assert a.dtype == b.dtype and a.shape == b.shape, f"{case.name}: {name}"
        if a.dtype.kind == "f":
            np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-12, err_msg=f"{case.name}: {name}")
        else:
            np.testing.assert_array_equal(a, b, err_msg=f"{case.name}: {name}")
    assert got.signals == reference.signals


def check_losing_bulk_arm(res: Result) -> None:
    """What holds whichever arm wins: every bulk job posted ran to its end, untouched by later ones."""
    wins = res.buffers["out"].tolist()
    assert sum(wins) == 3
    assert np.all(res.buffers["b"] == 6)
    a = res.buffers["a"]
    assert np.all(a == a[0]) and a[0] >= wins[0]
