"""Lark's LALR(1) tables, run in one loop of our own.

Lark's parser loop makes a method call per token and, per reduction, looks the
rule up in a dict keyed by rule objects (a Python ``__eq__`` on each look-up)
and the next state up by a name that is a Lark ``Token`` (another Python
``__eq__``). :class:`Tables` copies Lark's tables once into plain dicts: per
state, an action for each terminal (a state to shift to; a reduction,
``(children, rule name, callback)`` with the callback Lark built for the rule,
which shapes the children and calls ours; or, for a one-child ``?rule``, just
the rule's name, as the child passes up unchanged) and the state to go to
after each rule. :func:`run` is the textbook LALR loop over them; it builds
exactly what Lark's own parse builds, 0.1-0.2 s sooner on a 1 MB file.
The tables are read from Lark's internals (``parse_table``, the callbacks,
``ExpandSingleChild``); :func:`tables_of` returns None where they are not
found, and tests/unit/test_expressions.py fails then, rather than parsing
going quietly back to Lark's slower loop.

On a token the tables reject, :func:`run` returns :data:`REJECTED`; a
:class:`Run` keeps its stacks as they are then, which are the stacks Lark's
own parse has when it raises, and :func:`unexpected` makes the exception
Lark raises there (with its interactive parser, for the list of expected
tokens), without parsing again. A lexing error is raised by the lexer, as in
Lark's parse. A :class:`Run` can be fed its tokens in parts and saved
between two of them (:class:`Saved`), so that a text that starts with the
same tokens is parsed from there (dsl/reparse.py). The values on the stack
are immutable nodes and tokens, but for Lark's trees of repeated rules
(``item*``, ``stmt*``), whose lists of children Lark only ever appends to
(its ``ChildFilterLALR`` reuses the list of the left-recursive child): a
saved run keeps how many children each had, and a run started from it
copies that many.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedToken
from lark.lexer import LexerThread
from lark.parse_tree_builder import ExpandSingleChild
from lark.parsers.lalr_interactive_parser import InteractiveParser
from lark.parsers.lalr_parser_state import ParseConf, ParserState

# (number of children, rule name for the next state's look-up, callback)
Reduce = tuple[int, str, Callable[[list[Any]], Any]]
# An action: a state to shift to or go to (int), a reduction, or the name of a rule
# that only passes its one child up (a `?rule` of one symbol): no call to make.
Action = int | Reduce | str

REJECTED = object()


class Tables:
    """The parse table of one Lark LALR parser, for :func:`run`."""

    def __init__(self, lark: Lark, start: str = "start") -> None:
        parser = lark.parser.parser.parser  # frontend -> LALR_Parser -> its _Parser
        table, callbacks = parser.parse_table, parser.callbacks
        if any(isinstance(key, str) for key in callbacks):  # pragma: no cover - no terminal callbacks here
            raise TypeError("terminal callbacks are not supported")
        self.start: int = table.start_states[start]
        self.end: int = table.end_states[start]
        terminals = {t.name for t in lark.terminals} | {"$END"}
        # on a terminal: what to do; after a reduction to a rule: the state to go to
        self.actions: dict[int, dict[str, Action]] = {}
        self.gotos: dict[int, dict[str, int]] = {}
        for state, row in table.states.items():
            self.actions[state] = {str(n): _action(a, arg, callbacks) for n, (a, arg) in row.items() if n in terminals}
            self.gotos[state] = {str(n): int(arg) for n, (a, arg) in row.items() if n not in terminals}


def _action(act: Any, arg: Any, callbacks: dict[Any, Any]) -> Action:
    if act.name == "Shift":
        return int(arg)
    size, name, callback = len(arg.expansion), str(arg.origin.name), callbacks[arg]
    if size == 1 and type(callback) is ExpandSingleChild:
        return name
    return (size, name, callback)


def tables_of(lark: Lark) -> Tables | None:
    """The tables, or None when this Lark keeps them differently (then parse with Lark)."""
    try:
        return Tables(lark)
    except (AttributeError, KeyError, TypeError):  # pragma: no cover - another Lark version
        return None


def run(tables: Tables, tokens: Iterable[Token]) -> Any:
    """What the start rule's callback returns, or :data:`REJECTED`."""
    parse = Run(tables)
    return parse.finish() if parse.feed(tokens) else REJECTED


