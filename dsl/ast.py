"""The gasync AST: frozen dataclasses named after the grammar's rules.

Every node carries a :class:`Span` that points back at the source. Spans are
left out of equality and ``repr`` (``compare=False``), so tests can compare a
parsed tree with one written by hand, and two equal subtrees at different
places compare equal. Nothing from Lark appears here: identifiers are plain
``str`` and literals are already converted to Python values.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Span:
    """1-based line and column of the first character; end is exclusive."""

    line: int = 0
    column: int = 0
    end_line: int = 0
    end_column: int = 0


NOSPAN = Span()


def _span() -> Span:
    return field(default=NOSPAN, compare=False, repr=False)


# ---- types -----------------------------------------------------------------


@dataclass(frozen=True)
class ScalarType:
    name: str
    span: Span = _span()


@dataclass(frozen=True)
class ArrayType:
    elem: ScalarType
    dims: tuple[Expr, ...]
    span: Span = _span()


# ---- expressions -----------------------------------------------------------


@dataclass(frozen=True)
class IntLit:
    value: int
    span: Span = _span()


@dataclass(frozen=True)
class FloatLit:
    value: float
    span: Span = _span()


@dataclass(frozen=True)
class BoolLit:
    value: bool
    span: Span = _span()


@dataclass(frozen=True)
class Name:
    id: str
    span: Span = _span()


@dataclass(frozen=True)
class Unary:
    op: str  # '-', '+', '!', '~'
    operand: Expr
    span: Span = _span()


@dataclass(frozen=True)
class Binary:
    op: str
    left: Expr
    right: Expr
    span: Span = _span()


@dataclass(frozen=True)
class Cast:
    expr: Expr
    type: ScalarType
    span: Span = _span()


@dataclass(frozen=True)
class Call:
    """``f(a, b)``: a fn, async fn, extern fn or builtin (join, sleep, min, ...)."""

    func: str
    args: tuple[Expr, ...]
    span: Span = _span()


@dataclass(frozen=True)
class MethodCall:
    """``hits.fetch_add(1)``, ``tiles.send(v)``, ``stop.wait()``."""

    receiver: Name
    method: str
    args: tuple[Expr, ...]
    span: Span = _span()


@dataclass(frozen=True)
class Index:
    base: Name
    indices: tuple[Expr, ...]
    span: Span = _span()


@dataclass(frozen=True)
class Await:
    future: Expr
    span: Span = _span()


@dataclass(frozen=True)
class AsyncBlock:
    body: Block
    span: Span = _span()


Expr = IntLit | FloatLit | BoolLit | Name | Unary | Binary | Cast | Call | MethodCall | Index | Await | AsyncBlock


# ---- statements ------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    stmts: tuple[Stmt, ...]
    tail: Expr | None = None
    span: Span = _span()


@dataclass(frozen=True)
class Let:
    name: str
    type: ScalarType | None
    value: Expr | Reduce
    span: Span = _span()


@dataclass(frozen=True)
class LetTuple:
    """``let (a, _, c) = join(...).await;`` -- ``None`` stands for ``_``."""

    names: tuple[str | None, ...]
    value: Expr
    span: Span = _span()


@dataclass(frozen=True)
class Assign:
    target: Name | Index
    op: str  # '=', '+=', '-=', ...
    value: Expr
    span: Span = _span()


@dataclass(frozen=True)
class ExprStmt:
    expr: Expr
    span: Span = _span()


@dataclass(frozen=True)
class If:
    cond: Expr
    then: Block
    orelse: Block | If | None = None
    span: Span = _span()


@dataclass(frozen=True)
class While:
    cond: Expr
    body: Block
    span: Span = _span()


@dataclass(frozen=True)
class Loop:
    body: Block
    span: Span = _span()


@dataclass(frozen=True)
class For:
    """Sequential ``for v in start..stop``; ``kind`` is 'seq', 'parallel' or 'bulk'."""

    kind: str
    var: str
    start: Expr
    stop: Expr
    body: Block
    span: Span = _span()


@dataclass(frozen=True)
class ForAwait:
    var: str
    channel: Name
    body: Block
    span: Span = _span()


@dataclass(frozen=True)
class Break:
    span: Span = _span()


@dataclass(frozen=True)
class Continue:
    span: Span = _span()


@dataclass(frozen=True)
class Return:
    value: Expr | None = None
    span: Span = _span()


@dataclass(frozen=True)
class SelectArm:
    binding: str | None  # None for '_'
    future: Expr
    body: Block
    span: Span = _span()


@dataclass(frozen=True)
class Select:
    arms: tuple[SelectArm, ...]
    span: Span = _span()


@dataclass(frozen=True)
class Reduce:
    """``parallel for i in a..b reduce max { ...; tail }``: the value of a ``let`` or an
    assignment; ``loop`` is the loop (kind 'parallel' or 'bulk'), ``op`` the operator."""

    loop: For
    op: str
    op_span: Span = _span()
    span: Span = _span()


Stmt = Let | LetTuple | Assign | ExprStmt | If | While | Loop | For | ForAwait | Break | Continue | Return | Select


# ---- items -----------------------------------------------------------------


@dataclass(frozen=True)
class Const:
    name: str
    type: ScalarType
    value: Expr
    span: Span = _span()


@dataclass(frozen=True)
class BufferInit:
    """``zeros``, ``iota``, ``input``, ``random(seed)`` or ``fill(value)``."""

    kind: str
    arg: Expr | None = None
    span: Span = _span()


@dataclass(frozen=True)
class Buffer:
    name: str
    type: ArrayType
    init: BufferInit
    span: Span = _span()


@dataclass(frozen=True)
class Shared:
    name: str
    type: ScalarType
    value: Expr
    span: Span = _span()


@dataclass(frozen=True)
class Signal:
    name: str
    span: Span = _span()


@dataclass(frozen=True)
class Channel:
    name: str
    elem: ScalarType
    capacity: Expr
    span: Span = _span()


@dataclass(frozen=True)
class Param:
    name: str
    type: ScalarType
    span: Span = _span()


@dataclass(frozen=True)
class FnDef:
    name: str
    is_async: bool
    params: tuple[Param, ...]
    ret: ScalarType | None
    body: Block
    span: Span = _span()


@dataclass(frozen=True)
class ExternFn:
    name: str
    params: tuple[Param, ...]
    ret: ScalarType | None
    path: str  # "dotted.module:attr", validated by the planner
    span: Span = _span()
    path_span: Span = _span()  # the quoted path, where a bad module or name is shown


@dataclass(frozen=True)
class Task:
    """``task NAME [for var in start..stop] [after a, b] { body }``."""

    name: str
    var: str | None
    start: Expr | None
    stop: Expr | None
    after: tuple[Name, ...]
    body: Block
    span: Span = _span()


@dataclass(frozen=True)
class LocalBuffer:
    """``local buffer NAME: T[dims];`` inside a group: shared memory, one copy per instance."""

    name: str
    type: ArrayType
    span: Span = _span()


@dataclass(frozen=True)
class LocalChannel:
    """``local channel NAME: T[capacity];`` inside a group: its slots in shared memory."""

    name: str
    elem: ScalarType
    capacity: Expr
    span: Span = _span()


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
    span: Span = _span()

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
