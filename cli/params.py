"""Option values of the command line, checked by Click before anything is read or compiled.

Each kind of value is a Click parameter type whose ``convert`` rejects a bad value
with a usage error (exit status 2) naming the option: durations, byte sizes,
``NAME=VALUE`` pairs, files to read and files to write. Repeated names are
rejected by the ``no_repeats`` callback rather than silently keeping the last.
"""

from __future__ import annotations

import math
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
UNIT_WORDS = "ns, us, ms, s, m or h; a bare number is seconds"
MIN_DURATION_S = 1e-9  # the device clock's tick: a shorter --timeout would be none at all
MAX_DURATION_S = 7 * 24 * 3600.0  # a week: longer than any run, and far inside the device clock's int64 ns
SIZE_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}
SIZE_UNITS |= {"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40, "k": 1 << 10, "m": 1 << 20}
SIZE_UNITS |= {"g": 1 << 30, "t": 1 << 40}


def parse_duration(text: str, allow_zero: bool = False) -> float:
    """Seconds in ``10s``, ``500ms``, ``250us``, ``2m``, ``1h`` or a bare number of seconds.

    Raises ValueError, with the message a user should see, for anything that is not
    a finite duration from 0 (where ``allow_zero``, else from 1 ns, the device clock's tick) to a week.
    """
    t = text.strip()
    number, scale = t, 1.0
    for suffix in sorted(UNITS, key=len, reverse=True):  # "ms" before "m" and "s"
        if t.endswith(suffix):
            number, scale = t[: -len(suffix)], UNITS[suffix]
            break
    try:
        value = float(number) * scale
    except ValueError:
        raise ValueError(f"expected a duration such as 10s or 500ms (units: {UNIT_WORDS}), found '{text}'") from None
    if not math.isfinite(value):
        raise ValueError(f"'{text}' is not a finite duration")
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"a duration must be {'zero or more' if allow_zero else 'positive'}, found '{text}'")
    if 0 < value < MIN_DURATION_S and not allow_zero:
        raise ValueError(f"'{text}' is shorter than the shortest duration accepted, 1ns")
    if value > MAX_DURATION_S:
        raise ValueError(f"'{text}' is longer than the longest duration accepted, a week (604800s)")
    return value


def parse_size(text: str) -> int:
    """Bytes in ``1GB``, ``500MiB``, ``2G`` (binary), ``4096``; ValueError otherwise."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    unit = m.group(2).lower() if m else ""
    if m is None or unit not in SIZE_UNITS:
        raise ValueError(f"expected a size such as 1GB, 500MiB or 2G, found '{text}'")
    return int(float(m.group(1)) * SIZE_UNITS[unit])


class Duration(click.ParamType):
    """A duration; ``allow_zero`` for delays (a signal at launch), not for bounds."""

    name = "duration"

    def __init__(self, allow_zero: bool = False):
        self.allow_zero = allow_zero

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, float):
            return value
        try:
            return parse_duration(str(value), self.allow_zero)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


class Size(click.ParamType):
    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return parse_size(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


class Count(click.IntRange):
    """An integer from 0 ("'x' is not a valid integer", not Click's "... integer range")."""

    name = "integer"

    def __init__(self) -> None:
        super().__init__(min=0)


def readable_file(text: str) -> Path:
    """A file that exists and is a file; ValueError otherwise."""
    path = Path(text)
    if not path.exists():
        raise ValueError(f"no such file: {text}")
    if path.is_dir():
        raise ValueError(f"is a directory, not a file: {text}")
    if not os.access(path, os.R_OK):
        raise ValueError(f"cannot read {text}: permission denied")
    return path


def writable_file(text: str) -> Path:
    """A path a file can be written at: its folder exists and is writable; ValueError otherwise."""
    path = Path(text)
    folder = path.parent
    if path.is_dir():
        raise ValueError(f"is a directory, not a file: {text}")
    if not folder.is_dir():
        raise ValueError(f"cannot write {text}: no such directory: {folder}")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"cannot write {text}: the directory {folder} is not writable")
    if path.exists() and not os.access(path, os.W_OK):
        raise ValueError(f"cannot write {text}: the file is read-only")
    return path


