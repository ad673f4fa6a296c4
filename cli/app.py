"""``gasync``: check, compile, run and draw ``.gasync`` programs.

Exit status: 0 success, 1 an error in the user's program (or its inputs),
2 a usage error (bad options, missing files), 3 an internal compiler error.
Errors print as ``path:line:col: error: message`` with the source line and a
caret; usage errors as ``gasync: error: message`` and a ``try 'gasync CMD --help'``
line, Click's own (unknown options, bad choices) included: ``main`` runs the app
outside Click's standalone mode and prints them itself. No Python traceback
reaches the user unless ``--debug`` is given. Warnings print the same way and do
not change the exit status; `check` then ends with `path: ok, N warnings` instead
of a bare `path: ok`.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import click
import typer

from gasync import __version__, pipeline
from gasync.cli import cache as cache_cli
from gasync.cli.common import (
    Color,
    ColorOpt,
    DebugOpt,
    DefineOpt,
    DiagnosticsJsonOpt,
    FileArg,
    QuietOpt,
    StrictOpt,
    UncheckedOpt,
    plan_options,
)
from gasync.cli.drawings import GraphFormat, emit_graph, graph_format
from gasync.cli.map import map_command
from gasync.cli.params import FileToWrite, distinct_files, verbosity
from gasync.cli.report import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    USAGE_CODE,
    CheckedStdout,
    Reporter,
    StdoutError,
    Terminated,
    plain_diagnostic,
    print_json_error,
    stdout_failed,
    stopped,
    usage_hint,
    use_color,
)
from gasync.cli.run import run
from gasync.cli.source import Source
from gasync.codegen import generate
from gasync.dsl import codes
from gasync.dsl.printer import dump
from gasync.pipeline import InputFileError
from gasync.planner.printer import format_plan
from gasync.runtime.trace import RawTrace, TraceFileError
from gasync.viz.perfetto import from_chrome_trace
from gasync.viz.schedule import schedule_graph
from gasync.viz.states import states_graph
from gasync.viz.taskgraph import task_graph

PROG = "gasync"

app = typer.Typer(
    name="gasync",
    help="async/await for GPUs: compile .gasync programs into state machines run by a device-side executor.",
    no_args_is_help=True,
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


@app.command()
def check(
    files: Annotated[
        list[Path], typer.Argument(help="One or more .gasync files (- reads standard input).", show_default=False)
    ],
    define: DefineOpt = None,
    strict: StrictOpt = False,
    as_json: DiagnosticsJsonOpt = False,
    color: ColorOpt = Color.auto,
    quiet: QuietOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Parse and plan programs; print warnings and errors only."""
    rep = Reporter(debug, verbosity(quiet, False), color=use_color(color), json_diagnostics=as_json)
    options = plan_options(define, strict)
    for path in files:
        src = Source(path)
        warnings = 0
        with rep.guard(src) as ok:
            plan = src.check(options)
            rep.diagnostics(list(plan.warnings), src)
            warnings = len(plan.warnings)
        if ok.value:
            rep.ok(f"{src.label}: {check_summary(warnings)}")
    rep.finish()


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
    unchecked: UncheckedOpt = False,
    as_json: DiagnosticsJsonOpt = False,
    color: ColorOpt = Color.auto,
    debug: DebugOpt = False,
) -> None:
    """Compile a program and print one stage's output (ast, plan or py); with --json, only its diagnostics."""
    rep = Reporter(debug, color=use_color(color), json_diagnostics=as_json)
    src = Source(file)
    with rep.guard(src):
        # the whole program is checked whatever the stage printed (decision 63): a compile that
        # prints an AST is no "ok" for a program with type errors, nor for a -D it does not declare
        plan = src.check(plan_options(define, strict))
        rep.diagnostics(list(plan.warnings), src)
        if emit is Emit.ast:
            text = pipeline.deep(dump, src.load())
        else:
            stage = format_plan if emit is Emit.plan else lambda p: generate(p, checked=not unchecked).source
            text = pipeline.deep(stage, plan)
        if not as_json:
            sys.stdout.write(text)
    rep.finish()


FormatOpt = Annotated[
    GraphFormat | None,
    typer.Option(
        "--format", help="dot (text), svg, png, pdf or html; default: from -o's suffix, else dot.", show_default=False
    ),
]
OutputOpt = Annotated[
    Path | None,
    typer.Option("-o", "--output", click_type=FileToWrite(), help="Write here instead of stdout.", show_default=False),
]


@app.command()
def graph(
    file: FileArg,
    states: Annotated[bool, typer.Option("--states", help="Draw each async fn's and task's state machine.")] = False,
    format: FormatOpt = None,
    output: OutputOpt = None,
    define: DefineOpt = None,
    color: ColorOpt = Color.auto,
    debug: DebugOpt = False,
) -> None:
    """Draw the task graph (tasks, the data they use, 'after' edges, groups), or with --states the state machines."""
    rep = Reporter(debug, color=use_color(color))
    src = Source(file)
    with rep.guard(src):
        fmt = graph_format(output, format)
        if output is not None and not src.is_stdin:
            distinct_files([(f"-o {output}", output)], [("the program's source file", src.arg)])
        plan = src.check(plan_options(define, False))
        rep.diagnostics(list(plan.warnings), src)
        drawing = states_graph(plan, pipeline.deep(generate, plan).internal_states) if states else task_graph(plan)
        emit_graph(rep, drawing, fmt, output, f"{'states' if states else 'tasks'} of {src.label}")
    rep.finish()


