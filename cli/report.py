"""How the CLI talks to the user: messages by verbosity, diagnostics, and the exit status.

Everything for people goes to stderr; stdout carries only a command's output
(the tables, ``--emit`` text, DOT, and with ``--json`` one JSON object).

Exit status: 0 success, 1 an error in the program or its input data, 2 a usage
error (printed as ``gasync: error: ...`` followed by ``try 'gasync CMD --help'``),
3 an internal error (``--debug`` shows its traceback), 130 interrupted.

With ``--json`` a failed ``run`` still prints one object on stdout,
``{"error": {"kind": ..., "message": ..., "exit_status": ...}, "diagnostics": [...]}``;
``kind`` is one of ``usage``, ``program`` (compile errors), ``deadlock``, ``timeout``,
``run`` (other failures of a run), ``internal``, ``interrupted``. ``check --json`` and
``compile --json`` print the diagnostics alone, a JSON array (``[]`` when there are
none). Each diagnostic is ``dsl.diagnostics.to_json``'s object, with its code
(``dsl/codes.py``); a usage error is one too, code E0002 and no line.

Colour (``--color auto|always|never``): ``auto`` colours stderr when it is a terminal
and ``NO_COLOR`` is not set (https://no-color.org) and ``TERM`` is not ``dumb``.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import click
import typer

from gasync.cli.source import Source
from gasync.dsl.diagnostics import ErrorGroup, GasyncError, paint, render, to_json
from gasync.pipeline import InputFileError
from gasync.planner.errors import DefineError
from gasync.runtime.errors import DeadlockError, RunError, RunTimeoutError

EXIT_PROGRAM = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell shows for a writer whose reader went away


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP (``kill``, ``timeout``, a closed terminal, a service manager): ends a
    command as Ctrl-C does, the simulator's worker killed, with ``gasync: terminated`` and the
    status a shell gives a process the signal ended (128 + its number: 143 for SIGTERM)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_status(self) -> int:
        return 128 + self.signum


class StdoutError(Exception):
    """Standard output could not be written: closed (``>&-``), a full disk (``> /dev/full``),
    a reader that went away (``| head -1``: ``broken`` then). Not gasync's bug: one line on
    stderr, no traceback."""

    def __init__(self, reason: str, broken: bool = False) -> None:
        super().__init__(reason)
        self.broken = broken


class CheckedStdout:
    """``sys.stdout`` for a command: a failed write or flush raises :class:`StdoutError`
    (Rich and print would otherwise fail as an internal error, or lose the output silently)."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return int(self._do("write", text) or 0)

    def flush(self) -> None:
        self._do("flush")

    def isatty(self) -> bool:
        return self.stream is not None and bool(self.stream.isatty())

    def _do(self, method: str, *args: Any) -> Any:
        if self.stream is None:  # (Python's sys.stdout where file descriptor 1 was closed)
            raise StdoutError("standard output is closed")
        try:
            return getattr(self.stream, method)(*args)
        except BrokenPipeError:
            raise StdoutError("the reader closed the pipe", broken=True) from None
        except (OSError, ValueError) as exc:  # (ValueError: a closed file object)
            raise StdoutError(getattr(exc, "strerror", None) or str(exc)) from None

    def __getattr__(self, name: str) -> Any:
        if self.stream is None:
            raise AttributeError(name)
        return getattr(self.stream, name)


def stdout_failed(exc: StdoutError) -> int:
    """Say so (not for a reader that went away, as other tools do not) and give the exit status."""
    if exc.broken:
        try:  # nothing more reaches the pipe, and Python's own flush at exit finds nothing to write
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.__stdout__.fileno() if sys.__stdout__ is not None else 1)
        except OSError:
            pass
        return EXIT_BROKEN_PIPE
    print(f"gasync: error: cannot write standard output: {exc}", file=sys.stderr)
    return EXIT_PROGRAM


def stopped(exc: KeyboardInterrupt) -> tuple[str, int]:
    """What stopped a command, and its exit status: ``interrupted`` (130) or ``terminated``."""
    if isinstance(exc, Terminated):
        return "terminated", exc.exit_status
    return "interrupted", EXIT_INTERRUPTED


