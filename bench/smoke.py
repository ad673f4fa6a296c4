"""``run.py --sim-smoke``: every gasync program of the suite, tiny, on the simulator, values checked.

This checks the benchmark programs and their result checks, not speed (the
programs of B1, B2, B4, B5 and B5a both with their bounds checks and without,
suite.unchecked, as the GPU run measures them); it
needs neither a GPU nor CuPy, and runs as a test (tests/sim/test_bench_smoke.py).
The hand-written baselines are GPU only and skipped here (B3 names them).
"""

from __future__ import annotations

import tempfile
import time
import traceback
from collections.abc import Callable
from typing import Any

import baselines
import numpy as np
from suite import PROGRAMS, STENCIL, compile_chain, expect_chain, expect_ramp, unchecked
from suite2 import (
    CONVERGE,
    PEERS,
    compile_bulk,
    compile_converge,
    compile_loader,
    compile_pingpong,
    converge_steps,
    expect_converge,
    expect_pingpong,
)

import gasync
from gasync.runtime.options import Result

SIM_TIMEOUT_S = 60.0


def _b1() -> None:
    prog = gasync.compile(PROGRAMS / "b1_tasks.gasync", defines={"N": 64})
    for executor in ("queue", "spin"):
        expect_ramp(prog.run(backend="sim", executor=executor, timeout=SIM_TIMEOUT_S))
    expect_ramp(unchecked(prog).run(backend="sim", timeout=SIM_TIMEOUT_S))  # B1_unchecked's program


def _b2b() -> None:
    reps = 5
    for suspending in (False, True):
        for k in (0, 3):
            res = compile_chain(k, suspending).run(
                backend="sim", timeout=SIM_TIMEOUT_S, inputs={"reps": np.array([reps], np.int64)}
            )
            expect_chain(k, reps)(res)


def _b5a() -> None:
    n, w = 1024, 8
    prog = gasync.compile(PROGRAMS / "b5a_stage.gasync", defines={"N": n, "W": w})
    for variant in (prog, unchecked(prog)):
        res = variant.run(backend="sim", timeout=SIM_TIMEOUT_S, inputs=_affine_inputs(n))
        baselines.check_affine(res.buffers["x"], res.buffers["y"], "B5a gasync")


def _b2() -> None:
    reps = 5
    prog = compile_pingpong()
    for variant in (prog, unchecked(prog)):
        res = variant.run(backend="sim", timeout=SIM_TIMEOUT_S, inputs={"reps": np.array([reps], np.int64)})
        expect_pingpong(reps)(res)


def _b3() -> None:
    n, tol = 64, 1e-3  # 10 steps
    for variant in CONVERGE:
        expect_converge(n, tol, variant)(compile_converge(n, tol, variant).run(backend="sim", timeout=SIM_TIMEOUT_S))
        print(f"sim-smoke B3: gasync {variant}: {converge_steps(tol)} steps, values ok", flush=True)
    # the hand-written persistent kernel runs on the simulator in tests/bench/test_baselines_sim.py
    print(f"sim-smoke B3: skipped, GPU only: {', '.join(PEERS)}", flush=True)


def _affine_inputs(n: int) -> dict[str, np.ndarray[Any, Any]]:
    return {"x": (np.arange(n) % 1024 * 0.5).astype(np.float32), "y": np.full(n, -1.0, np.float32)}


def _b4() -> None:
    n = 1024
    for cap in (8, 64):  # 16 tiles: the spec's capacity fills, 64 does not
        prog = compile_loader(n, 64, 3, cap)
        for variant in (prog, unchecked(prog)) if cap == 8 else (prog,):
            res = variant.run(backend="sim", timeout=SIM_TIMEOUT_S, inputs=_affine_inputs(n))
            baselines.check_affine(res.buffers["x"], res.buffers["y"], f"B4 gasync, capacity {cap}")


def _b5() -> None:
    n = 1024
    prog = compile_bulk(n)
    for variant in (prog, unchecked(prog)):
        res = variant.run(backend="sim", timeout=SIM_TIMEOUT_S, inputs=_affine_inputs(n))
        baselines.check_affine(res.buffers["x"], res.buffers["y"], "B5 gasync")


