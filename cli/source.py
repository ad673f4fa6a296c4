"""The program a command works on: a file, or standard input when the path is ``-``.

Diagnostics name a file by its path and standard input as ``<stdin>``. Each is read
once (``pipeline.read_program``: a pipe could not be read again to quote its lines),
and standard input's bytes are decoded as a file's are: not UTF-8 is E0001 (exit
status 2) for both.
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
        try:
            return self.read()
        except pipeline.InputFileError:
            return ""

    def read(self) -> str:
        """The program's text, read once (a pipe could not be read twice); InputFileError
        when it cannot be read, is not UTF-8 or is too large (standard input as a file)."""
        if self.is_stdin:
            return pipeline.decode_program(_stdin(), STDIN_LABEL)
        return _file(self.arg)

    def load(self) -> ast.Program:
        """Read and parse the program."""
        return pipeline.deep(parse, self.read(), self.label)

    def check(self, options: PlanOptions) -> Plan:
        """Parse and plan; every ``-D`` name must be a const of the program (else a usage error)."""
        program = self.load()
        check_defines(program, options)
        return pipeline.check_program(program, options)


@functools.cache
def _stdin() -> bytes:
    """Standard input's bytes, at most one past the largest program (decoded as a file's are)."""
    if sys.stdin is None:
        raise pipeline.InputFileError("standard input is closed")
    return sys.stdin.buffer.read(pipeline.MAX_PROGRAM_BYTES + 1)


@functools.cache
def _file(path: Path) -> str:
    return pipeline.read_program(path)


def check_defines(program: ast.Program, options: PlanOptions) -> None:
    """A ``-D NAME=...`` for a const the program does not declare is a usage error naming those it has."""
    consts = [item.name for item in program.items if isinstance(item, ast.Const)]
    for name, _ in options.defines:
        if name not in consts:
            has = f"its consts are {', '.join(consts)}" if consts else "it declares no const"
            raise click.UsageError(f"-D {name}: the program has no const named '{name}' ({has})")
