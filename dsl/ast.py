"""The gasync AST: frozen dataclasses named after the grammar's rules.

Every node carries a :class:`Span` that points back at the source. Spans are
left out of equality and ``repr`` (``compare=False``), so tests can compare a
parsed tree with one written by hand, and two equal subtrees at different
places compare equal. Nothing from Lark appears here: identifiers are plain
``str`` and literals are already converted to Python values. Spans, types
and expressions are in dsl/ast_exprs.py, and exported from here: the whole
AST is this module's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gasync.dsl.ast_exprs import (
    NOSPAN,
    ArrayType,
    AsyncBlock,
    Await,
    Binary,
    BoolLit,
    Call,
    Cast,
    Expr,
    FloatLit,
    Index,
    IntLit,
    MethodCall,
    Name,
    ScalarType,
    Span,
    Unary,
    span_field,
)

__all__ = [  # every node, those of dsl/ast_exprs.py too
    "ArrayType",
    "Assign",
    "AsyncBlock",
    "Await",
    "Binary",
    "Block",
    "BoolLit",
    "Break",
    "Buffer",
    "BufferInit",
    "Call",
    "Cast",
    "Channel",
    "Const",
    "Continue",
    "Expr",
    "ExprStmt",
    "ExternFn",
    "FloatLit",
    "FnDef",
    "For",
    "ForAwait",
    "Group",
    "GroupMember",
    "If",
    "Index",
    "IntLit",
    "Item",
    "Let",
    "LetTuple",
    "LocalBuffer",
    "LocalChannel",
    "Loop",
    "MethodCall",
    "NOSPAN",
    "Name",
    "Param",
    "Program",
    "Reduce",
    "Return",
    "ScalarType",
    "Select",
    "SelectArm",
    "Shared",
    "Signal",
    "Span",
    "Stmt",
    "Task",
    "Unary",
    "While",
]


# ---- statements ------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    stmts: tuple[Stmt, ...]
    tail: Expr | None = None
    span: Span = span_field()


@dataclass(frozen=True)
class Let:
    name: str
    type: ScalarType | None
    value: Expr | Reduce
    span: Span = span_field()


@dataclass(frozen=True)
class LetTuple:
    """``let (a, _, c) = join(...).await;`` -- ``None`` stands for ``_``."""

    names: tuple[str | None, ...]
    value: Expr
    span: Span = span_field()


@dataclass(frozen=True)
class Assign:
    target: Name | Index
    op: str  # '=', '+=', '-=', ...
    value: Expr
    span: Span = span_field()


@dataclass(frozen=True)
class ExprStmt:
    expr: Expr
    span: Span = span_field()


@dataclass(frozen=True)
class If:
    cond: Expr
    then: Block
    orelse: Block | If | None = None
    span: Span = span_field()


@dataclass(frozen=True)
class While:
    cond: Expr
    body: Block
    span: Span = span_field()


@dataclass(frozen=True)
class Loop:
    body: Block
    span: Span = span_field()


@dataclass(frozen=True)
class For:
    """Sequential ``for v in start..stop``; ``kind`` is 'seq', 'parallel' or 'bulk'."""

    kind: str
    var: str
    start: Expr
    stop: Expr
    body: Block
    span: Span = span_field()


@dataclass(frozen=True)
class ForAwait:
    var: str
    channel: Name
    body: Block
    span: Span = span_field()


@dataclass(frozen=True)
class Break:
    span: Span = span_field()


@dataclass(frozen=True)
class Continue:
    span: Span = span_field()


@dataclass(frozen=True)
class Return:
    value: Expr | None = None
    span: Span = span_field()


@dataclass(frozen=True)
class SelectArm:
    binding: str | None  # None for '_'
    future: Expr
    body: Block
    span: Span = span_field()


@dataclass(frozen=True)
class Select:
    arms: tuple[SelectArm, ...]
    span: Span = span_field()


@dataclass(frozen=True)
class Reduce:
    """``parallel for i in a..b reduce max { ...; tail }``: the value of a ``let`` or an
    assignment; ``loop`` is the loop (kind 'parallel' or 'bulk'), ``op`` the operator."""

    loop: For
    op: str
    op_span: Span = span_field()
    span: Span = span_field()


Stmt = Let | LetTuple | Assign | ExprStmt | If | While | Loop | For | ForAwait | Break | Continue | Return | Select


# ---- items -----------------------------------------------------------------


@dataclass(frozen=True)
class Const:
    name: str
    type: ScalarType
    value: Expr
    span: Span = span_field()


@dataclass(frozen=True)
class BufferInit:
    """``zeros``, ``iota``, ``input``, ``random(seed)`` or ``fill(value)``."""

    kind: str
    arg: Expr | None = None
    span: Span = span_field()


@dataclass(frozen=True)
class Buffer:
    name: str
    type: ArrayType
    init: BufferInit
    span: Span = span_field()


@dataclass(frozen=True)
class Shared:
    name: str
    type: ScalarType
    value: Expr
    span: Span = span_field()


@dataclass(frozen=True)
class Signal:
    name: str
    span: Span = span_field()


@dataclass(frozen=True)
class Channel:
    name: str
    elem: ScalarType
    capacity: Expr
    span: Span = span_field()


@dataclass(frozen=True)
class Param:
    name: str
    type: ScalarType
    span: Span = span_field()


@dataclass(frozen=True)
class FnDef:
    name: str
    is_async: bool
    params: tuple[Param, ...]
    ret: ScalarType | None
    body: Block
    span: Span = span_field()


@dataclass(frozen=True)
class ExternFn:
    name: str
    params: tuple[Param, ...]
    ret: ScalarType | None
    path: str  # "dotted.module:attr", validated by the planner
    span: Span = span_field()
    path_span: Span = span_field()  # the quoted path, where a bad module or name is shown


@dataclass(frozen=True)
class Task:
    """``task NAME [for var in start..stop] [after a, b] { body }``."""

    name: str
    var: str | None
    start: Expr | None
    stop: Expr | None
    after: tuple[Name, ...]
    body: Block
    span: Span = span_field()


@dataclass(frozen=True)
class LocalBuffer:
    """``local buffer NAME: T[dims];`` inside a group: shared memory, one copy per instance."""

    name: str
    type: ArrayType
    span: Span = span_field()


@dataclass(frozen=True)
class LocalChannel:
    """``local channel NAME: T[capacity];`` inside a group: its slots in shared memory."""

    name: str
    elem: ScalarType
    capacity: Expr
    span: Span = span_field()


GroupMember = LocalBuffer | LocalChannel | Task


@dataclass(frozen=True)
class Group:
    """``group NAME [for var in start..stop] [after a, b] { local items and tasks }``."""

    name: str
    var: str | None
    start: Expr | None
    stop: Expr | None
    after: tuple[Name, ...]
    members: tuple[GroupMember, ...]
    span: Span = span_field()

    @property
    def tasks(self) -> tuple[Task, ...]:
        return tuple(m for m in self.members if isinstance(m, Task))

    @property
    def locals(self) -> tuple[LocalBuffer | LocalChannel, ...]:
        return tuple(m for m in self.members if not isinstance(m, Task))


Item = Const | Buffer | Shared | Signal | Channel | FnDef | ExternFn | Task | Group


@dataclass(frozen=True)
class Program:
    path: str
    items: tuple[Item, ...]
    source: str = field(default="", compare=False, repr=False)
