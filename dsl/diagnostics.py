"""Diagnostics: located errors and warnings, printed the way rustc prints them.

Every mistake a user can make has its own exception class, a subclass of
:class:`GasyncError`, carrying a message, a :class:`~gasync.dsl.ast.Span` and
optional notes. :func:`render` turns one into::

    pipeline.gasync:3:14: error: expected ';' or '}', found 'let'
        |
      3 |     let x = 5
        |              ^
        = note: ...

Several independent errors travel together as :class:`ErrorGroup`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from gasync.dsl.ast import NOSPAN, Span


@dataclass(frozen=True)
class Note:
    """A secondary message, optionally pointing at another place."""

    message: str
    span: Span | None = None


class GasyncError(Exception):
    """Base of every diagnostic about a user's program (exit status 1)."""

    code = "E0309"
    severity = "error"
    path = ""  # the program's file, where the Python API raises it (str() then starts with path:line:col)

    def __init__(self, message: str, span: Span = NOSPAN, notes: tuple[Note, ...] = ()):
        super().__init__(message)
        self.message = message
        self.span = span
        self.notes = notes
        self.cli_message = ""  # the message in the command line's words (--input x: ...), where they differ

    @property
    def line(self) -> int:
        return self.span.line

    @property
    def column(self) -> int:
        return self.span.column

    def __str__(self) -> str:
        where = self.path
        if where and self.span.line > 0:
            where = f"{where}:{self.span.line}:{self.span.column}"
        return f"{where}: {self.severity}[{self.code}]: {self.message}" if where else self.message

    @property
    def diagnostic(self) -> dict[str, Any]:
        """This diagnostic as ``check --json`` prints it (file, line, column, code, message, notes...)."""
        return to_json(self, self.path)

    def __copy__(self) -> GasyncError:
        """A new error with this one's attributes (a dict of its own: the ``copy.copy`` of an
        exception goes through ``__reduce_ex__``, which tblib, installed by Dask, makes share it)."""
        other = type(self).__new__(type(self))
        other.args = self.args
        other.__dict__.update(self.__dict__)
        return other

    def in_cli_words(self) -> GasyncError:
        """The same diagnostic worded for the command line (its flags, not the API's arguments)."""
        if not self.cli_message:
            return self
        other = copy.copy(self)
        other.message, other.cli_message = self.cli_message, ""
        return other


# ---- kinds of syntax mistakes (raised by dsl.parser) ----------------------


class ParseError(GasyncError):
    """Base of syntax errors."""

    code = "E0199"


class UnexpectedTokenError(ParseError):
    """A token the grammar does not allow here."""

    code = "E0101"


class MissingSemicolonError(ParseError):
    """A statement or item that runs on without its ';'."""

    code = "E0102"


class ChainedComparisonError(ParseError):
    """``a < b < c``: Rust's rule, comparisons do not chain."""

    code = "E0103"


class ReservedWordError(ParseError):
    """A keyword used where an identifier belongs."""

    code = "E0104"


class UnclosedDelimiterError(ParseError):
    """A '{', '(' or '[' that the file never closes."""

    code = "E0105"


class UnmatchedDelimiterError(ParseError):
    """A '}', ')' or ']' with no opener, or the wrong one."""

    code = "E0106"


class UnexpectedEndError(ParseError):
    """The file ends in the middle of an item."""

    code = "E0107"


class InvalidCharacterError(ParseError):
    """A character that starts no token."""

    code = "E0108"


class UnterminatedCommentError(ParseError):
    """A '/*' with no '*/'."""

    code = "E0109"


class UnterminatedStringError(ParseError):
    """A '"' with no closing quote on the same line."""

    code = "E0110"


class InvalidLiteralError(ParseError):
    """A malformed number such as ``12abc`` or ``0xfg``."""

    code = "E0111"


class InvalidTargetError(ParseError):
    """An assignment to something that is not a variable or buffer element."""

    code = "E0112"


class InvalidInitializerError(ParseError):
    """A buffer initialiser other than zeros, iota, input, random(seed), fill(v)."""

    code = "E0113"


class InvalidReceiverError(ParseError):
    """A method called on something other than a name (``f(x).load()``)."""

    code = "E0114"


class NestingTooDeepError(ParseError):
    """Blocks or expressions nested past the compiler's documented limit (dsl/depth.py)."""

    code = "E0115"


class MisplacedReductionError(ParseError):
    """A reduction (``parallel for ... reduce``) inside an expression: it is only ever the
    whole value of a ``let`` or an assignment (decision 39). The parser finds it, but it is
    a misused reduction, so it has the reductions' code (docs/diagnostics.md)."""

    code = "E0219"


