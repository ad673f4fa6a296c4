"""``gasync run``: compile, run on a backend, and report buffers, shared scalars and stats.

Order of checks, so that a mistake costs no compile: Click checks every option's
value (cli/params.py: choices, durations, files to read and to write, repeated
names); then the program is parsed and planned, and every name an option gives
(``-D``, ``--input``, ``--output``, ``--signal``) must be one of the program's,
and a program with groups must run the queue executor (``--executors`` below its
largest group's warps is warned of: decisions 52, 54); the executors must fit one
launch (checked before parsing); only then is the kernel generated, compiled and run.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gasync import pipeline
from gasync.cli import limits, progress
from gasync.cli.common import (
    Backend,
    BackendOpt,
    CacheDirOpt,
    CacheMaxOpt,
    Color,
    ColorOpt,
    DebugOpt,
    DefineOpt,
    Executor,
    ExecutorOpt,
    ExecutorsOpt,
    FileArg,
    InputOpt,
    JsonOpt,
    OutputOpt,
    QuietOpt,
    ReportOpt,
    ScheduleOpt,
    SignalOpt,
    StrictOpt,
    TimeoutOpt,
    TraceEventsOpt,
    TraceOpt,
    UncheckedOpt,
    VerboseOpt,
    plan_options,
)
from gasync.cli.drawings import graph_format
from gasync.cli.params import distinct_files, verbosity
from gasync.cli.report import Reporter, use_color
from gasync.cli.source import Source
from gasync.cli.summary import summary
from gasync.cli.traced import write_stopped, write_traced
from gasync.codegen import Generated, generate, uses_sleep
from gasync.dsl.diagnostics import ErrorGroup
from gasync.planner.model import Plan
from gasync.runtime import cache
from gasync.runtime import run as run_generated
from gasync.runtime.backends import choose
from gasync.runtime.buffers import input_errors, load_npy
from gasync.runtime.errors import RunError
from gasync.runtime.module import module_path
from gasync.runtime.options import Result, RunOptions

SLOW_COMPILE_S = 60.0  # warn before a GPU compile that should take longer than this
SIM_CLOCK_NOTE = (
    "note: the simulator's clock is real time, but each poll there takes about a millisecond"
    " (microseconds on a GPU): sleeps, select timeouts and --signal delays fall after far less work than"
    " on a GPU, and sleeps wake late (30 sleeps of 500 us took 0.12-0.56 s here); time a program on a GPU"
)


@dataclass(frozen=True)
class Args:
    """Every value of ``gasync run``, checked by Click."""

    backend: Backend
    defines: list[tuple[str, str]]
    inputs: list[tuple[str, Path]]
    outputs: list[tuple[str, Path]]
    signals: list[tuple[str, float]]
    timeout_s: float
    executor: Executor
    executors: int
    strict: bool
    trace: Path | None
    schedule: Path | None
    report: Path | None
    cache_dir: Path | None
    cache_max: int
    unchecked: bool = False
    trace_events: int = 0  # 0: RunOptions' default

    @property
    def traced(self) -> bool:
        return self.trace is not None or self.schedule is not None or self.report is not None


def run(
    file: FileArg,
    backend: BackendOpt = Backend.auto,
    define: DefineOpt = None,
    inputs: InputOpt = None,
    outputs: OutputOpt = None,
    signals: SignalOpt = None,
    as_json: JsonOpt = False,
    timeout: TimeoutOpt = None,
    executor: ExecutorOpt = Executor.queue,
    executors: ExecutorsOpt = 0,
    strict: StrictOpt = False,
    trace: TraceOpt = None,
    trace_events: TraceEventsOpt = 0,
    schedule: ScheduleOpt = None,
    report: ReportOpt = None,
    cache_dir: CacheDirOpt = None,
    cache_max: CacheMaxOpt = cache.DEFAULT_MAX_BYTES,
    unchecked: UncheckedOpt = False,
    color: ColorOpt = Color.auto,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Compile a program and run it on the GPU (or the CUDA simulator)."""
    rep = Reporter(debug, verbosity(quiet, verbose), as_json, color=use_color(color))
    args = Args(
        backend, define or [], inputs or [], outputs or [], signals or [], timeout or 0.0,
        executor, executors, strict, trace, schedule, report, cache_dir, cache_max, unchecked, trace_events,
    )  # fmt: skip
    src = Source(file)
    with rep.guard(src):
        plan, result = _compile_and_run(rep, src, args)
        _report(rep, src, plan, result, args, as_json)
    rep.finish()