QUIET, NORMAL, VERBOSE = 0, 1, 2
DEBUG_HINT = "gasync: this is a bug in gasync; re-run with --debug to see the traceback"
USAGE_CODE, INTERNAL_CODE = "E0002", "E0003"


def use_color(choice: str, stream: Any = None) -> bool:
    """Whether to colour ``stream`` (stderr) for ``--color`` ``auto``, ``always`` or ``never``."""
    if choice != "auto":
        return choice == "always"
    stream = sys.stderr if stream is None else stream
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


@dataclass
class Flag:
    value: bool = True


@dataclass
class Reporter:
    """Prints to stderr by verbosity, remembers the worst exit status and, for --json, the errors."""

    debug: bool = False
    verbosity: int = NORMAL
    as_json: bool = False  # run's --json: one object, with the error when it fails
    color: bool = False
    json_diagnostics: bool = False  # check's and compile's --json: the diagnostics, an array
    exit_code: int = 0
    errors: list[tuple[str, str]] = field(default_factory=list)  # (kind, message)
    diags: list[dict[str, Any]] = field(default_factory=list)  # every diagnostic, as JSON objects
    label: str = ""  # the program being worked on, for usage diagnostics

    def say(self, message: str) -> None:
        """What a command is doing (not with -q)."""
        if self.verbosity >= NORMAL:
            print(f"gasync: {message}", file=sys.stderr)

    def detail(self, message: str) -> None:
        """Compile phases, cache hits (only with -v)."""
        if self.verbosity >= VERBOSE:
            print(f"gasync: {message}", file=sys.stderr)

    def warn(self, message: str) -> None:
        print(f"gasync: {self._paint('warning')}: {message}", file=sys.stderr)

    def _paint(self, severity: str) -> str:
        return render_severity(severity, self.color)

    def ok(self, message: str) -> None:
        if self.verbosity >= NORMAL:
            print(message, file=sys.stderr)

    def usage(self, message: str, code: str = USAGE_CODE) -> None:
        print(f"gasync: {self._paint('error')}: {message}", file=sys.stderr)
        self.diags.append(plain_diagnostic(self.label, code, message))
        self._fail(EXIT_USAGE, "usage", message)

    def usage_at(self, err: GasyncError, src: Source) -> None:
        """A usage error about a place in the program (exit status 2), shown as a diagnostic."""
        print(render(err, src.label, src.text(), code=True, color=self.color), file=sys.stderr)
        self.diags.append(to_json(err, src.label))
        self._fail(EXIT_USAGE, "usage", err.message)

    def diagnostics(self, errors: list[GasyncError], src: Source) -> None:
        text = src.text()
        for err in (e.in_cli_words() for e in errors):
            print(render(err, src.label, text, code=True, color=self.color), file=sys.stderr)
            self.diags.append(to_json(err, src.label))
            shown = render(err, src.label, text)
            if err.severity == "error":
                kind = _kind(err)
                self._fail(EXIT_PROGRAM, kind, shown.splitlines()[0] if kind == "program" else err.message)
        n = sum(e.severity == "error" for e in errors)
        hidden = sum(getattr(e, "not_shown", 0) for e in errors)  # past a body's cap (planner/recovery.py)
        if n + hidden > 1:
            shown = f" ({n} shown)" if hidden else ""
            print(f"{src.label}: {n + hidden} errors{shown}", file=sys.stderr)

    def internal(self, exc: BaseException) -> None:
        if self.debug:
            traceback.print_exception(exc)
        print(f"gasync: {self._paint('internal error')}: {type(exc).__name__}: {exc}", file=sys.stderr)
        if not self.debug:
            print(DEBUG_HINT, file=sys.stderr)
        self.diags.append(plain_diagnostic(self.label, INTERNAL_CODE, f"{type(exc).__name__}: {exc}"))
        self._fail(EXIT_INTERNAL, "internal", f"{type(exc).__name__}: {exc}")

    def _fail(self, code: int, kind: str, message: str) -> None:
        self.exit_code = max(self.exit_code, code)
        self.errors.append((kind, message))

    @contextmanager
    def guard(self, src: Source) -> Iterator[Flag]:
        """Run one program's work; turn any failure into a message and an exit status."""
        flag = Flag()
        self.label = src.label
        try:
            yield flag
        except InputFileError as exc:
            flag.value = False
            self.usage(exc.message, exc.code)
        except LocatedUsageError as exc:  # an option a declaration asks for, left out
            flag.value = False
            for err in exc.errors:
                self.usage_at(err, src)
        except click.UsageError as exc:  # a bad option value found after parsing
            flag.value = False
            self.usage(exc.format_message())
        except ErrorGroup as group:
            flag.value = False
            self._program_errors(group.errors, src)
        except GasyncError as exc:
            flag.value = False
            self._program_errors([exc], src)
        except StdoutError:
            flag.value = False
            raise  # (main says so: the JSON error object and the tables cannot go anywhere either)
        except KeyboardInterrupt as exc:
            flag.value = False
            word, status = stopped(exc)
            print(f"gasync: {word}", file=sys.stderr)
            self._fail(status, "interrupted", word)
        except Exception as exc:  # an internal error: say so, briefly
            flag.value = False
            self.internal(exc)

    def _program_errors(self, errors: list[GasyncError], src: Source) -> None:
        """A bad ``-D`` value is a usage error; the rest are the program's."""
        for err in errors:
            if isinstance(err, DefineError):
                self.usage(err.in_cli_words().message, err.code)
        self.diagnostics([e for e in errors if not isinstance(e, DefineError)], src)

    def finish(self) -> None:
        """End the command: the usage hint, the JSON error object, the exit status."""
        if self.exit_code == EXIT_USAGE:
            print(usage_hint(), file=sys.stderr)
        if self.as_json and self.exit_code:
            print_json_error(self.errors, self.exit_code, self.diags)
        if self.json_diagnostics:
            sys.stdout.write(json.dumps(self.diags) + "\n")
        raise typer.Exit(self.exit_code)


