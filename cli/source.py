"""The program a command works on: a file, or standard input when the path is ``-``.

Diagnostics name a file by its path and standard input as ``<stdin>``. A file is
read by ``pipeline.load``; standard input is read once, so ``gasync check - -``
sees the text once and an empty program after it.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from gasync import pipeline
from gasync.dsl import ast
from gasync.dsl.parser import parse
from gasync.planner.model import Plan, PlanOptions

STDIN = "-"
STDIN_LABEL = "<stdin>"


@dataclass(frozen=True)
class Source:
    """Where a program comes from, and the name diagnostics give it."""

    arg: Path

    @property
    def is_stdin(self) -> bool:
        return str(self.arg) == STDIN

    @property
    def label(self) -> str:
        return STDIN_LABEL if self.is_stdin else str(self.arg)

    def text(self) -> str:
        """The program's text, for quoting lines in diagnostics ("" when unreadable)."""
        if self.is_stdin:
            return _stdin()
        try:
            return self.arg.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return ""

    def load(self) -> ast.Program:
        """Read and parse the program."""
        if self.is_stdin:
            return pipeline.deep(parse, _stdin(), STDIN_LABEL)
        return pipeline.load(self.arg)

    def check(self, options: PlanOptions) -> Plan:
        """Parse and plan; every ``-D`` name must be a const of the program (else a usage error)."""
        program = self.load()
        check_defines(program, options)
        return pipeline.check_program(program, options)


@functools.cache
def _stdin() -> str:
    return sys.stdin.read()


def check_defines(program: ast.Program, options: PlanOptions) -> None:
    """A ``-D NAME=...`` for a const the program does not declare is a usage error naming those it has."""
    consts = [item.name for item in program.items if isinstance(item, ast.Const)]
    for name, _ in options.defines:
        if name not in consts:
            has = f"its consts are {', '.join(consts)}" if consts else "it declares no const"
            raise click.UsageError(f"-D {name}: the program has no const named '{name}' ({has})")
