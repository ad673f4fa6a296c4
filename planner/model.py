"""The frozen Plan: everything code generation needs, and nothing from networkx.

Task instances are numbered in a topological order of ``after``: task k's
instances are ``first_instance .. first_instance + count - 1``, and every
predecessor of a task has a smaller index than the task.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gasync.dsl.ast import NOSPAN, Span
from gasync.dsl.diagnostics import GasyncError
from gasync.planner.ir import Stmt, Ty


def _sp() -> Span:
    return field(default=NOSPAN, compare=False, repr=False)


@dataclass(frozen=True)
class PlanOptions:
    """Planner options: ``-D NAME=value`` overrides (text, parsed by type) and --strict."""

    defines: tuple[tuple[str, str], ...] = ()
    strict: bool = False


@dataclass(frozen=True)
class ConstDef:
    name: str
    ty: str
    value: int | float | bool
    span: Span = _sp()


@dataclass(frozen=True)
class BufferDef:
    name: str
    elem: str
    shape: tuple[int, ...]
    init: str  # zeros | iota | random | fill | input
    init_value: int | float | bool | None = None  # the seed of random, the value of fill
    span: Span = _sp()

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


@dataclass(frozen=True)
class SharedDef:
    name: str
    ty: str
    init: int | float | bool
    span: Span = _sp()


@dataclass(frozen=True)
class SignalDef:
    name: str
    span: Span = _sp()


@dataclass(frozen=True)
class ChannelDef:
    name: str
    elem: str
    capacity: int
    span: Span = _sp()


@dataclass(frozen=True)
class ExternDef:
    name: str
    params: tuple[tuple[str, str], ...]
    ret: str
    module: str
    attr: str
    span: Span = _sp()
    path_span: Span = _sp()  # the quoted "module:attr" of the declaration


@dataclass(frozen=True)
class Function:
    """A fn, async fn or task body. ``locals`` lists every local with its type
    (parameters first); names are unique within the function. ``run_time_indices``:
    some buffer access in it has an index that is not a constant (planner/bounds.py)."""

    name: str
    kind: str  # 'fn' | 'async' | 'task'
    params: tuple[tuple[str, str], ...]
    ret: Ty
    locals: tuple[tuple[str, Ty], ...]
    body: tuple[Stmt, ...]
    suspends: bool
    span: Span = _sp()
    run_time_indices: bool = True


@dataclass(frozen=True)
class TaskDef:
    name: str
    index: int  # topological number
    var: str | None  # the instance index's local name
    var_ty: str
    start: int
    stop: int
    after: tuple[str, ...]
    body: Function
    first_instance: int
    span: Span = _sp()
    group: str | None = None  # the group it belongs to (planner/groups.py)
    copies: int = 1  # a group's task: one set of start..stop instances per group instance

    @property
    def count(self) -> int:
        return max(0, self.stop - self.start) * self.copies

    @property
    def per_copy(self) -> int:
        """Instances in one group instance (all of them for a task outside any group)."""
        return max(0, self.stop - self.start)


@dataclass(frozen=True)
class GroupDef:
    """``group NAME for var in start..stop { ... }``: its tasks (each instance of each takes one
    warp of one block, ``warps`` in all), and its local buffers and channels, whose names are
    ``NAME.local`` (planner/groups.py). Task ``t``'s instance ``k`` belongs to group instance
    ``k // t.per_copy``."""

    name: str
    var: str | None
    var_ty: str
    start: int
    stop: int
    after: tuple[str, ...]
    tasks: tuple[str, ...]
    buffers: tuple[BufferDef, ...]
    channels: tuple[ChannelDef, ...]
    task_warps: tuple[int, ...]  # each task's instances (warps) in one group instance
    span: Span = _sp()

    @property
    def warps(self) -> int:
        return sum(self.task_warps)

    @property
    def count(self) -> int:
        return max(0, self.stop - self.start)

    @property
    def shared_bytes(self) -> int:
        from gasync.planner.groups import shared_bytes

        return shared_bytes(self.buffers, self.channels)