@dataclass(frozen=True)
class Saved:
    """A :class:`Run` between two tokens: its stacks and the last token it took."""

    states: tuple[int, ...]
    values: tuple[Any, ...]
    grown: tuple[tuple[int, int], ...]  # each of Lark's trees in values: its place, how many children it had
    last: Token | None


class Run:
    """One parse by the tables, fed its tokens in one or more parts. After a token is
    rejected, ``rejected`` is that token and the stacks are as they were then."""

    def __init__(self, tables: Tables, saved: Saved | None = None) -> None:
        self.tables = tables
        self.states: list[int] = list(saved.states) if saved is not None else [tables.start]
        self.values: list[Any] = _restored(saved) if saved is not None else []
        self.last: Token | None = saved.last if saved is not None else None  # for '$END', as Lark places it
        self.rejected: Token | None = None

    def feed(self, tokens: Iterable[Token]) -> bool:
        """Take ``tokens``; False where one is rejected."""
        actions, gotos = self.tables.actions, self.tables.gotos
        states, values = self.states, self.values
        tok = None
        for tok in tokens:
            kind = tok.type
            while True:
                act = actions[states[-1]].get(kind)
                if isinstance(act, int):  # shift
                    states.append(act)
                    values.append(tok)
                    break
                if isinstance(act, str):  # a reduction that keeps its one child
                    del states[-1]
                    states.append(gotos[states[-1]][act])
                elif act is None:
                    self.rejected = tok
                    return False
                else:
                    _reduce(act, gotos, states, values)
        if tok is not None:
            self.last = tok
        return True

    def finish(self) -> Any:
        """At the end of the input: what the start rule's callback returns, or :data:`REJECTED`."""
        result = _finish(self.tables, self.states, self.values)
        if result is REJECTED:
            last = self.last
            self.rejected = Token.new_borrow_pos("$END", "", last) if last is not None else Token("$END", "", 0, 1, 1)
        return result

    def saved(self) -> Saved:
        values = tuple(self.values)
        grown = tuple((k, len(v.children)) for k, v in enumerate(values) if isinstance(v, Tree))
        return Saved(tuple(self.states), values, grown, self.last)


def _restored(saved: Saved) -> list[Any]:
    """The values of ``saved``, each of Lark's trees copied with the children it had then."""
    values = list(saved.values)
    for k, size in saved.grown:
        tree = values[k]
        values[k] = Tree(tree.data, tree.children[:size])
    return values


def unexpected(lark: Lark, parse: Run) -> UnexpectedToken:
    """The exception Lark's own parse raises at the token ``parse`` rejected."""
    assert parse.rejected is not None
    parser = lark.parser.parser.parser
    conf: ParseConf[int] = ParseConf(parser.parse_table, parser.callbacks, "start")
    state = ParserState(conf, LexerThread(None, None), list(parse.states), list(parse.values))  # type: ignore[arg-type]
    expected = {s for s in parser.parse_table.states[parse.states[-1]] if s.isupper()}
    parsing = InteractiveParser(parser, state, state.lexer)
    return UnexpectedToken(parse.rejected, expected, state=state, interactive_parser=parsing)  # type: ignore[no-untyped-call]


def _reduce(act: Reduce, gotos: dict[int, dict[str, int]], states: list[int], values: list[Any]) -> None:
    size, name, callback = act
    if size:
        children = values[-size:]
        del values[-size:]
        del states[-size:]
    else:
        children = []
    values.append(callback(children))
    states.append(gotos[states[-1]][name])


def _finish(tables: Tables, states: list[int], values: list[Any]) -> Any:
    """At the end of the input: reduce until the start rule is complete."""
    actions, gotos = tables.actions, tables.gotos
    while True:
        act = actions[states[-1]].get("$END")
        if act is None or isinstance(act, int):
            return REJECTED
        if isinstance(act, str):
            del states[-1]
            states.append(gotos[states[-1]][act])
        else:
            _reduce(act, gotos, states, values)
        if states[-1] == tables.end:
            return values[-1]
