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

It only ever parses a correct program: on a token the tables reject it returns
:data:`REJECTED`, and the caller parses again with Lark, whose exception (with
its interactive parser, for the list of expected tokens) makes the diagnostic
as before. A lexing error is raised by the lexer, as in Lark's parse.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from lark import Lark, Token
from lark.parse_tree_builder import ExpandSingleChild

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
    actions, gotos = tables.actions, tables.gotos
    states = [tables.start]
    values: list[Any] = []
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
                return REJECTED
            else:
                _reduce(act, gotos, states, values)
    return _finish(tables, states, values)


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
