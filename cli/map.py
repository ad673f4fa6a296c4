"""``gasync map``: one program over many inputs on a Dask cluster, each input's outputs to files.

    gasync map samples/normalize.gasync --input img='images/*.npy' --output-dir out/

Each ``--input NAME=PATTERN`` is one .npy file or a glob of them (quoted, so that the shell
leaves it to gasync). Globs pair their files by name: ``img='a/*.npy' mask='b/*.npy'`` gives one
run per file name found under both (a name missing from one is a usage error); a plain file goes
to every run. Each run writes ``OUTDIR/NAME/STEM.npy`` for each buffer ``--output`` names (by
default every buffer that is not an input), and ``OUTDIR/summary.json`` lists every input: its
files, shared scalars, stats and worker, or its error. The workers write the outputs (through a
temporary name and a rename, so a run that Dask repeats after its worker died writes the same
file again), so they must see the paths: a LocalCluster does, a remote one needs a shared file
system, as Dask's own readers do.

The cluster: ``--scheduler ADDRESS`` (``[PROTOCOL://]HOST:PORT``, checked first) joins a running
one; otherwise a LocalCluster of ``--workers N`` processes (at most 4 per core) is started for the
command (default: one per GPU with dask-cuda's LocalCUDACluster on a GPU, where dask-cuda is
installed; min(4, cores) on the simulator).

Order of checks, as ``gasync run``'s: the options (Click), then the program (parsed and planned
here, once), its names and the input files, and only then the cluster. Exit status: 0 when every
input ran; 1 when any failed (each error is printed with its input, the others still run); 2 a
usage error; 3 an internal error.
"""

from __future__ import annotations

import glob
import json
import logging
import os
import re
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated, Any

import click
import typer
from rich.console import Console

from gasync.cli import progress
from gasync.cli.common import (
    Backend,
    BackendOpt,
    Color,
    ColorOpt,
    DebugOpt,
    DefineOpt,
    FileArg,
    QuietOpt,
    StrictOpt,
    TimeoutOpt,
    UncheckedOpt,
    plan_options,
)
from gasync.cli.mapreport import Outcome, Tally, report, summary_doc
from gasync.cli.params import Count, Pair, no_repeats, verbosity
from gasync.cli.report import Reporter, use_color
from gasync.cli.source import Source
from gasync.dsl.diagnostics import GasyncError
from gasync.planner.model import Plan

PATTERN = Pair("input", example="NAME=PATTERN such as x='data/*.npy'")

MapInputOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--input", metavar="NAME=PATTERN", click_type=PATTERN, callback=no_repeats, show_default=False,
        help="Fill an `input` buffer from each .npy file a glob matches (quote it), or from one file in every run"
        " (repeatable).",
    ),
]  # fmt: skip
OutputDirOpt = Annotated[
    Path,
    typer.Option("--output-dir", metavar="DIR", help="Where each run's outputs go, as DIR/NAME/INPUT.npy.",
                 show_default=False),
]  # fmt: skip
OutputNameOpt = Annotated[
    list[str] | None,
    typer.Option("--output", metavar="NAME", show_default=False,
                 help="A buffer to save after each run (repeatable; default: every buffer that is not an input)."),
]  # fmt: skip
SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")  # Dask's protocols that another process can reach
WORKERS_PER_CORE = 4  # --workers' bound: more processes than this only queue for the cores
_HOST_PORT = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[^\s:/\[\]@]+):(\d{1,5})")


class SchedulerAddress(click.ParamType):
    """A Dask scheduler's address, ``[PROTOCOL://]HOST:PORT``, checked before anything runs
    (Dask's own ``missing port number`` would be an internal error, after the compile)."""

    name = "address"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value).strip()
        scheme, sep, rest = text.partition("://")
        if not sep:
            scheme, rest = "tcp", text
        if scheme not in SCHEMES:
            known = ", ".join(f"{s}://" for s in SCHEMES)
            self.fail(f"'{value}': unknown protocol '{scheme}://' (Dask's are {known})", param, ctx)
        m = _HOST_PORT.fullmatch(rest)
        if m is None or not 0 < int(m.group(2)) < 65536:
            self.fail(f"expected HOST:PORT, optionally after tcp:// (e.g. tcp://10.0.0.5:8786), found '{value}'",
                      param, ctx)  # fmt: skip
        return text


def max_workers() -> int:
    """The most worker processes ``--workers`` may ask a local cluster for: WORKERS_PER_CORE a core."""
    return WORKERS_PER_CORE * (os.cpu_count() or 1)


def bounded_workers(ctx: click.Context, param: click.Parameter, workers: int) -> int:
    """Callback of --workers: at most :func:`max_workers` (100000 processes would take minutes to
    start, and hang the machine meanwhile)."""
    most = max_workers()
    if workers > most:
        raise click.BadParameter(
            f"{workers} is more than a local cluster here may start: at most {most}"
            f" ({WORKERS_PER_CORE} per core, {os.cpu_count() or 1} cores)", ctx, param,
        )  # fmt: skip
    return workers


