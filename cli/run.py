"""``gasync run``: compile, run on a backend, and report buffers, shared scalars and stats."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from rich.console import Console
from rich.table import Table

from gasync import pipeline
from gasync.cli.report import Reporter
from gasync.codegen import generate, uses_sleep
from gasync.runtime import run as run_generated
from gasync.runtime.backends import choose, gpu_present
from gasync.runtime.buffers import load_npy
from gasync.runtime.errors import InputError
from gasync.runtime.options import Result, RunOptions
from gasync.viz.perfetto import to_chrome_trace
from gasync.viz.schedule import schedule_graph

SPINNER_DELAY_S = 1.0


def run(
    file: Annotated[Path, typer.Argument(help="A .gasync source file.", show_default=False)],
    backend: Annotated[
        str, typer.Option("--backend", help="cuda, sim, or auto (cuda where a GPU is present).")
    ] = "auto",
    define: Annotated[
        list[str] | None, typer.Option("-D", "--define", metavar="NAME=VALUE", help="Override a const (repeatable).")
    ] = None,
    inputs: Annotated[
        list[str] | None, typer.Option("--input", metavar="NAME=FILE.npy", help="Fill an `input` buffer (repeatable).")
    ] = None,
    outputs: Annotated[
        list[str] | None, typer.Option("--output", metavar="NAME=FILE.npy", help="Save a buffer after the run.")
    ] = None,
    signals: Annotated[
        list[str] | None,
        typer.Option("--signal", metavar="NAME=DELAY", help="Set a signal from the host, e.g. stop=5ms (repeatable)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
    timeout: Annotated[str, typer.Option("--timeout", metavar="DURATION", help="Bound the run, e.g. 10s, 500ms.")] = "",
    executor: Annotated[
        str, typer.Option("--executor", help="queue (wakers and a run queue) or spin (naive).")
    ] = "queue",
    executors: Annotated[int, typer.Option("--executors", help="Warps that run tasks (0: the backend picks).")] = 0,
    strict: Annotated[bool, typer.Option("--strict", help="Treat concurrent-write warnings as errors.")] = False,
    trace: Annotated[
        Path | None,
        typer.Option("--trace", metavar="TRACE.json", help="Record every poll and wake; write a Perfetto trace."),
    ] = None,
    schedule: Annotated[
        Path | None,
        typer.Option("--schedule", metavar="FILE.svg", help="Record the run; draw its schedule (.svg, .png, .dot)."),
    ] = None,
) -> None:
    """Compile a program and run it on the GPU (or the CUDA simulator)."""
    from gasync.cli.app import plan_options

    rep = Reporter()
    options = plan_options(define, strict)
    with rep.guard(file):
        if executor not in ("queue", "spin"):
            raise typer.BadParameter(f"'{executor}' is not one of 'queue', 'spin'", param_hint="'--executor'")
        timeout_s = parse_duration(timeout, "--timeout") if timeout else 0.0
        plan = pipeline.check(file, options)
        rep.diagnostics(list(plan.warnings), file)
        arrays = dict(load_npy(spec) for spec in inputs or [])
        saves = [_output_spec(spec, plan) for spec in outputs or []]
        host_signals = dict(_signal_spec(spec) for spec in signals or [])
        chosen = choose(backend)
        why = "" if backend != "auto" else (" (a CUDA GPU is present)" if chosen == "cuda" else " (no CUDA GPU found)")
        print(f"gasync: running {file} on backend {chosen}{why}", file=sys.stderr)
        if chosen == "sim" and (host_signals or uses_sleep(plan)):
            print(SIM_CLOCK_NOTE, file=sys.stderr)
        traced = trace is not None or schedule is not None
        generated = generate(plan, trace=True) if traced else generate(plan)
        if chosen == "cuda" and generated.gpu_compile_estimate_s() > SLOW_COMPILE_S:
            name, blocks = generated.largest_dispatch
            print(
                f"gasync: warning: '{name}' compiles to {blocks} blocks, and Numba-CUDA's compile time grows with"
                f" the square of that: expect roughly {generated.gpu_compile_estimate_s() / 60:.0f} min before the"
                " kernel starts (the simulator runs it at once: --backend sim)",
                file=sys.stderr,
            )
        with _spinner(f"compiling and running {file} on {chosen}"):
            options_ = RunOptions(chosen, arrays, timeout_s, executors, executor, signals=host_signals)
            result = run_generated(generated, options_)
        for name, path in saves:
            np.save(path, result.buffers[name])
        if traced:
            _write_trace(rep, result, trace, schedule)
        if as_json:
            sys.stdout.write(json.dumps(result.to_json()) + "\n")
        else:
            _summary(result)
    raise typer.Exit(rep.exit_code)


SLOW_COMPILE_S = 60.0  # warn before a GPU compile that should take longer than this
SIM_CLOCK_NOTE = (
    "gasync: note: the simulator's clock is real time, but each poll there takes about a millisecond"
    " (microseconds on a GPU): sleeps, select timeouts and --signal delays fall after far less work than"
    " on a GPU, and sleeps wake late (30 sleeps of 500 us took 0.12-0.56 s here); time a program on a GPU"
)


def _write_trace(rep: Reporter, result: Result, trace: Path | None, schedule: Path | None) -> None:
    """``--trace``: the Chrome trace JSON; ``--schedule``: the timeline, in the format of its suffix."""
    from gasync.cli.app import emit_graph

    raw = result.trace
    if raw is None:
        raise RuntimeError("the run recorded no trace")
    if raw.dropped:
        print(f"gasync: trace: {raw.dropped} events dropped (the device buffer holds {raw.capacity})", file=sys.stderr)
    if trace is not None:
        try:
            trace.write_text(json.dumps(to_chrome_trace(raw)) + "\n", encoding="utf-8")
        except OSError as exc:
            rep.usage(f"cannot write {trace}: {exc.strerror}")
        else:
            print(
                f"gasync: trace of {len(raw.events)} events in {trace} (open it in https://ui.perfetto.dev)",
                file=sys.stderr,
            )
    if schedule is not None:
        emit_graph(rep, schedule_graph(raw), None, schedule)


def parse_duration(text: str, option: str) -> float:
    """``10s``, ``500ms``, ``2m``, ``250us`` or a bare number of seconds."""
    units = {"ms": 1e-3, "us": 1e-6, "ns": 1e-9, "s": 1.0, "m": 60.0}
    t = text.strip()
    for suffix in ("ms", "us", "ns", "s", "m"):
        if t.endswith(suffix):
            number, scale = t[: -len(suffix)], units[suffix]
            break
    else:
        number, scale = t, 1.0
    try:
        value = float(number) * scale
    except ValueError:
        raise typer.BadParameter(
            f"expected a duration such as 10s or 500ms, found '{text}'", param_hint=option
        ) from None
    if value <= 0:
        raise typer.BadParameter(f"a duration must be positive, found '{text}'", param_hint=option)
    return value


def _signal_spec(spec: str) -> tuple[str, float]:
    name, sep, delay = spec.partition("=")
    if not sep or not name:
        raise typer.BadParameter(f"expected NAME=DELAY such as stop=5ms, found '{spec}'", param_hint="'--signal'")
    return name, parse_duration(delay, "'--signal'") if delay.strip() not in ("0", "0s") else 0.0


def _output_spec(spec: str, plan: Any) -> tuple[str, Path]:
    name, sep, path = spec.partition("=")
    if not sep or not name or not path:
        raise InputError(f"--output {spec!r}: expected NAME=FILE.npy")
    if name not in {b.name for b in plan.buffers}:
        raise InputError(f"--output {name}: the program has no buffer named '{name}'")
    return name, Path(path)


@contextmanager
def _spinner(message: str) -> Iterator[None]:
    """A spinner on stderr, shown only on a terminal and only after a second."""
    console = Console(stderr=True)
    if not console.is_terminal:
        yield
        return
    status = console.status(message)
    timer = threading.Timer(SPINNER_DELAY_S, status.start)
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        status.stop()


def _summary(result: Result) -> None:
    console = Console()
    table = Table(title="buffers", title_justify="left")
    for col in ("name", "shape", "dtype", "sum", "first values"):
        table.add_column(col)
    for name, arr in result.buffers.items():
        flat = arr.reshape(-1)
        first = ", ".join(_fmt(v) for v in flat[:6]) + (", ..." if flat.size > 6 else "")
        table.add_row(name, str(list(arr.shape)), str(arr.dtype), _fmt(flat.sum()), first)
    console.print(table)
    if result.shared or result.signals:
        scal = Table(title="shared scalars and signals", title_justify="left")
        scal.add_column("name")
        scal.add_column("value")
        for name, value in result.shared.items():
            scal.add_row(name, _fmt(value))
        for name, flag in result.signals.items():
            scal.add_row(f"signal {name}", "set" if flag else "not set")
        console.print(scal)
    stats = Table(title="stats", title_justify="left")
    stats.add_column("stat")
    stats.add_column("value")
    for key in (
        "backend",
        "executor",
        "executors",
        "tasks",
        "instances",
        "polls",
        "wakes",
        "frame_bytes",
        "compile_s",
        "kernel_ms",
    ):
        stats.add_row(key, str(result.stats.get(key)))
    console.print(stats)


def _fmt(v: Any) -> str:
    if isinstance(v, float | np.floating):
        return f"{float(v):.6g}"
    return str(v)


__all__ = ["gpu_present", "parse_duration", "run"]
