"""The benchmarks B2, B3, B4, B5 and T1, each measured beside its baseline (see suite.py for the conventions).

B2: cross-warp hand-off latency (two tasks ping-pong over two channels) vs
CUDA graph replay per node. B3: a data-dependent loop run to convergence in
one kernel vs the same loop driven from the host. B4: one loader task feeding
compute tasks over a channel vs one fused Numba kernel. B5: one task's `bulk
for` vs a hand-written grid-stride kernel. T1: B1 with tracing on vs off.
"""

from __future__ import annotations

from typing import Any

import baselines
import numpy as np
from suite import PROGRAMS, TIMEOUT_S, Config, Row, expect_ramp, measured, median, run_checked, timed_runs

import gasync
from gasync.api import Program
from gasync.runtime.options import Result

# ---------------------------------------------------------------- B2


def compile_pingpong() -> Program:
    return gasync.compile(PROGRAMS / "b2_pingpong.gasync")


def expect_pingpong(reps: int) -> Any:
    def check(res: Result) -> None:
        got = [int(v) for v in res.buffers["out"]]
        want = [reps * (reps + 1) // 2, reps]  # a sums k + 1 for k in 0..reps; b counts its receives
        if got != want:
            raise AssertionError(f"B2: {reps} round trips: out = {got}, expected {want}")

    return check


def b2(cfg: Config) -> list[Row]:
    prog = compile_pingpong()
    target = cfg.pick(0.02, 0.005)
    reps = 2000
    for _ in range(3):  # calibrate the round trips to about `target` seconds
        stats = run_checked(prog, expect_pingpong(reps), inputs={"reps": np.array([reps], np.int64)})
        t = stats["kernel_ms"] / 1e3
        if t >= 0.5 * target:
            break
        reps = int(min(reps * target / max(t, 1e-5), 64 * reps, 1 << 26))
    inputs = {"reps": np.array([reps], np.int64)}
    run_checked(prog, expect_pingpong(reps), inputs=inputs)
    samples, stats = timed_runs(prog, cfg.reps, inputs=inputs)
    per = [s / (2 * reps) * 1e6 for s in samples]
    note = f"{reps:,} round trips; kernel {median(samples) * 1e3:.2f} ms; {stats['executors']} executors"
    nodes = 1000
    graph = [s * 1e6 for s in baselines.cupy_graph_per_node(nodes, cfg.reps)]
    gas = measured("B2", "gasync ping-pong hand-off", per, "us/hand-off", "<= 0.3 us", note)
    base = measured("B2", "CUDA graph replay per node", graph, "us/node", note=f"{nodes} one-thread kernel nodes")
    return [gas, base, Row("B2", "graph node / gasync hand-off", base.value / gas.value, "ratio")]


# ---------------------------------------------------------------- B3


def converge_steps(tol: float) -> int:
    """Steps of B3's loop: the residual after k steps is exactly 2^-k; the loop stops once it is < tol."""
    k = 1
    while 2.0**-k >= tol:
        k += 1
    return k


def compile_converge(n: int, tol: float, bulk: bool) -> Program:
    name = "b3_converge_bulk.gasync" if bulk else "b3_converge.gasync"
    return gasync.compile(PROGRAMS / name, defines={"N": n, "TOL": repr(float(tol))})


def expect_converge(n: int, tol: float) -> Any:
    def check(res: Result) -> None:
        k = converge_steps(tol)
        if int(res.shared["iters"]) != k:
            raise AssertionError(f"B3: {res.shared['iters']} steps, expected {k}")
        if not np.array_equal(res.buffers["x"], np.full(n, 2.0**-k)):
            raise AssertionError(f"B3: x != 2^-{k} after {k} steps")
        if float(res.shared["resid"]) != 2.0**-k:
            raise AssertionError(f"B3: residual {res.shared['resid']}, expected 2^-{k}")

    return check


def b3(cfg: Config) -> list[Row]:
    n, tol = 4096, cfg.pick(1e-300, 1e-30)
    k = converge_steps(tol)
    host, steps = baselines.numba_converge_host(n, tol, cfg.reps)
    if steps != k:
        raise AssertionError(f"B3 host-driven baseline: {steps} steps, expected {k}")
    rows = []
    for bulk in (False, True):
        prog = compile_converge(n, tol, bulk)
        run_checked(prog, expect_converge(n, tol))
        samples, stats = timed_runs(prog, cfg.reps)
        kind = "bulk for" if bulk else "parallel for"
        note = f"{k} steps over {n:,} f64; {median(samples) / k * 1e6:.2f} us per step; {stats['executors']} executors"
        rows.append(measured("B3", f"gasync one kernel ({kind})", [s * 1e3 for s in samples], "ms", note=note))
        rows.append(Row("B3", f"speedup host-driven / gasync ({kind})", median(host) / median(samples), "x", ">= 20x"))
    note = f"{k} launches of a {-(-n // 256)}x256 kernel, each + a copy of the residual to pinned memory + a test"
    note += f"; {median(host) / k * 1e6:.2f} us per step"
    rows.insert(0, measured("B3", "host-driven numba loop", [s * 1e3 for s in host], "ms", note=note))
    return rows


# ---------------------------------------------------------------- B4 and B5


def compile_loader(n: int, tile: int, c: int) -> Program:
    return gasync.compile(PROGRAMS / "b4_loader.gasync", defines={"N": n, "TILE": tile, "C": c})


def compile_bulk(n: int) -> Program:
    return gasync.compile(PROGRAMS / "b5_bulk.gasync", defines={"N": n})


def _affine_check(label: str) -> Any:
    def check(res: Result) -> None:
        baselines.check_affine(res.buffers["x"], res.buffers["y"], label)

    return check


def _throughput_rows(
    bench: str, prog: Program, n: int, x: Any, y: Any, cfg: Config, case: str, note: str, goal: str
) -> list[Row]:
    """gasync's and the grid-stride Numba kernel's GB/s (8 bytes per element), and their ratio."""
    baselines.fill(y, -1.0)
    run_checked(prog, _affine_check(f"{bench} gasync"), inputs={"x": x, "y": y})
    samples, stats = timed_runs(prog, cfg.reps, inputs={"x": x, "y": y})
    gas = [8 * n / s / 1e9 for s in samples]
    baselines.fill(y, -1.0)  # so that the baseline's check cannot pass on gasync's output
    ref = [8 * n / s / 1e9 for s in baselines.numba_affine(x, y, cfg.reps, grid_stride=True)]
    baselines.check_affine(x, y, f"{bench} numba")
    note = f"{stats['executors']} executors; kernel {median(samples) * 1e3:.2f} ms; {note}"
    return [
        measured(bench, case, gas, "GB/s", note=note),
        measured(bench, "numba grid-stride kernel", ref, "GB/s", note="SMs x 8 blocks of 256 threads"),
        Row(bench, "gasync / numba grid-stride", median(gas) / median(ref), "ratio", goal),
    ]


def b4(cfg: Config) -> list[Row]:
    n, tile = cfg.pick(1 << 26, 1 << 24), 65536
    x, y = baselines.device_input(n)
    c = 512
    prog = compile_loader(n, tile, c)
    baselines.fill(y, -1.0)
    executors = run_checked(prog, _affine_check("B4 gasync"), inputs={"x": x, "y": y})["executors"]
    if executors - 1 != c and executors > 1:  # one compute task per executor but the loader's
        c = executors - 1
        prog = compile_loader(n, tile, c)
    note = f"1 loader + {c} compute tasks, {n // tile:,} tiles of {tile:,}"
    return _throughput_rows("B4", prog, n, x, y, cfg, f"gasync loader + compute, N={n:,}", note, ">= 0.85")


def b5(cfg: Config) -> list[Row]:
    n = cfg.pick(1 << 28, 1 << 24)
    x, y = baselines.device_input(n)
    prog = compile_bulk(n)
    return _throughput_rows("B5", prog, n, x, y, cfg, f"gasync bulk for, N={n:,}", "one task", ">= 0.95")


# ---------------------------------------------------------------- T1


def t1(cfg: Config) -> list[Row]:
    from gasync import runtime
    from gasync.codegen import generate

    rows = []
    default = runtime.RunOptions().trace_capacity
    for n in cfg.pick((1 << 16, 1 << 20), (1 << 16,)):
        prog = gasync.compile(PROGRAMS / "b1_tasks.gasync", defines={"N": n})
        traced = generate(prog.plan, trace=True)
        caps = [default] if n <= default else [default, 2 * n + 65536]  # at 1M: the default drops; then room for all
        run_checked(prog, expect_ramp)
        off, _ = timed_runs(prog, cfg.reps)
        per_off = [s / n * 1e9 for s in off]
        rows.append(measured("T1", f"trace off, N={n:,}", per_off, "ns/task"))
        for cap in caps:
            options = runtime.RunOptions(backend="cuda", timeout_s=TIMEOUT_S, trace_capacity=cap)
            first = runtime.run(traced, options)
            expect_ramp(first)
            if first.trace is None or not first.trace.events:
                raise AssertionError("T1: a traced run gave no trace events")
            on, dropped, events = [], [], []
            for _ in range(cfg.reps):
                res = runtime.run(traced, options)
                on.append(res.stats["kernel_ms"] / 1e3)
                dropped.append(res.trace.dropped)
                events.append(len(res.trace.events))
            per_on = [s / n * 1e9 for s in on]
            note = f"capacity {cap:,} events: {max(events):,} recorded, {max(dropped):,} dropped"
            on_row = measured("T1", f"trace on, N={n:,}, capacity {cap:,}", per_on, "ns/task", note=note)
            rows.append(on_row)
            ratio = median(on) / median(off)
            rows.append(Row("T1", f"trace on / off, N={n:,}, capacity {cap:,}", ratio, "ratio", note=note))
    return rows


BENCHMARKS = {"B2": b2, "B3": b3, "B4": b4, "B5": b5, "T1": t1}
