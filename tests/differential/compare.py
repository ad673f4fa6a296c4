"""Comparing a backend's Result with the reference interpreter's Outcome.

On the simulator every value must be equal, floats bit for bit (NaN equal to
NaN): the generated programs fix the order of every float operation (float
values never meet in an atomic, and each buffer element is written by one
task in program order), and the simulator runs the same Python math
functions the interpreter calls. On a GPU two things may differ in the last
bits, and only there is a tolerance used: CUDA's ``expf``, ``logf``,
``sinf``, ``cosf`` and ``powf`` are within a few ulp rather than correctly
rounded, and the compiler may contract ``a * b + c`` into one fused
multiply-add (the language does not forbid it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

import gasync
from gasync import reference
from gasync.runtime.options import Result

GPU_RTOL = 1e-4
GPU_ATOL = 1e-6


@dataclass(frozen=True)
class Tolerance:
    rtol: float = 0.0
    atol: float = 0.0


EXACT = Tolerance()
TOLERANCES = {"sim": EXACT, "cuda": Tolerance(GPU_RTOL, GPU_ATOL)}


def differences(want: reference.Outcome, got: Result, tol: Tolerance = EXACT) -> list[str]:
    """One line per buffer, shared scalar, signal or dropped-send count that differs."""
    out = []
    for name, arr in want.buffers.items():
        other = np.asarray(got.buffers[name])
        if other.dtype != arr.dtype or other.shape != arr.shape:
            out.append(f"buffer {name}: {other.dtype}{list(other.shape)}, reference {arr.dtype}{list(arr.shape)}")
        elif not _equal(arr, other, tol):
            bad = np.argwhere(~_close(arr, other, tol))[:4].tolist()
            shown = ", ".join(f"{ix}: {other[tuple(ix)]!r} (reference {arr[tuple(ix)]!r})" for ix in bad)
            out.append(f"buffer {name}: {shown}")
    for name, value in want.shared.items():
        if not _equal(np.asarray(value), np.asarray(got.shared[name]), tol):
            out.append(f"shared {name}: {got.shared[name]!r} (reference {value!r})")
    if got.signals != want.signals:
        out.append(f"signals: {got.signals} (reference {want.signals})")
    if got.stats.get("closed_sends") != want.stats["closed_sends"]:
        out.append(f"closed sends: {got.stats.get('closed_sends')} (reference {want.stats['closed_sends']})")
    return out


def _close(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any], tol: Tolerance) -> np.ndarray[Any, Any]:
    if a.dtype.kind != "f":
        return np.asarray(a == b)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    if tol == EXACT:
        return np.asarray(same)
    return np.asarray(same | np.isclose(a, b, rtol=tol.rtol, atol=tol.atol))


def _equal(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any], tol: Tolerance) -> bool:
    return bool(np.all(_close(a, b, tol)))


def run_both(text: str, inputs: dict[str, Any], backend: str, timeout: float = 120.0) -> list[str]:
    """Compile ``text``, run it on ``backend`` and on the reference; the differences (or the
    error one of them raised, as one line)."""
    program = gasync.compile_source(text, "<differential>")
    want = reference.run(program.plan, inputs)
    try:
        got = program.run(backend=backend, inputs=dict(inputs), timeout=timeout)
    except gasync.GasyncError as exc:
        return [f"{backend} failed: {type(exc).__name__}: {exc}"]
    return differences(want, got, TOLERANCES[backend])
