"""Recovery from syntax errors at item level, so that one check reports several.

The parser stops at the first token it cannot take. :func:`recover` then
blanks the item that holds it (every character but newlines becomes a space,
so that every later line and column stays where it was) and parses the whole
text again, until the text parses or ``MAX_ERRORS`` errors are found: one
error per item at most, and no cascade from a half-read item, as the parser
never sees any of it.

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
takes the rest of the file with it. Each pass lexes only up to the item after
its error.

The parser's held mistakes (literals, assignment targets...: dsl/parser.py)
come from the last parse, of the items that parsed, the first of each item;
all the errors are returned in source order. The rest of the compiler plans
only a whole AST, so a file with any of them is not planned.
"""

from __future__ import annotations

import copy
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain

from gasync.dsl import ast
from gasync.dsl.block_errors import ITEM_KEYWORDS
from gasync.dsl.diagnostics import GasyncError, Note
from gasync.dsl.lexer import Spec

MAX_ERRORS = 10  # per file, as planner/recovery.py's MAX_BODY_ERRORS per body

_NOT_AN_ITEM_AFTER = {"ASYNC", "EXTERN", "LOCAL"}  # `async fn`, `extern fn`, `local buffer` start before
_AFTER_ITEM = {"SEMICOLON", "RBRACE"}
_NOT_NEWLINE = re.compile(r"[^\n]")  # a blanked item keeps its newlines: the lines after it stay put
_ANY_COLUMN = 1 << 62  # before the first item, an item keyword that starts a line starts one


@dataclass(frozen=True)
class Failed:
    """A parse that stopped: its error, and the offset in the text where the parser stopped
    (None where it cannot go on: an internal error)."""

    error: GasyncError
    offset: int | None


Parsed = tuple[list[ast.Item], list[GasyncError]]  # the items, and the mistakes held while building them


def recover(text: str, spec: Spec, parse_once: Callable[[str], Parsed | Failed]) -> Parsed:
    """The items of ``text`` and its errors (none when it parses), from ``parse_once`` run
    on ``text`` and then on ``text`` with each failed item blanked."""
    errors: list[GasyncError] = []
    items: list[ast.Item] = []
    while True:
        result = parse_once(text)
        if not isinstance(result, Failed):
            items, held = result
            errors.extend(_first_per_item(held, items))
            break
        errors.append(result.error)
        if result.offset is None or len(errors) > MAX_ERRORS:  # one past the cap: there are more
            break
        start, end = skipped(scan(spec, text), result.offset, len(text))
        blanked = text[:start] + _NOT_NEWLINE.sub(" ", text[start:end]) + text[end:]
        if blanked == text:  # nothing left to skip: no progress
            break
        text = blanked
    errors.sort(key=lambda e: (e.span.line, e.span.column))
    return items, _capped(errors, counted=not isinstance(result, Failed))


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


@dataclass(frozen=True)
class Tok:
    """A token as :func:`skipped` needs it."""

    type: str
    start: int  # offsets in the text
    end: int
    column: int  # from 1
    first: bool  # nothing but blanks before it on its line


def scan(spec: Spec, text: str) -> Iterator[Tok]:
    """The tokens of ``text`` as dsl/lexer.py reads them, past any character that starts
    none: it is skipped (an unclosed '"' with the rest of its line), and an unterminated
    '/*' ends the text. Lazily: recovery reads only up to the item after an error."""
    pos, size, line_start, first = 0, len(text), 0, True
    while pos < size:
        m = spec.step.match(text, pos)
        if m is None or m.end() == pos:
            if text.startswith("/*", pos):
                return
            end = text.find("\n", pos) if text[pos] == '"' else pos + 1
            pos, first = (size if end < 0 else max(end, pos + 1)), False
            continue
        kind = m.lastgroup or ""
        if kind not in spec.ignore:
            yield Tok(spec.keywords.get(kind, {}).get(m.group(), kind), pos, m.end(), pos - line_start + 1, first)
            first = False
        if (newline := text.rfind("\n", pos, m.end())) >= 0:
            line_start, first = newline + 1, True
        pos = m.end()


def skipped(toks: Iterable[Tok], offset: int, size: int) -> tuple[int, int]:
    """The part of the text to blank after an error at ``offset``: from the start of the item
    that holds it (or from ``offset``, before the first item) to the next item's start."""
    read: list[Tok] = []
    starts: list[bool] = []
    for tok, starts_item in _marked(toks):
        read.append(tok)
        starts.append(starts_item)
        if starts_item and len(read) >= 2 and read[-2].start >= offset:  # the next item after the error's token
            break
    e = next((k for k, t in enumerate(read) if t.start >= offset), len(read))
    if 0 < e < len(read) and starts[e - 1] and read[e - 1].type == "ASYNC":  # stopped at the 'fn' of 'async fn'
        e -= 1
    s = next((k for k in range(e - 1, -1, -1) if starts[k]), None)
    if s is not None and e < len(read) and starts[e]:  # the item before this one is unfinished
        return read[s].start, read[e].start
    start = min(offset, read[s].start) if s is not None else offset
    end = next((read[k].start for k in range(e + 1, len(read)) if starts[k]), size)
    return start, max(end, min(offset + 1, size))  # the error's own character at least: progress


def _marked(toks: Iterable[Tok]) -> Iterator[tuple[Tok, bool]]:
    """Each token, and whether it starts an item: an item keyword at the start of a line, not
    right of the item before it (inside a body too, where a '}' is missing), or one at brace
    depth 0 after ';' or '}' (but not a task indented in a group, which is one of its members)."""
    depth, column, kind, prev = 0, _ANY_COLUMN, "", "SEMICOLON"
    tok: Tok | None = None
    for nxt in chain(toks, (None,)):  # one token of look-ahead, for 'async fn'
        if tok is not None:
            start = False
            if (tok.type in ITEM_KEYWORDS and prev not in _NOT_AN_ITEM_AFTER) or (
                tok.type == "ASYNC" and nxt is not None and nxt.type == "FN"
            ):
                if tok.first and tok.column <= column:  # at any depth: a '}' is missing
                    start = True
                elif tok.first and kind == "GROUP":  # a member task, where braces are miscounted
                    start = False
                else:
                    start = depth == 0 and prev in _AFTER_ITEM
                if start:
                    depth, column, kind = 0, tok.column, tok.type
            if tok.type == "LBRACE":
                depth += 1
            elif tok.type == "RBRACE":
                depth = max(depth - 1, 0)
            yield tok, start
            prev = tok.type
        tok = nxt
