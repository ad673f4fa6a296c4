"""The benchmarks of issue 4 (B1, B2b, B5a, B6), each measured beside its baseline.

Every benchmark is a function ``(cfg) -> list[Row]``. Each gasync program is
run once untimed (JIT or cache load, module load, and a check of its
results), then ``cfg.reps`` times; a row reports the median of those runs.
Times are the runtime's ``kernel_ms`` stat: host wall time of the launch of
the persistent kernel plus the synchronisation, so the executor's start and
exit are included, host-side allocation and copies are not.
"""

from __future__ import annotations

import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import baselines
import numpy as np

import gasync
from gasync.api import Program
from gasync.runtime.options import Result

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
ROOT = HERE.parent
STENCIL = ROOT / "samples" / "stencil2d.gasync"
TIMEOUT_S = 120.0
UNCHECKED = "unchecked: "  # a row of gasync's program with its run-time bounds checks off: its case's prefix
SAME_CODE = "the same generated code as with checks on: every index proven"  # summary.py reads it from notes


def unchecked(prog: Program) -> Program:
    """``prog`` generated without the run-time bounds checks the planner could not prove away
    (``run(checked=False)``), once, so that every timed run of it is the same module."""
    from gasync.codegen import generate

    return Program(generate(prog.plan, trace=prog.generated.trace, checked=False), prog.options)


def checks_note(on: Program, off: Program) -> str:
    """What an unchecked row's note says of the checks its program left out: none (the two
    modules are the same source) or how many access sites the checked one tests at run time."""
    if on.generated.source == off.generated.source:
        return SAME_CODE
    return f"the checked program tests {on.generated.check_sites} access sites at run time"


@dataclass(frozen=True)
class Config:
    quick: bool = False
    reps: int = 3

    def pick(self, full: Any, quick: Any) -> Any:
        return quick if self.quick else full


@dataclass
class Row:
    bench: str
    case: str
    value: float
    unit: str
    goal: str = ""
    note: str = ""
    samples: list[float] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class PartialFailure(Exception):
    """A benchmark some of whose measurements failed: ``rows`` are those that did not, and bench/run.py keeps
    them; the message names those that did, and becomes the benchmark's error (its FAILED row)."""

    def __init__(self, rows: list[Row], message: str) -> None:
        super().__init__(message)
        self.rows = rows


def median(xs: list[float]) -> float:
    return float(statistics.median(xs))


def measured(bench: str, case: str, samples: list[float], unit: str, goal: str = "", note: str = "") -> Row:
    """A row whose value is the median of ``samples``."""
    return Row(bench, case, median(samples), unit, goal, note, samples)


def chain_source(k: int, suspending: bool) -> str:
    """B2b's program: ``main`` awaits ``f{k}``, which awaits ``f{k-1}``, ... down to ``f0``.

    With ``suspending`` f0 holds a ``yield_now().await`` behind a guard that is
    false at run time but unknown at compile time, so every fn of the chain is
    a state machine; without it every fn compiles to a plain device function.
    """
    guard = "if x < 0 { yield_now().await; }\n    " if suspending else ""
    fns = [f"async fn f0(x: i64) -> i64 {{\n    {guard}return x + 1;\n}}"]
    fns += [f"async fn f{j}(x: i64) -> i64 {{\n    return f{j - 1}(x).await + 1;\n}}" for j in range(1, k + 1)]
    return "\n".join(
        [
            f"// B2b: one task awaits a chain of {k} + 1 async fns, reps[0] times"
            f" ({'suspending state machines' if suspending else 'plain device functions'}).",
            "buffer reps: i64[1] = input;",
            "buffer out: i64[1] = zeros;",
            "",
            *fns,
            "",
            "task main {",
            "    let acc: i64 = 0;",
            "    let n = reps[0];",
            "    for r in 0..n {",
            f"        acc = f{k}(acc ^ r).await;",  # the xor keeps LLVM from folding the loop into one multiply
            "    }",
            "    out[0] = acc;",
            "}",
            "",
        ]
    )


def chain_expected(k: int, reps: int) -> int:
    acc = 0
    for r in range(reps):
        acc = (acc ^ r) + k + 1
    return acc


def compile_chain(k: int, suspending: bool) -> Program:
    name = f"b2b_chain_k{k}_{'susp' if suspending else 'plain'}.gasync"
    return gasync.compile_source(chain_source(k, suspending), str(PROGRAMS / name))


def run_checked(prog: Program, check: Any, backend: str = "cuda", **kw: Any) -> dict[str, Any]:
    """Run once, check the results with ``check(result)``, return the stats."""
    res = prog.run(backend=backend, timeout=TIMEOUT_S, **kw)
    check(res)
    return res.stats


