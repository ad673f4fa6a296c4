"""The one module that chains the stages: parse -> plan -> generate -> run.

Each function here is a thin composition of one public entry point per stage;
the CLI and the Python API both go through it.
"""

from __future__ import annotations

from pathlib import Path

from gasync.dsl import ast
from gasync.dsl.diagnostics import GasyncError
from gasync.dsl.parser import parse
from gasync.planner import plan
from gasync.planner.model import Plan, PlanOptions


class InputFileError(GasyncError):
    """A path on the command line or in the API that cannot be read."""


def load(path: str | Path) -> ast.Program:
    """Read and parse a ``.gasync`` file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputFileError(f"no such file: {p}") from None
    except IsADirectoryError:
        raise InputFileError(f"is a directory, not a .gasync file: {p}") from None
    except UnicodeDecodeError as exc:
        raise InputFileError(f"not UTF-8 text: {p} (byte {exc.start})") from None
    except OSError as exc:
        raise InputFileError(f"cannot read {p}: {exc.strerror}") from None
    return parse(text, str(p))


def check(path: str | Path, options: PlanOptions | None = None) -> Plan:
    """Read, parse and plan a ``.gasync`` file, and resolve its extern fns; warnings
    travel in ``Plan.warnings``."""
    result = plan(load(path), options)
    if result.externs:  # this imports Numba, so only a program with externs pays for it
        from gasync.runtime.externs import resolve

        resolve(result.externs, result.path)
    return result
