"""Parsing a text again after recovery blanked part of it, from where the parser was.

dsl/recovery.py parses a text, blanks the item that holds its syntax error
and parses the text again. The text before the part blanked is unchanged,
and so are its tokens (dsl/lexed.py keeps them), so the state of a parse
before any of them is the state the parse before had there. A
:class:`Reparser` saves the state every ``_EVERY`` tokens, and where the
tokens kept end: the parser's stacks (dsl/lalr.py's
:class:`~gasync.dsl.lalr.Saved`, which copies the stacks but not the items
parsed) and the mistakes the rules held so far. Each later parse starts from
the last state saved before the part blanked. The first error is not known
before it is found, so the first parse saves too; that costs a correct
program nothing measurable, and it reads the lexer directly, keeping no list
of its tokens, while the later parses read dsl/lexed.py's.

Nodes' nesting heights (dsl/reductions.py, by ``id``) stay in one table for
all the parses, which keeps every node it measured alive: the nodes on a
saved stack find their heights there, and no node takes the id of one that a
failed parse built and dropped. A rejected token becomes Lark's own
exception, made from our parser's stacks (:func:`~gasync.dsl.lalr.unexpected`),
not by parsing the text again with Lark. Where dsl/lalr.py could not read
Lark's tables, every parse is Lark's, of the whole text.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain, islice
from typing import Any, cast

from lark import Lark, Token
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput

from gasync.dsl.diagnostics import GasyncError, ParseError
from gasync.dsl.gc_pause import paused_gc
from gasync.dsl.lalr import REJECTED, Run, Saved, Tables, unexpected
from gasync.dsl.lexed import Lexed
from gasync.dsl.lexer import lex
from gasync.dsl.recovery import Failed, Parsed
from gasync.dsl.reductions import Heights, held
from gasync.dsl.syntax_errors import translate

_EVERY = 1000  # tokens between two saved states


@dataclass(frozen=True)
class _Checkpoint:
    """The parse before token ``index``, and what the rules had held by then."""

    index: int
    run: Saved
    errors: tuple[GasyncError, ...]
    deep: bool


class Reparser:
    """dsl/recovery.py's ``parse_once`` for the texts of one file: the items and the mistakes
    held while building them, or the syntax error and where it is."""

    def __init__(self, lark: Lark, tables: Tables | None) -> None:
        self.lark, self.tables = lark, tables
        self.saved: list[_Checkpoint] = []
        self.heights = Heights()

    def __call__(self, lexed: Lexed) -> Parsed | Failed:
        try:
            with paused_gc():
                items = self._items(lexed)
        except UnexpectedInput as exc:
            return Failed(translate(exc, lexed), _offset(exc, lexed.text))
        except LarkError as exc:  # pragma: no cover - a grammar bug, not a user's
            return Failed(ParseError(f"internal parser error: {exc}"), None)
        finally:
            found, held.errors, held.heights = held.errors or [], None, None
        return items, found

    def _items(self, lexed: Lexed) -> Any:
        """The start rule's list of items, or Lark's exception."""
        if self.tables is None:  # another Lark: its parse of the whole text
            held.errors, held.heights, held.deep = [], self.heights, False
            return self.lark.parse(lexed.text)
        fed, run = (
            self._first(self.tables, lexed) if lexed.kept is None else self._again(self.tables, lexed, lexed.kept)
        )
        if fed and (items := run.finish()) is not REJECTED:
            return items
        raise unexpected(self.lark, run)

    def _first(self, tables: Tables, lexed: Lexed) -> tuple[bool, Run]:
        """The first parse, straight from the lexer (a correct program keeps no token), saving
        the state every ``_EVERY`` tokens."""
        held.errors, held.heights, held.deep = [], self.heights, False
        run = Run(tables)
        tokens = lex(lexed.spec, lexed.text)
        k, head = 0, cast(tuple[Token, ...], ())
        while run.feed(chain(head, islice(tokens, _EVERY - len(head)))):
            k += _EVERY
            after = next(tokens, None)
            if after is None:
                return True, run
            self._save(k, run)
            head = (after,)
        return False, run

    def _again(self, tables: Tables, lexed: Lexed, kept: int) -> tuple[bool, Run]:
        """A parse from the last state saved within the ``kept`` tokens (from the start where
        none is), saving the state there and then every ``_EVERY`` tokens."""
        while self.saved and self.saved[-1].index > kept:
            self.saved.pop()
        point = self.saved[-1] if self.saved else None
        self.saved = [point] if point is not None else []
        held.errors = list(point.errors) if point is not None else []
        held.heights, held.deep = self.heights, point.deep if point is not None else False
        run = Run(tables, point.run if point is not None else None)
        k = point.index if point is not None else 0
        while True:
            stop = kept if k < kept else k + _EVERY
            if not run.feed(lexed.tokens(k, stop)):
                return False, run
            if not lexed.has(stop):  # the last token fed: the end, or a character that starts no token
                return run.feed(lexed.tokens(stop)), run
            self._save(stop, run)
            k = stop

    def _save(self, index: int, run: Run) -> None:
        self.saved.append(_Checkpoint(index, run.saved(), tuple(held.errors or ()), held.deep))


def _offset(exc: UnexpectedInput, text: str) -> int:
    """Where in ``text`` the parser stopped."""
    if isinstance(exc, UnexpectedCharacters):
        return exc.pos_in_stream or 0
    token = getattr(exc, "token", None)
    if isinstance(exc, UnexpectedEOF) or token is None or token.type == "$END":
        return len(text)
    return token.start_pos or 0
