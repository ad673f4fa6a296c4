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

from dataclasses import dataclass

from gasync.dsl.ast import NOSPAN, Span


@dataclass(frozen=True)
class Note:
    """A secondary message, optionally pointing at another place."""

    message: str
    span: Span | None = None


class GasyncError(Exception):
    """Base of every diagnostic about a user's program (exit status 1)."""

    severity = "error"

    def __init__(self, message: str, span: Span = NOSPAN, notes: tuple[Note, ...] = ()):
        super().__init__(message)
        self.message = message
        self.span = span
        self.notes = notes


# ---- kinds of syntax mistakes (raised by dsl.parser) ----------------------


class ParseError(GasyncError):
    """Base of syntax errors."""


class UnexpectedTokenError(ParseError):
    """A token the grammar does not allow here."""


class MissingSemicolonError(ParseError):
    """A statement or item that runs on without its ';'."""


class ChainedComparisonError(ParseError):
    """``a < b < c``: Rust's rule, comparisons do not chain."""


class ReservedWordError(ParseError):
    """A keyword used where an identifier belongs."""


class UnclosedDelimiterError(ParseError):
    """A '{', '(' or '[' that the file never closes."""


class UnmatchedDelimiterError(ParseError):
    """A '}', ')' or ']' with no opener, or the wrong one."""


class UnexpectedEndError(ParseError):
    """The file ends in the middle of an item."""


class InvalidCharacterError(ParseError):
    """A character that starts no token."""


class UnterminatedCommentError(ParseError):
    """A '/*' with no '*/'."""


class UnterminatedStringError(ParseError):
    """A '"' with no closing quote on the same line."""


class InvalidLiteralError(ParseError):
    """A malformed number such as ``12abc`` or ``0xfg``."""


class InvalidTargetError(ParseError):
    """An assignment to something that is not a variable or buffer element."""


class InvalidInitializerError(ParseError):
    """A buffer initialiser other than zeros, iota, input, random(seed), fill(v)."""


class InvalidReceiverError(ParseError):
    """A method called on something other than a name (``f(x).load()``)."""


class NestingTooDeepError(ParseError):
    """Blocks or expressions nested past the compiler's documented limit (dsl/depth.py)."""


class ErrorGroup(Exception):
    """Several independent diagnostics from one stage, in source order."""

    def __init__(self, errors: list[GasyncError]):
        super().__init__("; ".join(e.message for e in errors))
        self.errors = errors


# ---- rendering -------------------------------------------------------------


def render(diag: GasyncError, path: str, source: str) -> str:
    """Format one diagnostic with the offending line and a caret."""
    span = diag.span
    if span.line <= 0:
        head = f"{path}: {diag.severity}: {diag.message}"
        lines = [head]
    else:
        head = f"{path}:{span.line}:{span.column}: {diag.severity}: {diag.message}"
        lines = [head, *_excerpt(span, source)]
    for note in diag.notes:
        if note.span is not None and note.span.line > 0:
            lines.append(f"{path}:{note.span.line}:{note.span.column}: note: {note.message}")
            lines.extend(_excerpt(note.span, source))
        else:
            lines.append(f"  = note: {note.message}")
    return "\n".join(lines)


def _excerpt(span: Span, source: str) -> list[str]:
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
    return [
        f" {pad} |",
        f" {span.line} | {text}",
        f" {pad} | {' ' * indent}{carets}",
    ]