class ErrorGroup(GasyncError):
    """Several independent diagnostics from one stage, in source order (one or more).

    A GasyncError itself, so that ``except gasync.GasyncError`` catches every mistake in a
    program: its code, span, path, line and column are its first error's; ``errors`` lists
    them all, and ``str()`` gives one line each."""

    def __init__(self, errors: list[GasyncError]):
        first = errors[0] if errors else GasyncError("no diagnostics")
        super().__init__(first.message, first.span, first.notes)
        self.args = ("; ".join(e.message for e in errors),)
        self.errors = errors
        self.code, self.severity, self.path = first.code, first.severity, first.path

    def __str__(self) -> str:
        return "\n".join(str(e) for e in self.errors)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its errors (a Dask worker sends it to the client whole)."""
        return (ErrorGroup, (self.errors,))


# ---- rendering -------------------------------------------------------------

# ANSI styles by hand rather than through rich: the text must be byte-for-byte the
# plain one when colour is off, and rich would re-wrap long lines and read markup.
_STYLES = {
    "error": "\x1b[1;31m",
    "warning": "\x1b[1;33m",
    "note": "\x1b[1;36m",
    "message": "\x1b[1m",
    "gutter": "\x1b[1;34m",
}
_RESET = "\x1b[0m"


def paint(text: str, style: str, color: bool) -> str:
    """``text`` in one of the diagnostics' styles (error, warning, note, message, gutter) where ``color``."""
    return f"{_STYLES[style]}{text}{_RESET}" if color and text else text


def render(diag: GasyncError, path: str, source: str, *, code: bool = False, color: bool = False) -> str:
    """Format one diagnostic with the offending line and a caret; ``code`` adds its code
    (``error[E0204]``), ``color`` ANSI colours for a terminal."""
    span = diag.span
    sev = diag.severity
    label = paint(f"{sev}[{diag.code}]" if code else sev, sev, color)
    message = paint(diag.message, "message", color)
    where = path if span.line <= 0 else f"{path}:{span.line}:{span.column}"
    lines = [f"{where}: {label}: {message}"]
    if span.line > 0:
        lines.extend(_excerpt(span, source, sev, color))
    for note in diag.notes:
        if note.span is not None and note.span.line > 0:
            lines.append(f"{path}:{note.span.line}:{note.span.column}: {paint('note', 'note', color)}: {note.message}")
            lines.extend(_excerpt(note.span, source, "note", color))
        else:
            lines.append(f"  {paint('=', 'gutter', color)} {paint('note', 'note', color)}: {note.message}")
    return "\n".join(lines)


def _excerpt(span: Span, source: str, style: str, color: bool) -> list[str]:
    # Lines as the lexer counts them: only '\n' ends a line ('\f' does not).
    src_lines = source.split("\n")
    if not 1 <= span.line <= len(src_lines):
        return []
    raw = src_lines[span.line - 1].rstrip("\r")
    text = raw.expandtabs(4)
    # Columns count characters; the caret sits under the tab-expanded text.
    indent = len(raw[: span.column - 1].expandtabs(4))
    width = len(str(span.line))
    if span.end_line == span.line and span.end_column > span.column:
        carets = "^" * (span.end_column - span.column)
    else:
        carets = "^"
    pad = " " * width
    bar = paint("|", "gutter", color)
    return [
        f" {pad} {bar}",
        f" {paint(str(span.line), 'gutter', color)} {bar} {text}",
        f" {pad} {bar} {' ' * indent}{paint(carets, style, color)}",
    ]


def to_json(diag: GasyncError, path: str) -> dict[str, Any]:
    """One diagnostic as a JSON object: where (1-based lines and columns, the end
    exclusive; 0 where it has no place), what, its notes, and every place it points at
    (``spans``: the primary one first, then those of the notes that have one)."""
    spans = [{**_place(diag.span), "primary": True, "label": ""}] if diag.span.line > 0 else []
    for n in diag.notes:
        if n.span is not None and n.span.line > 0:
            spans.append({**_place(n.span), "primary": False, "label": n.message})
    return {
        "file": path,
        **_place(diag.span),
        "severity": diag.severity,
        "code": diag.code,
        "message": diag.message,
        "notes": [n.message for n in diag.notes],
        "spans": spans,
    }


def _place(span: Span) -> dict[str, int]:
    return {"line": span.line, "column": span.column, "end_line": span.end_line, "end_column": span.end_column}
