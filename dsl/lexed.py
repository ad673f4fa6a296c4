"""The tokens of a text that recovery parses again and again, lexed once.

After a syntax error dsl/recovery.py blanks an item (every character but
newlines becomes a space) and parses the text again; the diagnostics of
each parse read the tokens before and after their error, and recovery reads
them to find where items start. :class:`Lexed` lexes the current text with
dsl/lexer.py as far as someone asks, keeps the tokens, and when a part is
blanked keeps those that end before it: a terminal looks at most one
character past its end (``=(?![=>])``), the text before the blank is
unchanged and so are the line and column of every later character, so a
token that ends before the first blanked character is lexed the same in
the new text. Lexing goes on after the last one kept.

It lexes as dsl/recovery.py scans: past a character that starts no token (a
'"' with the rest of its line), to the end of the text or to an unterminated
``/*``. The parser's view, :meth:`Lexed.tokens`, stops at the first such
character and raises the error :func:`~gasync.dsl.lexer.lex` raised there;
the other views stop there quietly, as Lark's lexer stops for the
diagnostics that scan the text.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator

from lark import Token
from lark.exceptions import UnexpectedCharacters

from gasync.dsl.lexer import Spec, lex

_NOT_NEWLINE = re.compile(r"[^\n]")  # a blanked part keeps its newlines: the lines after it stay put
_AHEAD = 256  # tokens lexed at a time: the parser reads on to its error, the diagnostics a little past it


class Lexed:
    """The tokens of ``text`` as far as lexed. ``first[k]``: nothing but blanks and comments
    before token ``k`` on its line, and no character skipped; ``error``: the first character
    that starts no token, once lexed past, before token ``error_at``; ``kept``: how many
    tokens the last :meth:`blank` kept (None before one)."""

    def __init__(self, spec: Spec, text: str) -> None:
        self.spec = spec
        self.text = text
        self.toks: list[Token] = []
        self.first: list[bool] = []
        self.error: UnexpectedCharacters | None = None
        self.error_at = 0
        self.kept: int | None = None
        self._more: Iterator[tuple[Token, bool]] | None = self._lexing(0, 1, 0, True)

    def blank(self, start: int, end: int) -> bool:
        """Blank ``text[start:end]``; False where it is blank already (no progress)."""
        part = self.text[start:end]
        blanked = _NOT_NEWLINE.sub(" ", part)
        if blanked == part:
            return False
        self.text = self.text[:start] + blanked + self.text[end:]
        k = bisect_left(self.toks, start, key=_end)
        del self.toks[k:], self.first[k:]
        after = (self.toks[-1].end_pos or 0) if k else 0
        if self.error is not None and (self.error.pos_in_stream or 0) >= after:
            self.error = None  # lexed again
        self.kept = k
        if k:
            last = self.toks[-1]
            line, column = last.end_line or 1, last.end_column or 1
            self._more = self._lexing(after, line, after - column + 1, False)
        else:
            self._more = self._lexing(0, 1, 0, True)
        return True

    def has(self, k: int) -> bool:
        """Whether there is a token ``k`` (lexing up to it)."""
        if len(self.toks) <= k:
            self._lex(k + _AHEAD)
        return k < len(self.toks)

    def index(self, offset: int) -> int:
        """How many tokens start before ``offset`` (lexing up to the first that does not)."""
        while self._more is not None and (not self.toks or (self.toks[-1].start_pos or 0) < offset):
            self._lex(len(self.toks) + _AHEAD)
        return bisect_left(self.toks, offset, key=_start)

    def tokens(self, k: int = 0, stop: int | None = None) -> Iterator[Token]:
        """The parser's tokens from token ``k`` (up to ``stop``): at the first character that
        starts no token, the error :func:`~gasync.dsl.lexer.lex` raised."""
        while stop is None or k < stop:
            self._lex(k + _AHEAD)
            end = len(self.toks) if self.error is None else min(len(self.toks), self.error_at)
            if k >= end:
                if self.error is not None:
                    raise self.error
                return
            yield from self.toks[k : end if stop is None else min(end, stop)]
            k = end if stop is None else min(end, stop)

    def before(self, offset: int) -> list[Token]:
        """The tokens that start before ``offset``, up to any character that starts none."""
        k = self.index(offset)
        return self.toks[: min(k, self.error_at) if self.error is not None else k]

    def after(self, offset: int) -> Iterator[Token]:
        """The tokens that start after ``offset``, up to any character that starts none."""
        k = self.index(offset + 1)
        while self.has(k) and (self.error is None or k < self.error_at):
            yield self.toks[k]
            k += 1

    def __iter__(self) -> Iterator[Token]:
        return self.after(-1)

    def _lex(self, count: int) -> None:
        """Lex on until there are ``count`` tokens, or none is left."""
        if self._more is None or len(self.toks) >= count:
            return
        toks, firsts = self.toks, self.first
        for tok, first in self._more:
            toks.append(tok)
            firsts.append(first)
            if len(toks) >= count:
                return
        self._more = None

    def _lexing(self, pos: int, line: int, line_start: int, first: bool) -> Iterator[tuple[Token, bool]]:
        """Each token from ``pos`` with its ``first``, past the characters that start none."""
        text = self.text
        while True:
            try:
                for tok in lex(self.spec, text, pos, line, line_start):
                    start = tok.start_pos or 0
                    yield tok, first or text.find("\n", pos, start) >= 0
                    pos, first = tok.end_pos or start, False
                return
            except UnexpectedCharacters as exc:
                bad = exc.pos_in_stream or 0
                if self.error is None:
                    self.error, self.error_at = exc, len(self.toks)
                if text.startswith("/*", bad):  # an unterminated comment: the rest of the text
                    return
                end = text.find("\n", bad) if text[bad] == '"' else bad + 1
                line, line_start = exc.line, bad - exc.column + 1
                pos, first = (len(text) if end < 0 else max(end, bad + 1)), False


def _start(tok: Token) -> int:
    return tok.start_pos or 0


def _end(tok: Token) -> int:
    return tok.end_pos or 0