def timed_runs(prog: Program, reps: int, **kw: Any) -> tuple[list[float], dict[str, Any]]:
    """Kernel times in seconds of ``reps`` runs (after a warm-up by the caller), and the last run's stats."""
    stats: dict[str, Any] = {}
    samples = []
    for _ in range(reps):
        stats = prog.run(backend="cuda", timeout=TIMEOUT_S, **kw).stats
        samples.append(stats["kernel_ms"] / 1e3)
    return samples, stats


# ---------------------------------------------------------------- B1


def expect_ramp(res: Result) -> None:
    out = res.buffers["out"]
    if not np.array_equal(out, np.arange(out.size, dtype=out.dtype)):
        raise AssertionError(f"B1: out[i] != i at {int(np.flatnonzero(out != np.arange(out.size))[0])}")


def b1(cfg: Config) -> list[Row]:
    rows = []
    for n in cfg.pick((1 << 16, 1 << 20), (1 << 16,)):
        prog = gasync.compile(PROGRAMS / "b1_tasks.gasync", defines={"N": n})
        variants = (("queue", prog, ""), ("queue", unchecked(prog), UNCHECKED), ("spin", prog, ""))
        for executor, variant, prefix in variants:
            run_checked(variant, expect_ramp, executor=executor)
            samples, stats = timed_runs(variant, cfg.reps, executor=executor)
            note = f"kernel {median(samples) * 1e3:.3f} ms, {stats['executors']} executors"
            note += f"; {checks_note(prog, variant)}" if prefix else ""
            per = [s / n * 1e9 for s in samples]
            case = f"{prefix}gasync {executor}, N={n:,}"
            rows.append(measured("B1", case, per, "ns/task", "" if prefix else "<= 1 ns at N=1M", note))
    launches, nodes = cfg.pick(2000, 500), 1000
    extrapolated = "per task = per launch (extrapolated)"
    per = [s * 1e9 for s in baselines.numba_launch_per_task(launches, cfg.reps)]
    note = f"{launches} launches of a 1-thread kernel; {extrapolated}"
    rows.append(measured("B1", "numba launch per task", per, "ns/task", note=note))
    per = [s * 1e9 for s in baselines.cupy_launch_per_task(launches, cfg.reps)]
    note = f"{launches} launches of a 1-thread RawKernel; {extrapolated}"
    rows.append(measured("B1", "cupy launch per task", per, "ns/task", note=note))
    per = [s * 1e9 for s in baselines.cupy_graph_per_node(nodes, cfg.reps)]
    note = f"CuPy stream capture of {nodes} one-thread kernel nodes, 5 replays per sample"
    rows.append(measured("B1", "CUDA graph replay per node", per, "ns/task", note=note))
    return rows


# ---------------------------------------------------------------- B2b


def expect_chain(k: int, reps: int) -> Any:
    def check(res: Result) -> None:
        got, want = int(res.buffers["out"][0]), chain_expected(k, reps)
        if got != want:
            raise AssertionError(f"B2b: K={k}, {reps} reps: out[0] = {got}, expected {want}")

    return check


def calibrate(prog: Program, k: int, target_s: float) -> int:
    """A repetition count that makes ``prog`` run about ``target_s`` (at most three scaling steps)."""
    reps = 1000
    for _ in range(3):
        stats = run_checked(prog, expect_chain(k, reps), inputs={"reps": np.array([reps], np.int64)})
        t = stats["kernel_ms"] / 1e3
        if t >= 0.5 * target_s:
            break
        reps = int(min(reps * target_s / max(t, 1e-5), 64 * reps, 1 << 26))
    return reps


def b2b(cfg: Config) -> list[Row]:
    rows = []
    k = cfg.pick(16, 8)
    for suspending in (False, True):
        chain, base = compile_chain(k, suspending), compile_chain(0, suspending)
        reps = calibrate(chain, k, cfg.pick(0.02, 0.005))
        inputs = {"reps": np.array([reps], np.int64)}
        run_checked(base, expect_chain(0, reps), inputs=inputs)
        tk, t0 = [], []
        for _ in range(cfg.reps):  # interleaved, so that drift hits both alike
            tk.append(chain.run(backend="cuda", timeout=TIMEOUT_S, inputs=inputs).stats["kernel_ms"] / 1e3)
            t0.append(base.run(backend="cuda", timeout=TIMEOUT_S, inputs=inputs).stats["kernel_ms"] / 1e3)
        per = [(a - b) / (reps * k) * 1e9 for a, b in zip(tk, t0, strict=True)]
        kind = "state machines" if suspending else "plain fns"
        note = (
            f"{reps:,} reps; kernel {median(tk) * 1e3:.2f} ms, {median(t0) * 1e3:.2f} ms at K=0"
            f" ({median(t0) / reps * 1e9:.0f} ns per rep of one await)"
        )
        row = measured("B2b", f"await chain of {kind}, K={k}", per, "ns/await", "<= 20 ns", note)
        row.value = (median(tk) - median(t0)) / (reps * k) * 1e9  # difference of medians, not median of differences
        rows.append(row)
    return rows