def _compile_and_run(rep: Reporter, src: Source, args: Args) -> tuple[Plan, Result]:
    phases = progress.Phases(src.label)
    try:
        with progress.spinner(phases, enabled=rep.verbosity > 0):  # Rich keeps our stderr lines above it
            return _phases(rep, src, args, phases)
    except RunError as exc:  # a failed traced run: what was recorded before the failure is reported
        if exc.trace is not None:
            write_stopped(rep, exc.trace, args.trace, args.schedule, args.report)
        raise


def _phases(rep: Reporter, src: Source, args: Args, phases: progress.Phases) -> tuple[Plan, Result]:
    t0 = time.perf_counter()
    _check_files(src, args)
    if args.trace_events and not args.traced:
        no_trace = "this run records no trace (give --trace, --schedule or --report)"
        rep.warn(f"--trace-events {args.trace_events}: {no_trace}")
    if args.schedule is not None:
        graph_format(args.schedule, None, "--schedule")  # a bad suffix costs no run
    chosen = choose(args.backend.value)
    _check_executors(args.executors, chosen)
    phases.enter("parsing and planning")
    plan = src.check(plan_options(args.defines, args.strict))
    rep.diagnostics(list(plan.warnings), src)
    rep.detail(f"parsed and planned {src.label} in {time.perf_counter() - t0:.3f} s")
    _check_names(plan, args)
    _check_groups(rep, plan, args)
    _hint_host_signals(rep, plan, args)
    arrays = {name: load_npy(name, path) for name, path in args.inputs}
    if bad := input_errors(plan, arrays):  # every input's shape and dtype before anything compiles
        raise ErrorGroup(list(bad))
    _say_backend(rep, src, args, chosen, plan)
    phases.enter("generating the kernel")
    generated = _generate(rep, plan, args, chosen)
    cache_dir = str(args.cache_dir) if args.cache_dir else None
    module = module_path(generated, cache_dir)
    cached = chosen == "cuda" and cache.kernel_cached(module)
    rep.detail(f"module {module} ({_cache_state(module, chosen, cached)})")
    if chosen == "cuda" and not rep.debug:
        progress.silence_numba_warnings()
    options = RunOptions(
        chosen, arrays, args.timeout_s, args.executors, args.executor.value, cache_dir, dict(args.signals),
        cache_max_bytes=args.cache_max, **({"trace_capacity": args.trace_events} if args.trace_events else {}),
    )  # fmt: skip
    front_s = time.perf_counter() - t0
    phases.enter("compiling and running" if chosen == "cuda" else "running on the simulator")
    result = run_generated(generated, options)
    rep.say(progress.compiled_line(front_s + float(result.stats.get("compile_s", 0.0)), cached))
    if helpers := result.stats.get("helpers"):
        rep.detail(f"gasync's helpers: {helpers['read']} read from the store, {helpers['compiled']} compiled into it, "
                   f"{helpers['numba']} compiled by Numba alone (runtime/linked.py)")  # fmt: skip
    _say_other_executors(rep, args.executors, plan, result)
    return plan, result


def _generate(rep: Reporter, plan: Plan, args: Args, chosen: str) -> Generated:
    """The kernel's source; on the GPU, a warning first when Numba will take minutes over it."""
    t0 = time.perf_counter()
    generated = pipeline.deep(lambda: generate(plan, trace=args.traced, checked=not args.unchecked))
    rep.detail(f"generated {generated.source.count(chr(10))} lines of Numba-CUDA in {time.perf_counter() - t0:.3f} s")
    if chosen == "cuda" and generated.gpu_compile_estimate_s() > SLOW_COMPILE_S:
        name, blocks = generated.largest_dispatch
        rep.warn(
            f"'{name}' compiles to {blocks} blocks, and Numba-CUDA's compile time grows with"
            f" the square of that: expect roughly {generated.gpu_compile_estimate_s() / 60:.0f} min before the"
            " kernel starts (the simulator runs it at once: --backend sim)"
        )
    return generated


