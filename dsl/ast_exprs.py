"""The AST's spans, types and expressions: the leaves every other node holds.

dsl/ast.py has the rest (statements, items, the program) and exports these
too, so that the whole AST is ``gasync.dsl.ast``. An expression holds a
block in one place only, ``async { ... }``, whose :class:`~gasync.dsl.ast.Block`
is named here for the type checker alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gasync.dsl.ast import Block


@dataclass(frozen=True)
class Span:
    """1-based line and column of the first character; end is exclusive."""

    line: int = 0
    column: int = 0
    end_line: int = 0
    end_column: int = 0


NOSPAN = Span()


def span_field() -> Span:
    """The ``span`` field of a node: left out of equality and ``repr``."""
    return field(default=NOSPAN, compare=False, repr=False)


# ---- types -----------------------------------------------------------------


@dataclass(frozen=True)
class ScalarType:
    name: str
    span: Span = span_field()


@dataclass(frozen=True)
class ArrayType:
    elem: ScalarType
    dims: tuple[Expr, ...]
    span: Span = span_field()


# ---- expressions -----------------------------------------------------------


@dataclass(frozen=True)
class IntLit:
    value: int
    span: Span = span_field()


@dataclass(frozen=True)
class FloatLit:
    value: float
    span: Span = span_field()


@dataclass(frozen=True)
class BoolLit:
    value: bool
    span: Span = span_field()


@dataclass(frozen=True)
class Name:
    id: str
    span: Span = span_field()


@dataclass(frozen=True)
class Unary:
    op: str  # '-', '+', '!', '~'
    operand: Expr
    span: Span = span_field()


@dataclass(frozen=True)
class Binary:
    op: str
    left: Expr
    right: Expr
    span: Span = span_field()


@dataclass(frozen=True)
class Cast:
    expr: Expr
    type: ScalarType
    span: Span = span_field()


@dataclass(frozen=True)
class Call:
    """``f(a, b)``: a fn, async fn, extern fn or builtin (join, sleep, min, ...)."""

    func: str
    args: tuple[Expr, ...]
    span: Span = span_field()


@dataclass(frozen=True)
class MethodCall:
    """``hits.fetch_add(1)``, ``tiles.send(v)``, ``stop.wait()``."""

    receiver: Name
    method: str
    args: tuple[Expr, ...]
    span: Span = span_field()


@dataclass(frozen=True)
class Index:
    base: Name
    indices: tuple[Expr, ...]
    span: Span = span_field()


@dataclass(frozen=True)
class Await:
    future: Expr
    span: Span = span_field()


@dataclass(frozen=True)
class AsyncBlock:
    body: Block
    span: Span = span_field()


Expr = IntLit | FloatLit | BoolLit | Name | Unary | Binary | Cast | Call | MethodCall | Index | Await | AsyncBlock
