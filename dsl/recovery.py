"""Recovery from syntax errors at item level, so that one check reports several.

The parser stops at the first token it cannot take. :func:`recover` then
blanks the item that holds it (every character but newlines becomes a space,
so that every later line and column stays where it was) and parses the text
again, until the text parses or ``MAX_ERRORS`` errors are found: one error
per item at most, and no cascade from a half-read item, as the parser never
sees any of it.

The part blanked runs from the first token of the item that holds the error
to the first token of the next item. An item starts at an item keyword
(``const``, ``buffer``, ``shared``, ``signal``, ``channel``, ``fn``, ``async
fn``, ``extern fn``, ``task``, ``group``) that either starts its line, no
further right than the item before it, or follows a ';' or '}' at brace depth
0. So an item keyword at the start of a line inside a body ends that body,
whose '}' is missing (dsl/block_errors.py says so); a '}' too many or too few
inside an item does not end it early, as formatted code puts the next item at
the start of a line; and a group's member tasks, indented, are not items of
their own. Before the first item, the error's token itself is skipped up to
the next item. A character that starts no token is skipped with the item
around it (an unclosed '"' with the rest of its line); an unterminated ``/*``
takes the rest of the file with it.

Each parse gives what a parse of the whole text would, but none reads the
text before the part blanked again: the text is lexed once (dsl/lexed.py
keeps the tokens that end before each blanked part), the parser starts from
the last of the states it saved before the part blanked (dsl/reparse.py:
one every 1,000 tokens, and one where the tokens kept end), and
:class:`ItemStarts` keeps which tokens start items up to the last item start
before it. So an error costs about the items from the one before it to the
next one, and ten errors about what one does. Measured on a 350 KB program
(bench/compile_programs.py's pipeline, repeated, with a mistake in 1, 3 or
10 different items; a shared 2-core machine, best of 3): ``dsl.parse`` took
0.37 s without an error and 1.02 s, 2.39 s and 6.15 s with 1, 3 and 10
errors when each parse read the whole text again (and each error lexed it
twice more for its diagnostic, scanned it once more for its item, and parsed
it again with Lark for its exception); it now takes 0.46 s, 0.43 s and
0.45 s, and a correct program's time is unchanged. ``gasync check`` on the same files (0.8 s of which is the command
starting) went from 1.86 s, 3.30 s and 6.84 s to 1.33 s, 1.36 s and 1.39 s.

The parser's held mistakes (literals, assignment targets...: dsl/rules.py)
come from the last parse, of the items that parsed, the first of each item;
all the errors are returned in source order. The rest of the compiler plans
only a whole AST, so a file with any of them is not planned.
"""

from __future__ import annotations

import copy
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gasync.dsl import ast
from gasync.dsl.block_errors import ITEM_KEYWORDS
from gasync.dsl.diagnostics import GasyncError, Note
from gasync.dsl.lexed import Lexed

MAX_ERRORS = 10  # per file, as planner/recovery.py's MAX_BODY_ERRORS per body

_NOT_AN_ITEM_AFTER = {"ASYNC", "EXTERN", "LOCAL"}  # `async fn`, `extern fn`, `local buffer` start before
_AFTER_ITEM = {"SEMICOLON", "RBRACE"}
_ANY_COLUMN = 1 << 62  # before the first item, an item keyword that starts a line starts one


@dataclass(frozen=True)
class Failed:
    """A parse that stopped: its error, and the offset in the text where the parser stopped
    (None where it cannot go on: an internal error)."""

    error: GasyncError
    offset: int | None


Parsed = tuple[list[ast.Item], list[GasyncError]]  # the items, and the mistakes held while building them


def recover(lexed: Lexed, parse_once: Callable[[Lexed], Parsed | Failed]) -> Parsed:
    """The items of ``lexed.text`` and its errors (none when it parses), from ``parse_once``
    run on the text and then on the text with each failed item blanked."""
    errors: list[GasyncError] = []
    items: list[ast.Item] = []
    starts = ItemStarts(lexed)
    while True:
        result = parse_once(lexed)
        if not isinstance(result, Failed):
            items, held = result
            errors.extend(_first_per_item(held, items))
            break
        if not _repeats(result.error, errors):
            errors.append(result.error)
        if result.offset is None or len(errors) > MAX_ERRORS:  # one past the cap: there are more
            break
        start, end = skipped(starts, result.offset, len(lexed.text))
        if not lexed.blank(start, end):  # nothing left to skip: no progress
            break
        starts.kept(lexed.kept or 0)
    errors.sort(key=lambda e: (e.span.line, e.span.column))
    return items, _capped(errors, counted=not isinstance(result, Failed))


def _repeats(error: GasyncError, errors: list[GasyncError]) -> bool:
    """Whether ``error`` says again what one of ``errors`` said, at the same place: a parse of
    the text with the part after it blanked can stop where the last one did (a group's '{'
    left open, where the task after it, at the start of a line, parsed as one of its members,
    was blanked as an item of its own), and its note about where the file ends would be wrong."""
    return any(type(e) is type(error) and e.message == error.message and e.span == error.span for e in errors)


