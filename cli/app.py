"""``gasync``: check, compile, run and draw ``.gasync`` programs.

Exit status: 0 success, 1 an error in the user's program (or its inputs),
2 a usage error (bad options, missing files), 3 an internal compiler error.
Errors print as ``path:line:col: error: message`` with the source line and a
caret; no Python traceback reaches the user unless ``--debug`` is given.
Warnings print the same way and do not change the exit status; `check` then ends
with `path: ok, N warnings` instead of a bare `path: ok`.
"""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import graphviz
import typer

from gasync import __version__, pipeline
from gasync.cli.report import Reporter
from gasync.cli.run import run
from gasync.codegen import generate
from gasync.dsl.printer import dump
from gasync.pipeline import InputFileError
from gasync.planner.model import PlanOptions
from gasync.planner.printer import format_plan
from gasync.runtime.trace import RawTrace, TraceFileError
from gasync.viz.perfetto import from_chrome_trace
from gasync.viz.schedule import schedule_graph
from gasync.viz.states import states_graph
from gasync.viz.taskgraph import task_graph

app = typer.Typer(
    name="gasync",
    help="async/await for GPUs: compile .gasync programs into state machines run by a device-side executor.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gasync {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """async/await for GPUs."""


class Emit(StrEnum):
    ast = "ast"
    plan = "plan"
    py = "py"


class GraphFormat(StrEnum):
    dot = "dot"
    svg = "svg"
    png = "png"


FileArg = Annotated[Path, typer.Argument(help="A .gasync source file.", show_default=False)]
DefineOpt = Annotated[
    list[str] | None,
    typer.Option("-D", "--define", metavar="NAME=VALUE", help="Override a const (repeatable).", show_default=False),
]
StrictOpt = Annotated[bool, typer.Option("--strict", help="Treat concurrent-write warnings as errors.")]


@app.command()
def check(
    files: Annotated[list[Path], typer.Argument(help="One or more .gasync files.", show_default=False)],
    define: DefineOpt = None,
    strict: StrictOpt = False,
) -> None:
    """Parse and plan programs; print warnings and errors only."""
    rep = Reporter()
    options = plan_options(define, strict)
    failed = 0
    for path in files:
        warnings = 0
        with rep.guard(path) as ok:
            plan = pipeline.check(path, options)
            rep.diagnostics(list(plan.warnings), path)
            warnings = len(plan.warnings)
        if ok.value:
            rep.ok(f"{path}: {check_summary(warnings)}")
        else:
            failed += 1
    raise typer.Exit(rep.exit_code if failed else 0)


def check_summary(warnings: int) -> str:
    """What `check` says of a file that has no errors: "ok", or "ok, 2 warnings"."""
    if not warnings:
        return "ok"
    return f"ok, {warnings} warning{'s' if warnings > 1 else ''}"


@app.command()
def compile(
    file: FileArg,
    emit: Annotated[Emit, typer.Option("--emit", help="What to print.")] = Emit.ast,
    define: DefineOpt = None,
    strict: StrictOpt = False,
) -> None:
    """Compile a program and print one stage's output (ast, plan or py)."""
    rep = Reporter()
    options = plan_options(define, strict)
    with rep.guard(file):
        if emit is Emit.ast:
            sys.stdout.write(pipeline.deep(dump, pipeline.load(file)))
        elif emit is Emit.plan:
            plan = pipeline.check(file, options)
            rep.diagnostics(list(plan.warnings), file)
            sys.stdout.write(pipeline.deep(format_plan, plan))
        else:
            plan = pipeline.check(file, options)
            rep.diagnostics(list(plan.warnings), file)
            sys.stdout.write(pipeline.deep(generate, plan).source)
    raise typer.Exit(rep.exit_code)


FormatOpt = Annotated[
    GraphFormat | None,
    typer.Option("--format", help="dot (text), svg or png; default: from -o's suffix, else dot.", show_default=False),
]
OutputOpt = Annotated[Path | None, typer.Option("-o", "--output", help="Write here instead of stdout.")]


@app.command()
def graph(
    file: FileArg,
    states: Annotated[bool, typer.Option("--states", help="Draw each async fn's and task's state machine.")] = False,
    format: FormatOpt = None,
    output: OutputOpt = None,
    define: DefineOpt = None,
) -> None:
    """Draw the task graph (after edges solid, channels dashed, signals dotted), or with --states the state machines."""
    rep = Reporter()
    with rep.guard(file):
        plan = pipeline.check(file, plan_options(define, False))
        rep.diagnostics(list(plan.warnings), file)
        emit_graph(rep, states_graph(plan) if states else task_graph(plan), format, output)
    raise typer.Exit(rep.exit_code)


@app.command()
def schedule(
    trace: Annotated[Path, typer.Argument(help="A trace.json from 'gasync run --trace'.", show_default=False)],
    format: FormatOpt = None,
    output: OutputOpt = None,
) -> None:
    """Draw a traced run's schedule: one row per executor, one box per poll, in time order."""
    rep = Reporter()
    with rep.guard(trace):
        raw = read_trace(trace)
        emit_graph(rep, schedule_graph(raw), format, output)
    raise typer.Exit(rep.exit_code)


def emit_graph(rep: Reporter, g: graphviz.Digraph, format: GraphFormat | None, output: Path | None) -> None:
    """Write ``g`` as DOT text or an image; an image needs -o and Graphviz's ``dot`` (else exit 2)."""
    if format is None:
        suffix = output.suffix.lstrip(".").lower() if output is not None else ""
        format = GraphFormat(suffix) if suffix in {f.value for f in GraphFormat} else GraphFormat.dot
    if format is GraphFormat.dot:
        _write(rep, str(g.source).encode(), output)
    elif output is None:
        rep.usage(f"--format {format.value} writes an image: give -o FILE")
    else:
        try:
            image = g.pipe(format=format.value)
        except graphviz.ExecutableNotFound:
            rep.usage("Graphviz's 'dot' program is not installed: use --format dot, or run 'make dot'")
        else:
            _write(rep, image, output)


def read_trace(path: Path) -> RawTrace:
    """The RawTrace in a trace.json; a missing file is a usage error, a bad one a program error."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputFileError(f"no such file: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputFileError(f"cannot read {path}: {exc}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceFileError(f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    return from_chrome_trace(doc)


app.command()(run)


def plan_options(define: list[str] | None, strict: bool) -> PlanOptions:
    """The planner's options from ``-D NAME=VALUE`` (repeatable) and ``--strict``."""
    pairs = []
    for text in define or []:
        name, sep, value = text.partition("=")
        if not sep or not name.strip():
            raise typer.BadParameter(f"expected NAME=VALUE, found '{text}'", param_hint="'-D'")
        pairs.append((name.strip(), value))
    return PlanOptions(tuple(pairs), strict)


def _write(rep: Reporter, data: bytes, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(data.decode())
        return
    try:
        output.write_bytes(data)
    except OSError as exc:
        rep.usage(f"cannot write {output}: {exc.strerror}")


def main() -> None:
    """Console-script entry point."""
    app()