# ---------------------------------------------------------------- B4, B5, B5a: y = 2x + 1

HAND_WRITTEN = ("grid-stride", "per-warp contiguous")  # baselines.AFFINE kinds every throughput benchmark runs


@dataclass(frozen=True)
class GasyncCase:
    """One gasync program of a throughput benchmark: its row's case, the suffix of its ratio rows, their goal."""

    case: str
    prog: Program
    note: str
    tag: str = ""  # e.g. ", capacity 8": appended to the ratio rows' cases
    goal: str = ""


def affine_check(label: str) -> Any:
    def check(res: Result) -> None:
        baselines.check_affine(res.buffers["x"], res.buffers["y"], label)

    return check


def throughput_rows(
    bench: str, cases: list[GasyncCase], n: int, x: Any, y: Any, cfg: Config, kinds: tuple[str, ...] = HAND_WRITTEN
) -> list[Row]:
    """GB/s (8 bytes per element) of each gasync case (checked and unchecked) and each
    hand-written kernel, then per case gasync / the best hand-written kernel of this run (the
    headline) and gasync / grid-stride.

    Every program is run and its output checked first; then the timed runs go round: each
    round times every program once, in the same order, so that the GPU's drift over the call
    (its clocks, its temperature, whatever else the host does) reaches every row alike rather
    than the rows timed last (bench/NOTES.md, run 33: a baseline timed after the gasync rows
    moved 2,833-3,128 GB/s between calls)."""
    variants = [unchecked(c.prog) for c in cases]
    for prog in (*(c.prog for c in cases), *variants):  # (each run checked: the timed runs are not)
        baselines.fill(y, -1.0)
        run_checked(prog, affine_check(f"{bench} gasync"), inputs={"x": x, "y": y})
    for kind in kinds:
        baselines.fill(y, -1.0)  # so that the baseline's check cannot pass on gasync's output
        baselines.numba_affine(x, y, 1, kind)
        baselines.check_affine(x, y, f"{bench} {baselines.AFFINE[kind][0]}")
    progs = (*(c.prog for c in cases), *variants)
    timers: list[Callable[[], tuple[float, dict[str, Any]]]] = [functools.partial(_timed_run, p, x, y) for p in progs]
    timers += [functools.partial(_timed_baseline, x, y, kind) for kind in kinds]
    samples: list[list[float]] = [[] for _ in timers]
    stats: list[dict[str, Any]] = [{} for _ in timers]
    for _ in range(cfg.reps):
        for k, timer in enumerate(timers):
            secs, stats[k] = timer()
            samples[k].append(secs)
    gas, off = [], []
    for k, c in enumerate(cases):
        gas.append(_throughput_row(bench, c.case, c.note, n, samples[k], stats[k]))
        note = f"{c.note}; {checks_note(c.prog, variants[k])}"
        j = len(cases) + k
        off.append(_throughput_row(bench, UNCHECKED + c.case, note, n, samples[j], stats[j]))
    refs = []
    for k, kind in enumerate(kinds):
        gbs = [8 * n / s / 1e9 for s in samples[2 * len(cases) + k]]
        wall = median(samples[2 * len(cases) + k]) * 1e3
        gpu = median(baselines.affine_device_ms(x, y, 3, kind))  # (after the timed runs: none of theirs waits on it)
        note = f"{baselines.AFFINE[kind][1]}; kernel {wall:.2f} ms (launch + sync), on the GPU {gpu:.3f} ms (events)"
        refs.append(measured(bench, baselines.AFFINE[kind][0], gbs, "GB/s", note=note))
    best = max(refs, key=lambda r: r.value)
    grid = refs[kinds.index("grid-stride")]
    ratios = []
    for c, g in zip(cases, gas, strict=True):
        note = f"best: {best.case}, {best.value:,.0f} GB/s"
        ratios.append(Row(bench, f"gasync / best hand-written{c.tag}", g.value / best.value, "ratio", c.goal, note))
        ratios.append(Row(bench, f"gasync / numba grid-stride{c.tag}", g.value / grid.value, "ratio"))
    return gas + refs + ratios + off


