"""How the CLI reports diagnostics and chooses its exit status."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import typer

from gasync.dsl.diagnostics import ErrorGroup, GasyncError, render
from gasync.pipeline import InputFileError

EXIT_PROGRAM = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3


@dataclass
class Flag:
    value: bool = True


class Reporter:
    """Prints diagnostics to stderr and remembers the worst exit status."""

    def __init__(self, debug: bool = False):
        self.debug = debug
        self.exit_code = 0

    def ok(self, message: str) -> None:
        print(message, file=sys.stderr)

    def usage(self, message: str) -> None:
        print(f"gasync: error: {message}", file=sys.stderr)
        self.exit_code = max(self.exit_code, EXIT_USAGE)

    def diagnostics(self, errors: list[GasyncError], path: Path) -> None:
        source = _source_of(path)
        for err in errors:
            print(render(err, str(path), source), file=sys.stderr)
            if err.severity == "error":
                self.exit_code = max(self.exit_code, EXIT_PROGRAM)
        n = sum(e.severity == "error" for e in errors)
        if n > 1:
            print(f"{path}: {n} errors", file=sys.stderr)

    @contextmanager
    def guard(self, path: Path) -> Iterator[Flag]:
        """Run one file's work; turn any failure into a diagnostic and a status."""
        flag = Flag()
        try:
            yield flag
        except InputFileError as exc:
            flag.value = False
            self.usage(exc.message)
        except typer.BadParameter as exc:  # a bad option value found after parsing
            flag.value = False
            self.usage(exc.format_message())
        except GasyncError as exc:
            flag.value = False
            self.diagnostics([exc], path)
        except ErrorGroup as group:
            flag.value = False
            self.diagnostics(group.errors, path)
        except KeyboardInterrupt:
            flag.value = False
            print("gasync: interrupted", file=sys.stderr)
            self.exit_code = 130
        except Exception as exc:  # an internal error: say so, briefly
            flag.value = False
            if self.debug:
                traceback.print_exc()
            print(f"gasync: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
            self.exit_code = max(self.exit_code, EXIT_INTERNAL)


def _source_of(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
