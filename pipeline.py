"""The one module that chains the stages: parse -> plan -> generate -> run.

Each function here is a thin composition of one public entry point per stage;
the CLI and the Python API both go through it.

The stages are recursive tree walks (the parser's transformer, the checker, the
printers), so a program nested 1,000 deep needs more stack than Python's default
recursion limit of 1,000 frames allows. :func:`deep` runs a stage in a thread
with a large stack and a raised recursion limit; the front end bounds how deep a
program may nest (``dsl.depth.MAX_DEPTH``), so that a program past the bound is a
located error and everything within it fits this stack.
"""

from __future__ import annotations

import stat
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from gasync.dsl import ast
from gasync.dsl.diagnostics import GasyncError
from gasync.dsl.parser import parse
from gasync.planner import plan
from gasync.planner.model import Plan, PlanOptions

T = TypeVar("T")

MAX_PROGRAM_BYTES = 16 << 20  # a program file's size: parsing takes seconds per MB (docs/performance.md)
STACK_BYTES = 1 << 30  # reserved, not committed: a thread touches only the pages it uses
RECURSION_LIMIT = 400_000  # frames; MAX_DEPTH levels of nesting take a few dozen frames each at most

_local = threading.local()


class InputFileError(GasyncError):
    """A path on the command line or in the API that cannot be read."""

    code = "E0001"


def deep(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a thread with a large stack and a raised recursion limit (inline if
    already in one); its exception, if any, is raised here."""
    if getattr(_local, "deep", False):
        return fn(*args)
    box: list[Any] = []

    def body() -> None:
        _local.deep = True
        try:
            box.append((True, fn(*args)))
        except BaseException as exc:  # handed to the caller's thread as it is
            box.append((False, exc))

    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, RECURSION_LIMIT))
    old_stack = threading.stack_size(STACK_BYTES)
    try:
        worker = threading.Thread(target=body, name="gasync-compile", daemon=True)
        try:
            worker.start()
        finally:
            threading.stack_size(old_stack)
        worker.join()
    except RuntimeError:  # no room for such a stack here: run within Python's own limits instead
        sys.setrecursionlimit(old_limit)
        return fn(*args)
    finally:
        sys.setrecursionlimit(old_limit)
    ok, value = box[0]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


def load(path: str | Path) -> ast.Program:
    """Read and parse a ``.gasync`` file."""
    return deep(_load, path)


def _load(path: str | Path) -> ast.Program:
    return parse(read_program(path), str(path))


def read_program(path: str | Path) -> str:
    """A program file's text: UTF-8, its lines ended by LF, CR LF or a lone CR (read as Python
    reads text files), at most MAX_PROGRAM_BYTES. A device (``/dev/zero``, whose read would
    never end) is refused; a pipe (``<(...)``) is read like a file. InputFileError otherwise."""
    p = Path(path)
    try:
        mode = p.stat().st_mode
        if stat.S_ISDIR(mode):
            raise InputFileError(f"is a directory, not a .gasync file: {p}")
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
            raise InputFileError(f"is a device, not a .gasync file: {p}")
        with p.open("rb") as f:
            data = f.read(MAX_PROGRAM_BYTES + 1)
    except FileNotFoundError:
        raise InputFileError(f"no such file: {p}") from None
    except OSError as exc:
        raise InputFileError(f"cannot read {p}: {exc.strerror}") from None
    return decode_program(data, str(p))


def decode_program(data: bytes, label: str) -> str:
    """The text of a program's bytes (a file's, or standard input's as ``<stdin>``): as
    :func:`read_program` reads a file, so that both give the same text or the same error."""
    if len(data) > MAX_PROGRAM_BYTES:
        raise InputFileError(f"{label} is larger than {MAX_PROGRAM_BYTES >> 20} MiB, the most a program may be")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputFileError(f"not UTF-8 text: {label} (byte {exc.start})") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def check(path: str | Path, options: PlanOptions | None = None) -> Plan:
    """Read, parse and plan a ``.gasync`` file, and resolve its extern fns; warnings
    travel in ``Plan.warnings``."""
    return deep(_check, path, options)


def check_program(program: ast.Program, options: PlanOptions | None = None) -> Plan:
    """Plan a parsed program and resolve its extern fns (as :func:`check` does for a file)."""
    return deep(_check_program, program, options)


def _check(path: str | Path, options: PlanOptions | None) -> Plan:
    return _check_program(load(path), options)


def _check_program(program: ast.Program, options: PlanOptions | None) -> Plan:
    result = plan(program, options)
    if result.externs:  # this imports Numba, so only a program with externs pays for it
        from gasync.runtime.externs import resolve

        resolve(result.externs, result.path)
    return result