def _cache_state(module: Path, backend: str, kernel_cached: bool) -> str:
    if not module.exists():
        return "new"
    if backend == "sim":
        return "in the cache"
    return "in the cache, kernel too" if kernel_cached else "in the cache, kernel not compiled yet"


def _say_backend(rep: Reporter, src: Source, args: Args, chosen: str, plan: Plan) -> None:
    auto = args.backend is Backend.auto
    why = "" if not auto else (" (a CUDA GPU is present)" if chosen == "cuda" else " (no CUDA GPU found)")
    rep.say(f"running {src.label} on backend {chosen}{why}")
    if chosen == "sim" and (args.signals or uses_sleep(plan)):
        rep.say(SIM_CLOCK_NOTE)


def _hint_host_signals(rep: Reporter, plan: Plan, args: Args) -> None:
    """A signal that tasks wait for but only the host can set, and this run does not: say so
    first, as the run can then only end in a deadlock report or at its timeout."""
    from gasync.planner.effects import host_set_signals, task_effects

    effects = task_effects(plan)
    for name, delay in args.signals:
        if args.timeout_s and delay >= args.timeout_s:
            late = f"--signal {name}={delay:g}s comes at or after --timeout {args.timeout_s:g}s"
            rep.warn(f"{late}: the host never sets it")
    unset = host_set_signals(plan, effects) - {name for name, _ in args.signals}
    for sig in plan.signals:
        waiting = [t for t, e in effects.items() if sig.name in e.firm]  # (a select's other arm may end a wait)
        if waiting and sig.name in unset:
            end = f"at --timeout {args.timeout_s:g}s" if args.timeout_s else "never (pass --timeout)"
            rep.warn(
                f"no task sets signal '{sig.name}', so only the host can (--signal {sig.name}=DELAY), and this"
                f" run does not: {', '.join(f'task {t}' for t in waiting)} will wait for it (the run ends in a"
                f" deadlock report once nothing else can run, else {end})"
            )


def _check_files(src: Source, args: Args) -> None:
    """No file is written twice, and none the run reads (the program, an --input) is written."""
    flags = (("--trace", args.trace), ("--schedule", args.schedule), ("--report", args.report))
    writes = [(f"--output {name}={path}", path) for name, path in args.outputs]
    writes += [(f"{flag} {path}", path) for flag, path in flags if path is not None]
    reads = [] if src.is_stdin else [("the program's source file", src.arg)]
    reads += [(f"--input {name}'s file", path) for name, path in args.inputs]
    distinct_files(writes, reads)


def _check_executors(executors: int, backend: str) -> None:
    import click

    most, why = limits.max_executors(backend)
    if executors > most:
        raise click.UsageError(
            f"--executors {executors}: one launch holds at most {most} executors here ({why}, one warp each)"
        )


def _check_names(plan: Plan, args: Args) -> None:
    """Each name an option gives is one of the program's (a usage error otherwise)."""
    import click

    from gasync.cli.report import LocatedUsageError
    from gasync.runtime.errors import InputError

    buffers = {b.name: b for b in plan.buffers}
    wanted = [b.name for b in plan.buffers if b.init == "input"]
    for name, _ in args.inputs:
        if name not in buffers:
            raise _no_buffer(plan, "--input", name, buffers)
        if buffers[name].init != "input":
            raise click.UsageError(
                f"--input {name}: buffer '{name}' is initialised with '{buffers[name].init}', not 'input'"
            )
    missing = [
        InputError(f"buffer '{name}' is declared '= input' but no --input {name}=FILE.npy was given", span)
        for name, span in ((name, buffers[name].span) for name in wanted)
        if name not in dict(args.inputs)
    ]
    if missing:  # each located at its declaration, as the API's (and a wrong shape)
        raise LocatedUsageError(*missing)
    for name, _ in args.outputs:
        if name not in buffers:
            raise _no_buffer(plan, "--output", name, buffers)
    signals = {s.name: s for s in plan.signals}
    for name, _ in args.signals:
        if name not in signals:
            raise click.UsageError(f"--signal {name}: the program has no signal named '{name}'{_listing(signals)}")


