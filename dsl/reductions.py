"""Building AST nodes while Lark reduces: spans from all the children, punctuation dropped.

With ``keep_all_tokens`` a rule's callback receives every child, keywords and
punctuation included, which is what a node's span must cover (a ``let`` starts
at ``let`` and ends after ``;``). :class:`Callbacks` wraps each method of a
rules object (``(span, children) -> node``): it takes the span from the first
and last child that has a place, drops the tokens the grammar writes as quoted
strings, and unwraps parenthesised expressions, which travel up as
:class:`Paren` so that an enclosing node's span includes the parentheses
while the expression keeps its own. Mistakes the rules find are held
(:func:`hold`) until the parse ends: a syntax error in the same item is
reported instead (dsl/recovery.py keeps the first held mistake of each item).
"""

from __future__ import annotations

import inspect
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from lark import Lark, Token

from gasync.dsl import ast
from gasync.dsl.depth import MAX_DEPTH, too_deep
from gasync.dsl.diagnostics import GasyncError


class Heights(dict[int, int]):
    """How many levels each node built so far holds, by ``id`` (see :func:`measure`). It keeps
    every node it measured alive, so that no later node takes the id of one that was dropped
    (a parenthesised expression's :class:`Paren`, a task's range, a node of a parse that
    failed) and with it that node's height: the ids of nodes never measured (literals,
    names) are looked up too, and must find nothing."""

    __slots__ = ("nodes",)

    def __init__(self) -> None:
        super().__init__()
        self.nodes: list[Any] = []


class Held(threading.local):
    """Mistakes found by the callbacks during the current parse, in the order found, and
    how deep each node built so far nests."""

    errors: list[GasyncError] | None = None
    heights: Heights | None = None
    deep: bool = False  # the nesting error is held already


held = Held()


def hold(err: GasyncError) -> None:
    if held.errors is not None:
        held.errors.append(err)


def token_span(tok: Token) -> ast.Span:
    return ast.Span(tok.line or 0, tok.column or 0, tok.end_line or 0, tok.end_column or 0)


@dataclass(frozen=True)
class Paren:
    """A parenthesised expression on its way up: the expression, and the span with the parentheses."""

    expr: Any
    span: ast.Span


def children_span(children: list[Any]) -> ast.Span:
    """From the start of the first child that has a place (a token, a node, a :class:`Paren`)
    to the end of the last one; placeholders, tuples of nodes and lists have none."""
    for c in children:
        if c.__class__ is Token:
            line, column = c.line or 0, c.column or 0
            break
        span = getattr(c, "span", None)
        if span.__class__ is ast.Span and span.line:
            line, column = span.line, span.column
            break
    else:
        return ast.NOSPAN
    for c in reversed(children):
        if c.__class__ is Token:
            return ast.Span(line, column, c.end_line or 0, c.end_column or 0)
        span = getattr(c, "span", None)
        if span.__class__ is ast.Span and span.line:
            return ast.Span(line, column, span.end_line, span.end_column)
    return ast.NOSPAN  # pragma: no cover - the loop above found one


def punctuation(grammar: Lark, text: str) -> frozenset[str]:
    """Terminals that the rules write as quoted strings (keywords and punctuation): the
    ones that ``text``, the grammar, does not define by name."""
    named = set(re.findall(r"^([A-Z_][A-Z0-9_]*)(?:\.\d+)?\s*:", text, re.MULTILINE))
    return frozenset(t.name for t in grammar.terminals if t.name not in named)


F = TypeVar("F", bound=Callable[..., Any])


def whole(method: F) -> F:
    """Mark a rules method that takes the children as Lark gives them (``children -> node``):
    punctuation kept, parentheses not unwrapped, no span computed."""
    method.whole = True  # type: ignore[attr-defined]
    return method


class Callbacks:
    """What Lark calls on each reduction: a span from all the children, then the rule's
    method of the rules object with punctuation dropped and parentheses unwrapped
    (or, for a method marked :func:`whole`, the method itself)."""

    def __init__(self, rules: object) -> None:
        self.drop: frozenset[str] = frozenset()  # set with punctuation() once the grammar is read
        for name, method in inspect.getmembers(rules, inspect.ismethod):
            if not name.startswith("_"):
                setattr(self, name, method if getattr(method, "whole", False) else self._adapt(method))

    def _adapt(self, method: Callable[[ast.Span, list[Any]], Any]) -> Callable[[list[Any]], Any]:
        level = int(method.__name__ in LEVELS)
        folded = method.__name__ in FOLDED  # dsl/expressions.py measures each node it builds

        def callback(children: list[Any]) -> Any:
            drop = self.drop
            kept = [
                c.expr if c.__class__ is Paren else c
                for c in children
                if c.__class__ is not Token or c.type not in drop
            ]
            node = method(children_span(children), kept)
            if not folded:
                measure(node, kept, children, level)
            return node

        return callback


LEVELS = frozenset({"block", "binary", "unary", "cast", "await_expr", "method_call", "call", "index"})
FOLDED = frozenset({"expr", "operand"})  # rules whose flat lists dsl/expressions.py folds into nodes


def measure(node: Any, kept: list[Any], children: list[Any], level: int) -> None:
    """Record how many levels ``node`` holds (dsl/depth.py says what a level is), from its
    children's, and hold one error at the first node past the limit. Nodes are built
    bottom-up, so the error is at the innermost construct that holds too many levels."""
    heights = held.heights
    if heights is None or node is None:
        return
    inner = 0
    for c in kept:
        if not isinstance(c, Token):
            inner = max(inner, heights.get(id(c), 0))
    height = inner + level
    heights[id(node)] = height  # a Paren's own entry: its expression keeps its own
    heights.nodes.append(node)
    if height > MAX_DEPTH and not held.deep:
        held.deep = True
        hold(too_deep(next((c for c in children if isinstance(c, Token)), None), node))
