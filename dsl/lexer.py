"""The parser's lexer: Lark's basic lexer, rewritten as one tight loop.

Lark's own basic lexer spends about 4 us a token (a method call per match,
one more per ignored stretch of whitespace, a line counter object and a
keyword look-up callback); this one reads the same terminals and gives the
same tokens at about a third of that. It follows Lark's rules to the letter,
so that every token, position and lexing error is the same as before:

- the terminals are tried in Lark's order (priority, then longest possible
  match, then longest pattern, then name) and the first that matches wins;
- a string terminal that a regular-expression terminal matches in full (a
  keyword and ``NAME``) is not tried on its own: a match of the regular
  expression whose text is that string takes the string terminal's type;
- lines and columns count from 1, and only ``\\n`` ends a line;
- a character that starts no token raises :class:`UnexpectedCharacters`,
  when the parser asks for that token and not before, so that a syntax error
  earlier in the file is still the one reported.

``tests/unit/test_lexer.py`` compares it with Lark's lexer token by token.
The diagnostics' own scans read its tokens too, kept across recovery's
parses (dsl/lexed.py): :func:`lex` can start anywhere its caller knows the
line of.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from typing import Any

from lark import Token
from lark.exceptions import UnexpectedCharacters
from lark.lexer import Lexer, TerminalDef

_new_str = str.__new__


def lark_order(terminals: Collection[TerminalDef]) -> list[TerminalDef]:
    """The order in which Lark's basic lexer tries the terminals."""
    return sorted(terminals, key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name))


def keywords(terminals: Collection[TerminalDef]) -> tuple[dict[str, dict[str, str]], set[str]]:
    """For each regular-expression terminal, the string terminals of its priority that it
    matches in full, by text; and those of them that need not be tried on their own."""
    table: dict[str, dict[str, str]] = {}
    embedded: set[str] = set()
    strings = [t for t in terminals if t.pattern.type == "str"]
    for regex in (t for t in terminals if t.pattern.type == "re"):
        compiled = re.compile(regex.pattern.to_regexp())
        for s in (s for s in strings if s.priority == regex.priority):
            m = compiled.match(s.pattern.value)
            if m is not None and m.group(0) == s.pattern.value:
                table.setdefault(regex.name, {})[s.pattern.value] = s.name
                if set(s.pattern.flags) <= set(regex.pattern.flags):
                    embedded.add(s.name)
    return table, embedded


class Spec:
    """What the loop needs: the terminals as one pattern, the keywords, what to skip.

    ``step`` is Lark's own pattern, a named group per terminal, ignored ones
    included. ``token`` first skips any run of ignored terminals, atomically
    (no backtracking into a comment), then matches one token: one regular
    expression call per token instead of one per token and per gap. It gives
    the same tokens as ``step`` when no token can start where an ignored
    terminal matches (here: whitespace, ``//`` and ``/*`` start no token).
    """

    def __init__(self, terminals: Collection[TerminalDef], ignore: Collection[str]) -> None:
        self.keywords, embedded = keywords(terminals)
        tried = [t for t in lark_order(terminals) if t.name not in embedded]
        self.ignore = frozenset(ignore)
        self.allowed = frozenset(t.name for t in tried) - self.ignore
        self.step = re.compile("|".join(f"(?P<{t.name}>{t.pattern.to_regexp()})" for t in tried))
        skip = "|".join(t.pattern.to_regexp() for t in tried if t.name in self.ignore)
        tokens = "|".join(f"(?P<{t.name}>{t.pattern.to_regexp()})" for t in tried if t.name not in self.ignore)
        self.token = re.compile(f"(?>(?:{skip})*)(?:{tokens})")


def lex(spec: Spec, text: str, pos: int = 0, line: int = 1, line_start: int = 0) -> Iterator[Token]:
    """The tokens of ``text``, with Lark's types and positions; see the module's docstring.
    From ``pos`` on, where given: not inside a token or a comment, on ``line``, which
    starts at ``line_start``."""
    match, kw = spec.token.match, spec.keywords
    size = len(text)
    while pos < size:
        m = match(text, pos)
        if m is None:  # only ignored text is left, or a character that starts no token
            _rest(spec, text, pos, line, line_start)
            return
        kind, end = m.lastgroup, m.end()
        assert kind is not None
        start = m.start(kind)
        if start > pos and (newlines := text.count("\n", pos, start)):
            line += newlines
            line_start = text.rindex("\n", pos, start) + 1
        value = text[start:end]
        tok = _new_str(Token, value)
        tok.type = kw[kind].get(value, kind) if kind in kw else kind
        tok.value, tok.start_pos, tok.end_pos = value, start, end
        tok.line, tok.column = line, start - line_start + 1
        if newlines := value.count("\n"):
            line += newlines
            line_start = start + value.rindex("\n") + 1
        tok.end_line, tok.end_column = line, end - line_start + 1
        pos = end
        yield tok


def _rest(spec: Spec, text: str, pos: int, line: int, line_start: int) -> None:
    """Step through what ``spec.token`` could not match: ignored terminals up to the end of
    the text, or up to the character that starts no token, which is raised as Lark raises it."""
    while pos < len(text):
        m = spec.step.match(text, pos)
        if m is None:
            column = pos - line_start + 1
            raise UnexpectedCharacters(text, pos, line, column, allowed=spec.allowed)  # type: ignore[no-untyped-call]
        assert m.lastgroup in spec.ignore, "a token starts where an ignored terminal matches"
        value = m.group()
        if newlines := value.count("\n"):
            line += newlines
            line_start = pos + value.rindex("\n") + 1
        pos = m.end()


class FastLexer(Lexer):
    """Lark's custom-lexer interface (``Lark(..., lexer=FastLexer)``) around :func:`lex`."""

    def __init__(self, conf: Any) -> None:  # lark.common.LexerConf
        self.spec = Spec(conf.terminals, conf.ignore)

    def lex(self, text: str) -> Iterator[Token]:  # type: ignore[override]  # Lark's interface 0
        return lex(self.spec, text)