class FileToWrite(click.ParamType):
    name = "file"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path:
        try:
            return writable_file(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


class Pair(click.ParamType):
    """``NAME=VALUE``, the value checked by ``value`` (which raises ValueError)."""

    def __init__(self, what: str, value: Callable[[str], Any] = str, example: str = "NAME=VALUE"):
        self.name = what
        self.value = value
        self.example = example

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> tuple[str, Any]:
        if isinstance(value, tuple):
            return value
        name, sep, rest = str(value).partition("=")
        if not sep or not name.strip() or (not rest and self.value is not str):
            self.fail(f"expected {self.example}, found '{value}'", param, ctx)
        try:
            return name.strip(), self.value(rest)
        except ValueError as exc:
            self.fail(f"{name.strip()}: {exc}", param, ctx)


def no_repeats(ctx: click.Context, param: click.Parameter, pairs: list[tuple[str, Any]] | None) -> Any:
    """Callback: the same NAME given twice is an error, not 'the last one wins'."""
    seen: set[str] = set()
    for name, _ in pairs or []:
        if name in seen:
            raise click.BadParameter(f"'{name}' is given more than once; give it once", ctx, param)
        seen.add(name)
    return pairs


def distinct_outputs(ctx: click.Context, param: click.Parameter, pairs: list[tuple[str, Any]] | None) -> Any:
    """Callback of --output: each buffer once, and each file for one buffer (else one would
    silently overwrite the other)."""
    no_repeats(ctx, param, pairs)
    files: dict[tuple[object, ...], str] = {}
    for name, path in pairs or []:
        key = file_key(Path(path))
        if key is None:
            continue
        if key in files:
            raise click.BadParameter(f"'{name}' and '{files[key]}' are both written to {path}", ctx, param)
        files[key] = name
    return pairs


def file_key(path: Path) -> tuple[object, ...] | None:
    """What makes two paths one file: the device and inode of one that exists (links, ``..``
    and symbolic links included), else the absolute path; None for a character device
    (``/dev/null``, a terminal), which a second write does not overwrite."""
    try:
        st = path.stat()
    except OSError:
        return ("path", str(path.resolve()))
    if stat.S_ISCHR(st.st_mode):
        return None
    return ("file", st.st_dev, st.st_ino)


def distinct_files(writes: list[tuple[str, Path]], reads: list[tuple[str, Path]]) -> None:
    """Every file a command writes is one no other of its outputs writes and none of its inputs
    is: else one output would silently replace another, or the program's source or an input
    file (``--report prog.gasync``). ``writes`` pairs each output as the user gave it
    (``--trace t.json``, ``--output y=y.npy``) with its path, ``reads`` each input as a message
    names it (``the program's source file``) with its path; a usage error otherwise."""
    read_keys: dict[tuple[object, ...], str] = {}
    for what, path in reads:
        key = file_key(path)
        if key is not None:
            read_keys.setdefault(key, what)
    written: dict[tuple[object, ...], str] = {}
    for given, path in writes:
        key = file_key(path)
        if key is None:
            continue
        if key in read_keys:
            raise click.UsageError(f"{given}: that is {read_keys[key]}, which would be overwritten")
        if key in written:
            raise click.UsageError(f"{written[key]} and {given} write one file: one would replace the other")
        written[key] = given


class Folder(click.ParamType):
    """A folder's path; an empty one is an error (``Path("")`` would be the working directory)."""

    name = "folder"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path:
        if isinstance(value, Path):
            return value
        if not str(value).strip():
            self.fail("an empty path names no folder (give DIR, or leave the option out for the default)", param, ctx)
        return Path(str(value))


def a_folder(ctx: click.Context, param: click.Parameter, path: Path | None) -> Path | None:
    """Callback: a folder, or a path where one can be made (not an existing file)."""
    if path is None:
        return path
    try:
        is_file = path.exists() and not path.is_dir()
    except OSError as exc:  # a name too long, a folder that cannot be looked into
        raise click.BadParameter(f"{path}: {exc.strerror or exc}", ctx, param) from None
    if is_file:
        raise click.BadParameter(f"{path} is a file, not a folder", ctx, param)
    return path


def verbosity(quiet: bool, verbose: bool) -> int:
    """0 quiet, 1 normal, 2 verbose; both flags at once is a usage error."""
    if quiet and verbose:
        raise click.UsageError("-q/--quiet and -v/--verbose cannot be given together")
    return 0 if quiet else 2 if verbose else 1


DEFINE = Pair("define", example="NAME=VALUE such as N=1024")
INPUT = Pair("input", lambda v: readable_file(v), "NAME=FILE.npy")
OUTPUT = Pair("output", lambda v: writable_file(v), "NAME=FILE.npy")
SIGNAL = Pair("signal", lambda v: parse_duration(v, allow_zero=True), "NAME=DELAY such as stop=5ms")