@dataclass(frozen=True)
class FrameLayout:
    """Where one function's state lives in a frame (in 8-byte words).

    Integers and booleans go in the int words, floats in the float words.
    Word 0 of the int part is the state. ``children`` gives, for each await
    point that needs a frame of its own, the offsets of that child frame;
    children of different await points overlap (only one is live at a time),
    children of one ``join`` or ``select`` are laid side by side.
    """

    fn: str
    int_slots: tuple[tuple[str, int], ...]
    float_slots: tuple[tuple[str, int], ...]
    result: tuple[str, int] | None  # ('int'|'float', offset) of the return value
    children: tuple[tuple[int, int, int], ...]  # (site, int offset, float offset)
    n_int: int
    n_float: int

    @property
    def bytes(self) -> int:
        return 8 * (self.n_int + self.n_float)


@dataclass(frozen=True)
class Flow:
    """A channel edge (a sender task to a receiver task) or a signal edge (setter to waiter).

    Flows do not order tasks, as ``after`` does; they are drawn, and they say
    which tasks talk to which.
    """

    kind: str  # 'channel' | 'signal'
    name: str  # the channel or signal
    src: str
    dst: str


@dataclass(frozen=True)
class Plan:
    path: str
    source: str = field(compare=False, repr=False)
    consts: tuple[ConstDef, ...]
    buffers: tuple[BufferDef, ...]
    shared: tuple[SharedDef, ...]
    signals: tuple[SignalDef, ...]
    channels: tuple[ChannelDef, ...]
    externs: tuple[ExternDef, ...]
    functions: tuple[Function, ...]  # fns and async fns, callees before callers
    tasks: tuple[TaskDef, ...]  # topological order of `after`
    edges: tuple[tuple[str, str], ...]  # (predecessor task, successor task)
    frames: tuple[FrameLayout, ...]
    warnings: tuple[GasyncError, ...] = field(default=(), compare=False)
    flows: tuple[Flow, ...] = ()  # sorted by (kind, name, src, dst)
    groups: tuple[GroupDef, ...] = ()  # their local buffers and channels are in no other field

    def group_of(self, task: TaskDef) -> GroupDef | None:
        return next((g for g in self.groups if g.name == task.group), None)

    def buffer(self, name: str) -> BufferDef:
        """A buffer by name, a group's local ones included."""
        found = next((b for b in self.buffers if b.name == name), None) or self.local_buffer(name)
        if found is None:
            raise KeyError(name)
        return found

    def channel(self, name: str) -> ChannelDef:
        """A channel by name, a group's local ones included."""
        found = next((c for c in self.channels if c.name == name), None) or self.local_channel(name)
        if found is None:
            raise KeyError(name)
        return found

    def local_buffer(self, name: str) -> BufferDef | None:
        return next((b for g in self.groups for b in g.buffers if b.name == name), None)

    def local_channel(self, name: str) -> ChannelDef | None:
        return next((c for g in self.groups for c in g.channels if c.name == name), None)

    @property
    def instances(self) -> int:
        return sum(t.count for t in self.tasks)

    def task_frame_bytes(self, task: TaskDef) -> int:
        """Device memory for one task's frames: frame bytes x instances."""
        return self.frame(task.name).bytes * task.count

    @property
    def frame_bytes(self) -> int:
        """Device memory for every task instance's frame."""
        return sum(self.task_frame_bytes(t) for t in self.tasks)

    def function(self, name: str) -> Function:
        for f in self.functions:
            if f.name == name:
                return f
        for t in self.tasks:
            if t.body.name == name:
                return t.body
        raise KeyError(name)

    def frame(self, name: str) -> FrameLayout:
        for fr in self.frames:
            if fr.fn == name:
                return fr
        raise KeyError(name)