def _capped(errors: list[GasyncError], counted: bool) -> list[GasyncError]:
    """At most ``MAX_ERRORS`` errors, the last one shown with a note on the others, as the
    planner does for a body; ``counted``: all of them were found (else the parse stopped)."""
    if len(errors) <= MAX_ERRORS:
        return errors
    hidden = len(errors) - MAX_ERRORS
    more = "more errors" if not counted else "1 more error" if hidden == 1 else f"{hidden} more errors"
    last = copy.copy(errors[MAX_ERRORS - 1])
    last.notes = (*last.notes, Note(f"{more} not shown: at most {MAX_ERRORS} syntax errors are shown per file"))
    return [*errors[: MAX_ERRORS - 1], last]


def _first_per_item(errors: list[GasyncError], items: Sequence[ast.Item]) -> list[GasyncError]:
    """The first of ``errors`` inside each item (by span; items are in source order)."""
    starts = [(it.span.line, it.span.column) for it in items]
    seen: set[int] = set()
    out: list[GasyncError] = []
    for err in errors:
        where = (err.span.line, err.span.column)
        k = bisect_right(starts, where) - 1
        if k < 0 or where >= (items[k].span.end_line, items[k].span.end_column):
            out.append(err)  # in no item (none is): keep it
        elif k not in seen:
            seen.add(k)
            out.append(err)
    return out


class ItemStarts:
    """Which tokens of ``lexed`` start an item (see the module's docstring), worked out as far
    as asked. After a token the state is (brace depth, column and keyword of the item the
    last start began, the token's type); after an item start it depends on that token alone,
    so a blank keeps the starts up to the last one whose look-ahead it did not change."""

    def __init__(self, lexed: Lexed) -> None:
        self.lexed = lexed
        self.marks: list[bool] = []
        self.at: list[int] = []  # the indices of the starts
        self._state: tuple[int, int, str, str] = (0, _ANY_COLUMN, "", "SEMICOLON")

    def kept(self, tokens: int) -> None:
        """After a blank that kept ``tokens`` tokens: the mark of the last of them looks at the next."""
        n = bisect_left(self.at, tokens - 1)
        del self.at[n:]
        if self.at:
            k = self.at[-1]
            tok = self.lexed.toks[k]
            del self.marks[k + 1 :]
            self._state = (0, tok.column or 0, tok.type, tok.type)
        else:
            self.marks.clear()
            self._state = (0, _ANY_COLUMN, "", "SEMICOLON")

    def start(self, k: int) -> bool:
        """Whether token ``k`` (which exists) starts an item."""
        while len(self.marks) <= k:
            self._mark()
        return self.marks[k]

    def last_before(self, k: int) -> int | None:
        """The last start before token ``k``."""
        if k > 0:
            self.start(k - 1)
        n = bisect_left(self.at, k)
        return self.at[n - 1] if n else None

    def first_after(self, k: int) -> int | None:
        """The first start after token ``k``."""
        j = k + 1
        while self.lexed.has(j):
            if self.start(j):
                return j
            j += 1
        return None

    def _mark(self) -> None:
        k = len(self.marks)
        tok, first = self.lexed.toks[k], self.lexed.first[k]
        depth, column, kind, prev = self._state
        start = False
        if (tok.type in ITEM_KEYWORDS and prev not in _NOT_AN_ITEM_AFTER) or (
            tok.type == "ASYNC" and self.lexed.has(k + 1) and self.lexed.toks[k + 1].type == "FN"
        ):
            if first and (tok.column or 0) <= column:  # at any depth: a '}' is missing
                start = True
            elif first and kind == "GROUP":  # a member task, where braces are miscounted
                start = False
            else:
                start = depth == 0 and prev in _AFTER_ITEM
            if start:
                depth, column, kind = 0, tok.column or 0, tok.type
                self.at.append(k)
        if tok.type == "LBRACE":
            depth += 1
        elif tok.type == "RBRACE":
            depth = max(depth - 1, 0)
        self.marks.append(start)
        self._state = (depth, column, kind, tok.type)


def skipped(starts: ItemStarts, offset: int, size: int) -> tuple[int, int]:
    """The part of the text to blank after an error at ``offset``: from the start of the item
    that holds it (or from ``offset``, before the first item) to the next item's start."""
    lexed = starts.lexed
    e = lexed.index(offset)  # the error's token, or the number of tokens where none is left
    if 0 < e and lexed.has(e) and starts.start(e - 1) and lexed.toks[e - 1].type == "ASYNC":
        e -= 1  # stopped at the 'fn' of 'async fn'
    s = starts.last_before(e)
    if s is not None and lexed.has(e) and starts.start(e):  # the item before this one is unfinished
        return _at(lexed, s), _at(lexed, e)
    start = min(offset, _at(lexed, s)) if s is not None else offset
    n = starts.first_after(e)
    end = _at(lexed, n) if n is not None else size
    return start, max(end, min(offset + 1, size))  # the error's own character at least: progress


def _at(lexed: Lexed, k: int) -> int:
    return lexed.toks[k].start_pos or 0