def _b7() -> None:
    n = 640  # 10 tiles dealt round 3 groups (4, 3 and 3), or in runs (4, 4 and 2)
    defines = {"N": n, "GROUPS": 3, "TILE": 64, "STAGES": 2, "L": 2, "C": 2}
    prog = gasync.compile(PROGRAMS / "b7_staged.gasync", defines=defines)
    runs = gasync.compile(PROGRAMS / "b7_staged.gasync", defines={**defines, "RUNS": 1})
    for variant in (prog, unchecked(prog), runs):
        res = variant.run(backend="sim", timeout=SIM_TIMEOUT_S, inputs=_affine_inputs(n))
        baselines.check_affine(res.buffers["x"], res.buffers["y"], "B7 gasync")


def _b8() -> None:
    from suite3 import MATMUL

    prog = gasync.compile(MATMUL, defines={"N": 16, "T": 8})
    for variant in (prog, unchecked(prog)):
        res = variant.run(backend="sim", timeout=SIM_TIMEOUT_S)
        a, b = res.buffers["a"].astype(np.float64), res.buffers["b"].astype(np.float64)
        if not np.allclose(res.buffers["c"], a @ b, rtol=1e-5):
            raise AssertionError("B8 gasync: c != a @ b")


def _t1() -> None:
    from gasync import runtime
    from gasync.codegen import generate

    n = 64
    traced = generate(gasync.compile(PROGRAMS / "b1_tasks.gasync", defines={"N": n}).plan, trace=True)
    for cap in (16, 4 * n):  # one that drops events, one with room for all
        res = runtime.run(traced, runtime.RunOptions(backend="sim", timeout_s=SIM_TIMEOUT_S, trace_capacity=cap))
        expect_ramp(res)
        if res.trace is None or not res.trace.events or len(res.trace.events) > cap:
            raise AssertionError(f"T1: capacity {cap}: no trace, or more events than the capacity")
        if (res.trace.dropped > 0) != (cap == 16):
            raise AssertionError(f"T1: capacity {cap}: {res.trace.dropped} events dropped")


def _b6() -> None:
    size = 16
    prog = gasync.compile(STENCIL, defines={"H": size, "W": size})
    with tempfile.TemporaryDirectory(prefix="gasync-smoke-") as tmp:
        res = prog.run(backend="sim", timeout=SIM_TIMEOUT_S, cache_dir=tmp)
    _check_stencil(res)


def _check_stencil(res: Result) -> None:
    img, mag = res.buffers["img"].astype(np.float64), res.buffers["mag"]
    smooth = np.zeros_like(img)
    smooth[1:-1, 1:-1] = (
        sum(
            img[1 + dr : img.shape[0] - 1 + dr, 1 + dc : img.shape[1] - 1 + dc]
            for dr in (-1, 0, 1)
            for dc in (-1, 0, 1)
        )
        / 9.0
    )
    want = np.zeros_like(img)
    gx = (smooth[1:-1, 2:] - smooth[1:-1, :-2]) * 0.5
    gy = (smooth[2:, 1:-1] - smooth[:-2, 1:-1]) * 0.5
    want[1:-1, 1:-1] = np.sqrt(gx * gx + gy * gy)
    if not np.allclose(mag, want, atol=1e-5):
        raise AssertionError("B6 stencil2d: mag differs from numpy")
    if res.shared["edge_pixels"] != int((mag > np.float32(0.1)).sum()):
        raise AssertionError("B6 stencil2d: edge_pixels does not count mag > THRESHOLD")


CHECKS: dict[str, Callable[[], None]] = {
    "B1": _b1,
    "B2": _b2,
    "B2b": _b2b,
    "B3": _b3,
    "B4": _b4,
    "B5": _b5,
    "B5a": _b5a,
    "B6": _b6,
    "T1": _t1,
    "B7": _b7,
    "B8": _b8,
}


def smoke(only: list[str]) -> int:
    """Run the checks named in ``only``; print one line each; 0 if all pass."""
    failed = 0
    for name in only:
        t0 = time.perf_counter()
        try:
            CHECKS[name]()
            print(f"sim-smoke {name}: ok ({time.perf_counter() - t0:.1f} s)", flush=True)
        except Exception:
            failed += 1
            print(f"sim-smoke {name}: FAILED", flush=True)
            traceback.print_exc()
    return 1 if failed else 0