def _timed_run(prog: Program, x: Any, y: Any) -> tuple[float, dict[str, Any]]:
    """One run's kernel time in seconds, and its stats."""
    stats = prog.run(backend="cuda", timeout=TIMEOUT_S, inputs={"x": x, "y": y}).stats
    return stats["kernel_ms"] / 1e3, stats


def _timed_baseline(x: Any, y: Any, kind: str) -> tuple[float, dict[str, Any]]:
    """One run's time (launch + sync) of the hand-written kernel ``kind``, in seconds."""
    return baselines.numba_affine(x, y, 1, kind)[0], {}


def _throughput_row(bench: str, case: str, what: str, n: int, samples: list[float], stats: dict[str, Any]) -> Row:
    note = (
        f"{stats['executors']} executors; kernel {median(samples) * 1e3:.2f} ms (device {stats['device_ms']} ms, "
        f"span {stats.get('span_ms', '?')} ms, launch call {stats.get('launch_ms', '?')} ms); "
        f"{stats['polls']:,} polls, {stats['wakes']:,} wakes, {stats.get('waits_in_place', 0):,} waits in place; "
        f"{what}"
    )
    return measured(bench, case, [8 * n / s / 1e9 for s in samples], "GB/s", note=note)


def b5a(cfg: Config) -> list[Row]:
    n, w = cfg.pick(1 << 28, 1 << 24), 4096
    x, y = baselines.device_input(n)
    prog = gasync.compile(PROGRAMS / "b5a_stage.gasync", defines={"N": n, "W": w})
    note = f"parallel for over chunks of {n // w:,}; 8 bytes per element"
    case = GasyncCase(f"gasync task array W={w}, N={n:,}", prog, note, goal=">= 0.9")
    return throughput_rows("B5a", [case], n, x, y, cfg, (*HAND_WRITTEN, "one thread per element"))


# ---------------------------------------------------------------- B6


def b6_child(cache_dir: str) -> int:
    """In a fresh process: compile and run stencil2d with ``cache_dir``; print its stats as JSON."""
    prog = gasync.compile(STENCIL)
    res = prog.run(backend="cuda", cache_dir=cache_dir, timeout=TIMEOUT_S)
    print(json.dumps(res.stats))
    return 0


def _child(cache_dir: str, helpers: str) -> tuple[float, dict[str, Any]]:
    cmd = [sys.executable, str(HERE / "run.py"), "--b6-child", cache_dir]
    t0 = time.perf_counter()
    env = dict(os.environ, GASYNC_LINKED_DIR=helpers)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError("B6 child failed:\n" + "\n".join((proc.stderr or proc.stdout).splitlines()[-8:]))
    return wall, json.loads(proc.stdout.strip().splitlines()[-1])


def b6(cfg: Config) -> list[Row]:
    """Each rep in fresh processes: the first compile with gasync's helper store empty as well
    (after installing gasync or another Numba: runtime/linked.py), then a cold one (a program
    not compiled before, the helpers kept by the first), then that program again (cached)."""
    first_wall, first_jit, cold_wall, cold_jit, warm_wall, warm_jit = [], [], [], [], [], []
    for _ in range(cfg.pick(cfg.reps, 1)):
        with tempfile.TemporaryDirectory(prefix="gasync-b6-") as tmp:
            helpers = os.path.join(tmp, "helpers")
            runs = ((first_wall, first_jit, "first"), (cold_wall, cold_jit, "cold"), (warm_wall, warm_jit, "cold"))
            for walls, jits, cache in runs:
                wall, stats = _child(os.path.join(tmp, cache), helpers)
                walls.append(wall)
                jits.append(stats["compile_s"])
    note = "a fresh Python process: interpreter, imports, compile, run"
    return [
        measured("B6", "stencil2d cold: compile_s", cold_jit, "s",
                 note="Numba JIT of the kernel (fresh cache dir; gasync's helpers compiled by an earlier run)"),
        measured("B6", "stencil2d cold: process wall", cold_wall, "s", note=note),
        measured("B6", "stencil2d cached: compile_s", warm_jit, "s", note="Numba cache load (same cache dir)"),
        measured("B6", "stencil2d cached: process wall", warm_wall, "s", note=note),
        measured("B6", "stencil2d first: compile_s", first_jit, "s",
                 note="fresh cache dir and an empty helper store: the first run after an install"),
    ]  # fmt: skip


BENCHMARKS = {"B1": b1, "B2b": b2b, "B5a": b5a, "B6": b6}
