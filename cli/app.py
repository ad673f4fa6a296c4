"""``gasync``: check, compile, run and draw ``.gasync`` programs.

Exit status: 0 success, 1 an error in the user's program (or its inputs),
2 a usage error (bad options, missing files), 3 an internal compiler error.
Errors print as ``path:line:col: error: message`` with the source line and a
caret; no Python traceback reaches the user unless ``--debug`` is given.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from gasync import __version__, pipeline
from gasync.cli.report import Reporter
from gasync.dsl.printer import dump

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


FileArg = Annotated[Path, typer.Argument(help="A .gasync source file.", show_default=False)]


@app.command()
def check(
    files: Annotated[list[Path], typer.Argument(help="One or more .gasync files.", show_default=False)],
) -> None:
    """Parse and check programs; print diagnostics only."""
    rep = Reporter()
    failed = 0
    for path in files:
        with rep.guard(path) as ok:
            pipeline.load(path)
        if ok.value:
            rep.ok(f"{path}: ok")
        else:
            failed += 1
    raise typer.Exit(rep.exit_code if failed else 0)


@app.command()
def compile(
    file: FileArg,
    emit: Annotated[Emit, typer.Option("--emit", help="What to print.")] = Emit.ast,
) -> None:
    """Compile a program and print one stage's output (ast, plan or py)."""
    rep = Reporter()
    with rep.guard(file):
        program = pipeline.load(file)
        if emit is Emit.ast:
            sys.stdout.write(dump(program))
        else:
            rep.usage(f"--emit {emit.value} is not available yet in this version")
    raise typer.Exit(rep.exit_code)


def main() -> None:
    """Console-script entry point."""
    app()