SchedulerOpt = Annotated[
    str | None,
    typer.Option("--scheduler", metavar="ADDRESS", click_type=SchedulerAddress(), show_default=False,
                 help="A running Dask scheduler, e.g. tcp://10.0.0.5:8786 (default: start a local cluster)."),
]  # fmt: skip
WorkersOpt = Annotated[
    int,
    typer.Option("--workers", click_type=Count(), metavar="N", callback=bounded_workers,
                 help="Worker processes of the local cluster (0: one per GPU, or min(4, cores) on the simulator;"
                      f" at most {WORKERS_PER_CORE} per core)."),
]  # fmt: skip
MapJsonOpt = Annotated[bool, typer.Option("--json", help="Print the summary (summary.json's object) on stdout.")]


def map_command(
    file: FileArg,
    output_dir: OutputDirOpt,
    inputs: MapInputOpt = None,
    outputs: OutputNameOpt = None,
    scheduler: SchedulerOpt = None,
    workers: WorkersOpt = 0,
    backend: BackendOpt = Backend.auto,
    define: DefineOpt = None,
    strict: StrictOpt = False,
    unchecked: UncheckedOpt = False,
    timeout: TimeoutOpt = None,
    as_json: MapJsonOpt = False,
    color: ColorOpt = Color.auto,
    quiet: QuietOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Run a program once per input file on a Dask cluster (a local one unless --scheduler)."""
    rep = Reporter(debug, verbosity(quiet, False), color=use_color(color))
    src = Source(file)
    with rep.guard(src):
        plan = src.check(plan_options(define, strict))
        rep.diagnostics(list(plan.warnings), src)
        runs = pair_inputs(plan, list(inputs or []))
        saved = output_names(plan, outputs or [])
        if scheduler is None:  # a local cluster's backend is this machine's (a remote one's, its workers')
            from gasync.runtime.backends import choose

            choose(backend.value)
        make_dirs(output_dir, saved)
        from gasync import cluster

        try:
            cluster.require("distributed")
        except cluster.DaskMissingError as exc:
            raise click.UsageError(
                f"gasync map runs on Dask, which is not installed here: {cluster.INSTALL_HINT}"
            ) from exc
        recipe = cluster.Recipe(src.text(), src.label, tuple((str(n), str(v)) for n, v in define or []), strict)
        options = {"backend": backend.value, "timeout": timeout or 0.0, "checked": not unchecked}
        t0 = time.perf_counter()
        with ExitStack() as stack:
            client, described = connect(stack, rep, scheduler, workers, backend.value)
            tally = submit_all(rep, client, recipe, runs, str(output_dir), saved, options)
        wall = time.perf_counter() - t0
        doc = summary_doc(src.label, described, wall, tally)
        (output_dir / "summary.json").write_text(json.dumps(doc, indent=1) + "\n")
        report(rep, src, tally, doc, output_dir, as_json)
        if as_json:
            sys.stdout.write(json.dumps(doc) + "\n")
    rep.finish()


def pair_inputs(plan: Plan, given: list[tuple[str, str]]) -> list[tuple[str, dict[str, str]]]:
    """The runs: (a name for the run, input buffer -> file), globs paired by file name."""
    buffers = {b.name: b for b in plan.buffers}
    for name, _ in given:
        if name not in buffers:
            has = ", ".join(buffers) or "none"
            raise click.UsageError(f"--input {name}: the program has no buffer named '{name}' (it has {has})")
        if buffers[name].init != "input":
            raise click.UsageError(
                f"--input {name}: buffer '{name}' is initialised with '{buffers[name].init}', not 'input'"
            )
    from gasync.cli.report import LocatedUsageError
    from gasync.runtime.errors import InputError

    missing = [
        InputError(f"buffer '{b.name}' is declared '= input' but no --input {b.name}=PATTERN was given", b.span)
        for b in plan.buffers
        if b.init == "input" and b.name not in dict(given)
    ]
    if missing:
        raise LocatedUsageError(*missing)
    fixed: dict[str, str] = {}
    matched: dict[str, dict[str, str]] = {}
    for name, pattern in given:
        if not glob.has_magic(pattern):
            if not Path(pattern).is_file():
                raise click.UsageError(f"--input {name}={pattern}: no such file")
            fixed[name] = pattern
            continue
        files = sorted(p for p in glob.glob(pattern) if Path(p).is_file())
        if not files:
            raise click.UsageError(f"--input {name}={pattern}: the pattern matches no file")
        by_stem = {Path(p).stem: p for p in files}
        if len(by_stem) < len(files):
            raise click.UsageError(
                f"--input {name}={pattern}: two files have one name; each run is named by its files' names"
            )
        matched[name] = by_stem
    if not matched:
        return [(Path(next(iter(fixed.values()))).stem if fixed else "run", fixed)]
    names = list(matched)
    stems = set(matched[names[0]])
    for name in names[1:]:
        missing = stems ^ set(matched[name])
        if missing:
            stem = sorted(missing)[0]
            where = names[0] if stem not in matched[names[0]] else name
            raise click.UsageError(
                f"--input {where}: no file named '{stem}' (globs pair their files by name, and"
                f" '{stem}' is among the other input's)"
            )
    return [(stem, {**fixed, **{name: matched[name][stem] for name in names}}) for stem in sorted(stems)]


def output_names(plan: Plan, asked: list[str]) -> tuple[str, ...]:
    names = [b.name for b in plan.buffers]
    for name in asked:
        if name not in names:
            raise click.UsageError(
                f"--output {name}: the program has no buffer named '{name}' (it has {', '.join(names)})"
            )
    if asked:
        return tuple(dict.fromkeys(asked))
    return tuple(b.name for b in plan.buffers if b.init != "input")


def make_dirs(root: Path, outputs: tuple[str, ...]) -> None:
    try:
        for name in outputs:
            (root / name).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise click.UsageError(f"--output-dir {root}: cannot create it: {exc.strerror}") from None


def connect(stack: ExitStack, rep: Reporter, scheduler: str | None, workers: int, backend: str) -> tuple[Any, str]:
    """A client of the given scheduler, or of a local cluster started here (closed with ``stack``)."""
    from distributed import Client

    if scheduler is not None:
        if workers:
            raise click.UsageError("--workers sizes a local cluster; with --scheduler the cluster's own workers run")
        try:
            client = stack.enter_context(Client(scheduler, timeout="10s"))
        except (OSError, ValueError, TypeError) as exc:  # (ValueError: an address Dask's parser refuses)
            raise click.UsageError(f"--scheduler {scheduler}: cannot connect: {exc}") from None
        n = len(client.scheduler_info(n_workers=-1).get("workers", {}))
        return client, f"{n} worker{'s' if n != 1 else ''} at {scheduler}"
    from gasync.runtime.backends import choose, gpu_count

    chosen = choose(backend)
    quiet = {"dashboard_address": None, "silence_logs": logging.CRITICAL, "threads_per_worker": 1}
    phases = progress.Phases(rep.label)
    phases.enter("starting a local cluster")
    with progress.spinner(phases, enabled=rep.verbosity > 0):
        cuda_cluster = _cuda_cluster() if chosen == "cuda" else None
        if cuda_cluster is not None:
            cluster = stack.enter_context(cuda_cluster(n_workers=workers or None, **quiet))
            kind = "LocalCUDACluster"
        else:
            from distributed import LocalCluster

            n = workers or (gpu_count() if chosen == "cuda" else min(4, os.cpu_count() or 1))
            cluster = stack.enter_context(LocalCluster(n_workers=n, processes=True, **quiet))
            kind = "LocalCluster"
        client = stack.enter_context(Client(cluster))
    n = len(cluster.workers)
    rep.say(f"started a {kind} of {n} worker{'s' if n != 1 else ''} (backend {chosen})")
    return client, f"{n} worker{'s' if n != 1 else ''} ({kind})"


def _cuda_cluster() -> Any:
    try:
        from dask_cuda import LocalCUDACluster
    except ImportError:
        return None
    return LocalCUDACluster


def submit_all(
    rep: Reporter, client: Any, recipe: Any, runs: list[tuple[str, dict[str, str]]], outdir: str,
    outputs: tuple[str, ...], options: dict[str, Any],
) -> Tally:  # fmt: skip
    """Submit a task per run; collect them as they finish, with a progress bar on a terminal."""
    from dask.base import tokenize
    from distributed import as_completed

    from gasync.cluster import run_files

    futures = {}
    outdir = os.path.abspath(outdir)  # a worker's working directory need not be ours
    for stem, given in runs:
        files = {name: os.path.abspath(path) for name, path in given.items()}
        key = f"gasync-map-{recipe.stem}-{stem}-{tokenize(recipe.digest, files, outdir, outputs, options)}"
        fut = client.submit(run_files, recipe, files, outdir, stem, outputs, options, key=key)
        futures[fut] = Outcome(stem, given, files)
    tally = Tally()
    console = Console(stderr=True)
    with progress.Bar(console, rep.verbosity > 0 and console.is_terminal, recipe.stem, len(runs)) as advance:
        for fut in as_completed(list(futures)):
            outcome = futures[fut]
            try:
                outcome.record = fut.result()
            except GasyncError as err:
                outcome.error = err
            except Exception as exc:  # a worker's internal error, or one that died too often (KilledWorker)
                outcome.error = exc
            tally.outcomes.append(outcome)
            advance(outcome.error is None)
    tally.outcomes.sort(key=lambda o: o.stem)
    return tally