class LocatedUsageError(click.UsageError):
    """A usage error that a declaration of the program explains (``buffer x: ... = input`` with
    no ``--input x``): exit status 2, shown at the declaration."""

    def __init__(self, error: GasyncError, *more: GasyncError):
        super().__init__(error.message)
        self.error = error
        self.errors = (error, *more)  # each shown at its declaration, in the program's order


def usage_hint(command_path: str | None = None) -> str:
    if command_path is None:
        ctx = click.get_current_context(silent=True)
        command_path = ctx.command_path if ctx is not None else "gasync"
    return f"try '{command_path} --help'"


def print_json_error(errors: list[tuple[str, str]], exit_code: int, diags: list[dict[str, Any]]) -> None:
    """``{"error": {"kind", "message", "exit_status"}, "diagnostics": [...]}`` on stdout: the first
    error's kind, every message, and every diagnostic (warnings too) as ``to_json`` gives it."""
    kind = errors[0][0] if errors else "internal"
    doc: dict[str, Any] = {
        "error": {"kind": kind, "message": "\n".join(m for _, m in errors), "exit_status": exit_code},
        "diagnostics": diags,
    }
    sys.stdout.write(json.dumps(doc) + "\n")


def plain_diagnostic(path: str, code: str, message: str) -> dict[str, Any]:
    """A diagnostic about no place in the program (a usage or internal error), as JSON."""
    return to_json(_Plain(message, code), path)


class _Plain(GasyncError):
    def __init__(self, message: str, code: str):
        super().__init__(message)
        self.code = code  # type: ignore[misc]


def render_severity(severity: str, color: bool) -> str:
    """``error``, ``warning`` or ``internal error``, in its colour on a terminal."""
    return paint(severity, "warning" if severity == "warning" else "error", color)


def _kind(err: GasyncError) -> str:
    if isinstance(err, DeadlockError):
        return "deadlock"
    if isinstance(err, RunTimeoutError):
        return "timeout"
    if isinstance(err, RunError):
        return "run"
    return "program"