def _no_buffer(plan: Plan, flag: str, name: str, buffers: dict[str, Any]) -> Exception:
    """``--input``/``--output NAME`` where the program has no buffer NAME; one of a group's local
    buffers (``st`` or ``gg.st``) is said to be one, with what to do instead."""
    import click

    groups = [g.name for g in plan.groups for b in g.buffers if name in (b.name, b.name.split(".", 1)[1])]
    if not groups:
        return click.UsageError(f"{flag} {name}: the program has no buffer named '{name}'{_listing(buffers)}")
    whose = " and ".join(f"group '{g}'" for g in groups)
    local = f"'{name.split('.')[-1]}' is a local buffer of {whose}: each group instance has its own, in its block's"
    if flag == "--output":
        return click.UsageError(
            f"{flag} {name}: {local} shared memory, gone when the instance ends, so it cannot be saved; copy what you"
            f" need into a global buffer{_listing(buffers)} from a task of the group, and --output that"
        )
    return click.UsageError(
        f"{flag} {name}: {local} shared memory, zeroed as the instance starts, so it cannot be read from a file;"
        f" declare a global buffer '= input' and copy it in from a task of the group"
    )


def _check_groups(rep: Reporter, plan: Plan, args: Args) -> None:
    """A program with groups runs the queue executor (a usage error otherwise: decision 54), and
    a block holds its largest group's warps, however few ``--executors`` asks for (decision 52)."""
    import click

    from gasync.runtime import groupgrid

    if not plan.groups:
        return
    if args.executor is Executor.spin:
        names = ", ".join(f"'{g.name}'" for g in plan.groups)
        raise click.UsageError(
            f"--executor spin: spin does not run groups, and the program has group{'s' * (len(plan.groups) > 1)}"
            f" {names}; a program with groups runs the queue executor (the default)"
        )
    warps = groupgrid.group_warps(plan)
    if 0 < args.executors < warps:
        g = max(plan.groups, key=lambda g: g.warps)
        rep.warn(
            f"--executors {args.executors}: a block holds a whole instance of group '{g.name}', {warps} warps"
            f" (one per task instance), so {warps} executors run"
        )


def _listing(names: dict[str, Any]) -> str:
    return f" (it has {', '.join(names)})" if names else " (it declares none)"


def _say_other_executors(rep: Reporter, asked: int, plan: Plan, result: Result) -> None:
    """Say when the executors that ran are not the number asked for: fewer where the GPU holds
    fewer resident warps of the kernel, more where whole blocks of warps round them up (fewer
    than a group's warps was warned of before the run: _check_groups)."""
    from gasync.runtime import groupgrid

    ran, blocks = result.stats.get("executors"), result.stats.get("blocks")
    if not asked or not isinstance(ran, int) or ran == max(asked, groupgrid.group_warps(plan)):
        return
    if ran < asked:
        rep.say(f"note: --executors {asked}: the kernel fits {ran} resident warps on this GPU, so {ran} ran")
    elif isinstance(blocks, int) and blocks > 0:
        rep.say(
            f"note: --executors {asked}: executors are launched in whole blocks of {ran // blocks} warps,"
            f" so {ran} ran ({blocks} block{'s' * (blocks > 1)})"
        )


def _report(rep: Reporter, src: Source, plan: Plan, result: Result, args: Args, as_json: bool) -> None:
    for name, path in args.outputs:
        save_npy(rep, name, path, result.buffers[name])
    if args.traced:
        write_traced(rep, plan, result, src, args.trace, args.schedule, args.report)
    if as_json:
        sys.stdout.write(json.dumps(result.to_json()) + "\n")
    elif rep.verbosity > 0:
        summary(result)


def save_npy(rep: Reporter, name: str, path: Path, array: Any) -> None:
    """``--output NAME=PATH``: the buffer as .npy data at exactly PATH (``np.save`` given a name
    would add '.npy' to one without it: ``y=/dev/null`` would write ``/dev/null.npy``)."""
    try:
        with open(path, "wb") as f:
            np.save(f, np.asarray(array), allow_pickle=False)
    except OSError as exc:
        rep.usage(f"--output {name}: cannot write {path}: {exc.strerror}")