@app.command()
def schedule(
    trace: Annotated[Path, typer.Argument(help="A trace.json from 'gasync run --trace'.", show_default=False)],
    format: FormatOpt = None,
    output: OutputOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Draw a traced run's schedule: a lane per task, then a row per executor, one box per poll along a time axis."""
    rep = Reporter(debug)
    with rep.guard(Source(trace)):
        fmt = graph_format(output, format)
        if output is not None:
            distinct_files([(f"-o {output}", output)], [("the trace file", trace)])
        raw = read_trace(trace)
        emit_graph(rep, schedule_graph(raw), fmt, output, f"schedule of {trace}")
    rep.finish()


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


@app.command()
def explain(
    code: Annotated[str, typer.Argument(help="A diagnostic's code, e.g. E0204.", show_default=False)],
) -> None:
    """Explain a diagnostic's code, with an example (the codes: docs/diagnostics.md)."""
    text = codes.explain(code)
    if text is None:
        known = f"{codes.CODES[0].code}..{codes.CODES[-1].code}"
        raise click.UsageError(f"no diagnostic has the code '{code}' (they run {known}; see docs/diagnostics.md)")
    sys.stdout.write(text)


app.command()(run)
app.command(name="map")(map_command)
app.add_typer(cache_cli.app)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: the app, with Click's usage errors in gasync's style."""
    args = sys.argv[1:] if argv is None else argv
    previous = catch_interrupts()
    stdout, sys.stdout = sys.stdout, CheckedStdout(sys.stdout)  # type: ignore[assignment]
    try:
        code = app(args=args, prog_name=PROG, standalone_mode=False)
        sys.stdout.flush()  # what is still buffered fails here, not silently at exit
    except StdoutError as exc:
        code = stdout_failed(exc)
    except click.exceptions.NoArgsIsHelpError as exc:
        exc.show()  # `gasync` or `gasync cache` alone: the help
        code = EXIT_USAGE
    except click.UsageError as exc:
        code = _usage_error(exc, args)
    except click.Abort:
        print("gasync: interrupted", file=sys.stderr)
        code = EXIT_INTERRUPTED
    except KeyboardInterrupt as exc:
        word, code = stopped(exc)
        print(f"gasync: {word}", file=sys.stderr)
    except Exception as exc:  # outside any command's guard: still no traceback unless --debug
        Reporter(debug=_given(args, "--debug")).internal(exc)
        code = EXIT_INTERNAL
    finally:
        sys.stdout = stdout
        for signum, handler in previous.items():  # (main() called in a process that goes on: tests)
            signal.signal(signum, handler)
    sys.exit(code or 0)


def catch_interrupts() -> dict[int, Any]:
    """Ctrl-C (SIGINT, to gasync or to its process group) ends a command as ``interrupted``
    (exit status 130), also where gasync was started with SIGINT ignored (a shell starts a
    background job so): a run must stop when asked, and the simulator's worker is killed
    by the parent (runtime/backends.py), not left to spin. SIGTERM and SIGHUP end it the
    same way as ``terminated`` (cli/report.py ``Terminated``), where Python's default would
    end gasync at once and leave the worker running a while without its parent.
    Returns the handlers it replaced."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    previous = {signal.SIGINT: signal.signal(signal.SIGINT, signal.default_int_handler)}
    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) is signal.SIG_DFL:  # (nohup's SIG_IGN stays)
            previous[signum] = signal.signal(signum, _terminate)
    return previous


def _terminate(signum: int, frame: object) -> None:
    raise Terminated(signum)


def _usage_error(exc: click.UsageError, args: list[str]) -> int:
    """``gasync: error: ...`` and the hint; with ``run --json``, the JSON error object too."""
    print(f"gasync: error: {exc.format_message()}", file=sys.stderr)
    path = exc.ctx.command_path if exc.ctx is not None else PROG
    print(usage_hint(path), file=sys.stderr)
    if _given(args, "--json") and _has_json(exc.ctx):
        diag = plain_diagnostic("", USAGE_CODE, exc.format_message())
        assert exc.ctx is not None
        if exc.ctx.command.name == "run":
            print_json_error([("usage", exc.format_message())], EXIT_USAGE, [diag])
        else:
            sys.stdout.write(json.dumps([diag]) + "\n")
    return EXIT_USAGE


def _has_json(ctx: click.Context | None) -> bool:
    """Whether the command the error is about has a --json option."""
    return ctx is not None and any("--json" in getattr(p, "opts", ()) for p in ctx.command.params)


def _given(args: list[str], flag: str) -> bool:
    """Whether ``flag`` is among the options (before a ``--`` that ends them)."""
    options = args[: args.index("--")] if "--" in args else args
    return flag in options
