"""W0218: what a program declares and never uses (rustc's ``dead_code`` and ``unused_variables``).

Runs on the program as written (groups not yet flattened, futures not yet
deferred), and only on a program with no error. Two passes:

- **Items**, by reachability. The tasks (a group's included) and the groups'
  ranges are roots; an item is used when something used names it, and what a
  used item names is used in turn: a fn's body, a const's value, a buffer's
  sizes and initial value, a shared scalar's initial value, a channel's
  capacity. So a fn that only an uncalled fn calls is uncalled too, and a
  const that only an unused buffer's size reads is unused; each such warning
  has a note naming the unused items it is only reachable from (those that
  nothing names at all). Warned of: consts, buffers, local buffers, shared
  scalars, signals (named by no ``wait``, ``is_set`` or ``set``: one that is
  only set is an output, ``Result.signals``, as a shared scalar only stored
  is), fns and async fns. Channels have E0215; tasks and groups always run;
  an extern fn is a declaration of code that lives elsewhere (rustc does not
  warn of unused foreign items either).
- **Locals**: a ``let`` (or a name of a ``let (a, b)``) that nothing reads
  after it, in its scope; assigning to it (``x = 1``, ``x += 1``) is not
  reading it. Parameters, loop, task, group and select variables are not
  warned of (``for _ in`` is no syntax, a signature is its callers' too).

A name that starts with ``_`` is never warned of, and an item so named counts
as used (it is kept on purpose, so what it names is too). See
docs/decisions-planner.md.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from gasync.dsl import ast
from gasync.dsl.diagnostics import GasyncError, Note
from gasync.planner.errors import UnusedWarning
from gasync.planner.symbols import Symbols

Declared = ast.Item | ast.LocalBuffer | ast.LocalChannel
NEVER = {  # what a warning says of an unused item of each kind
    "const": "is never used",
    "buffer": "is never read or written",
    "local buffer": "is never read or written",
    "shared scalar": "is never used",
    "signal": "is never waited on or set",
    "fn": "is never called",
    "async fn": "is never called",
}


@dataclass(frozen=True)
class Decl:
    """One declared item: its kind as messages say it, its name as written, where the name is."""

    kind: str
    name: str
    shown: str  # the name in messages: 's' (in group 'g') for a group's local
    span: ast.Span


def unused_warnings(program: ast.Program, syms: Symbols, defines: Iterable[tuple[str, str]]) -> list[GasyncError]:
    """W0218 for every unused item and ``let`` of ``program`` (which has no error), in source order."""
    graph = _Graph(syms)
    for item in program.items:
        graph.add(item)
    out = graph.unused_items(dict(defines)) + graph.locals
    return sorted(out, key=lambda w: (w.span.line, w.span.column))


class _Graph:
    """Which declared item names which (keys: a name, or ``group.name`` for a group's local)."""

    def __init__(self, syms: Symbols) -> None:
        self.syms = syms
        self.decls: dict[str, Decl] = {}
        self.names: dict[str, set[str]] = {}  # key -> the keys its definition or body names
        self.roots: set[str] = set()
        self.locals: list[GasyncError] = []  # unread lets, found while walking the bodies

    def add(self, item: Declared, group: ast.Group | None = None) -> None:
        if isinstance(item, ast.Group):
            self._add_group(item)
            return
        key = item.name if group is None else f"{group.name}.{item.name}"
        kind = _kind(item)
        if kind is not None:
            shown = f"'{item.name}'" if group is None else f"'{item.name}' (in group '{group.name}')"
            self.decls[key] = Decl(kind, item.name, shown, self.syms.word_span(item.span, item.name))
        if isinstance(item, ast.Task) or item.name.startswith("_"):
            self.roots.add(key)
        self.names[key] = self._walk(item, group)

    def _add_group(self, g: ast.Group) -> None:
        key = f"{g.name}."  # the group's own range: a root, as its tasks are
        self.roots.add(key)
        self.names[key] = self._walk(dataclasses.replace(g, members=(), after=()), None)
        for m in g.members:
            self.add(m, g)

    def _walk(self, item: Declared | ast.Group, group: ast.Group | None) -> set[str]:
        local = {m.name: f"{group.name}.{m.name}" for m in group.locals} if group is not None else {}
        body = _Body(self.syms, local)
        if isinstance(item, ast.FnDef | ast.Task):
            bound = [p.name for p in item.params] if isinstance(item, ast.FnDef) else []
            bound += [v for v in (item.var if isinstance(item, ast.Task) else None, group and group.var) if v]
            if isinstance(item, ast.Task):
                body.exprs(item.start, item.stop)
            body.function(item.body, bound)
        elif not isinstance(item, ast.ExternFn):  # an extern's signature names types only
            body.generic(item)
        self.locals += body.unread
        return body.named

    def unused_items(self, defines: dict[str, str]) -> list[GasyncError]:
        used = self._reachable(self.roots)
        users: dict[str, set[str]] = {k: set() for k in self.names}
        for k, named in self.names.items():
            for n in named & users.keys():
                users[n].add(k)
        out: list[GasyncError] = []
        for key, decl in self.decls.items():
            if key in used or decl.name.startswith("_"):
                continue
            notes = self._from_unused(key, users)
            if decl.kind == "const" and decl.name in defines:
                given = f"-D {decl.name}={defines[decl.name].strip()}"
                notes.append(Note(f"the define '{given}' sets it, but nothing reads it"))
            message = f"{decl.kind} {decl.shown} {NEVER[decl.kind]}"
            out.append(UnusedWarning(message, decl.span, tuple(notes)))
        return out

    def _reachable(self, start: Iterable[str]) -> set[str]:
        seen = set(start)
        stack = list(seen)
        while stack:
            for n in self.names.get(stack.pop(), ()):
                if n not in seen:
                    seen.add(n)
                    stack.append(n)
        return seen

    def _from_unused(self, key: str, users: dict[str, set[str]]) -> list[Note]:
        """A note naming the unused items that ``key`` is reachable from and that nothing names
        (``users``: the keys that name each key)."""
        origins: list[Decl] = []
        seen, stack = {key}, [key]
        while stack:
            for u in sorted(users[stack.pop()] - seen):
                seen.add(u)
                stack.append(u)
                if not users[u] and u in self.decls:
                    origins.append(self.decls[u])
        if not origins:
            return []
        origins.sort(key=lambda d: (d.span.line, d.span.column))
        said = [f"{d.kind} {d.shown} ({NEVER[d.kind].removeprefix('is ')})" for d in origins]
        roots = f"root is {said[0]}" if len(said) == 1 else f"roots are {', '.join(said[:-1])} and {said[-1]}"
        return [Note(f"it is used only from unused code, whose {roots}", origins[0].span if len(said) == 1 else None)]


KINDS: dict[type, str] = {
    ast.Const: "const",
    ast.Buffer: "buffer",
    ast.LocalBuffer: "local buffer",
    ast.Shared: "shared scalar",
    ast.Signal: "signal",
}


def _kind(item: Declared) -> str | None:
    """The kind a warning names ``item`` by, or None for the kinds never warned of."""
    if isinstance(item, ast.FnDef):
        return "async fn" if item.is_async else "fn"
    return KINDS.get(type(item))


@dataclass(eq=False)
class Binding:
    """One ``let`` name (``warn``) or a parameter or loop variable (not warned of)."""

    name: str
    span: ast.Span
    warn: bool
    read: bool = False
    assigned: bool = False


@dataclass
class _Body:
    """The items a definition or body names, and its ``let`` bindings that nothing reads."""

    syms: Symbols
    local_items: dict[str, str]  # a group's local items: the name written -> key
    named: set[str] = field(default_factory=set)
    unread: list[GasyncError] = field(default_factory=list)
    scopes: list[dict[str, Binding]] = field(default_factory=list)

    def function(self, body: ast.Block, bound: list[str]) -> None:
        self.scopes.append({n: Binding(n, ast.NOSPAN, False) for n in bound})
        self.block(body)
        self._close()

    def block(self, b: ast.Block) -> None:
        self.scopes.append({})
        for s in b.stmts:
            self.stmt(s)
        self.exprs(b.tail)
        self._close()

    def _close(self) -> None:
        for b in self.scopes.pop().values():
            self._judge(b)

    def _judge(self, b: Binding) -> None:
        """A warning for ``b`` if it is a ``let`` that nothing read (its scope ended, or a ``let``
        of its name in the same scope shadows it)."""
        if b.warn and not b.read and not b.name.startswith("_"):
            notes = [Note(f"'{b.name}' is assigned to, but never read")] if b.assigned else []
            notes.append(Note(f"if this is intentional, prefix it with an underscore: '_{b.name}'"))
            self.unread.append(UnusedWarning(f"unused variable '{b.name}'", b.span, tuple(notes)))

    def _bind(self, name: str, span: ast.Span) -> None:
        if name in self.scopes[-1]:
            self._judge(self.scopes[-1][name])
        self.scopes[-1][name] = Binding(name, self.syms.word_span(span, name), True)

    def _find(self, name: str) -> Binding | None:
        return next((s[name] for s in reversed(self.scopes) if name in s), None)

    def read(self, name: str) -> None:
        local = self._find(name)
        if local is not None:
            local.read = True
        else:
            self.named.add(self.local_items.get(name, name))

    def item(self, name: str) -> None:
        """An item named where only an item can be (a buffer indexed, a method's receiver, the
        channel of a 'for await'): the planner looks for no local there, so neither does this."""
        self.named.add(self.local_items.get(name, name))

    def stmt(self, s: ast.Stmt) -> None:
        if isinstance(s, ast.Let):
            self.value(s.value)
            self._bind(s.name, s.span)
        elif isinstance(s, ast.LetTuple):
            self.exprs(s.value)
            for n in s.names:
                if n is not None:
                    self._bind(n, s.span)
        elif isinstance(s, ast.Assign):
            self._assign(s)
        elif isinstance(s, ast.For | ast.ForAwait):
            self._for(s)
        elif isinstance(s, ast.Select):
            for arm in s.arms:
                self.exprs(arm.future)
                self.scopes.append({arm.binding: Binding(arm.binding, arm.span, False)} if arm.binding else {})
                self.block(arm.body)
                self._close()
        else:
            self.generic(s)

    def _assign(self, s: ast.Assign) -> None:
        local = self._find(s.target.id) if isinstance(s.target, ast.Name) else None
        if local is not None:
            local.assigned = True  # `x += 1` too: a value nothing reads is still unused
        else:
            self.exprs(s.target)
        self.value(s.value)

    def _for(self, s: ast.For | ast.ForAwait) -> None:
        if isinstance(s, ast.For):
            self.exprs(s.start, s.stop)
        else:
            self.item(s.channel.id)
        self.scopes.append({s.var: Binding(s.var, s.span, False)})
        self.block(s.body)
        self._close()

    def value(self, v: ast.Expr | ast.Reduce) -> None:
        if isinstance(v, ast.Reduce):
            self.stmt(v.loop)
        else:
            self.exprs(v)

    def exprs(self, *es: ast.Expr | None) -> None:
        for e in es:
            if isinstance(e, ast.Name):
                self.read(e.id)
            elif isinstance(e, ast.Call):
                self.named.add(e.func)  # a builtin's name names no item: harmless
                self.exprs(*e.args)
            elif isinstance(e, ast.MethodCall | ast.Index):
                self.item(e.receiver.id if isinstance(e, ast.MethodCall) else e.base.id)
                self.exprs(*(e.args if isinstance(e, ast.MethodCall) else e.indices))
            elif isinstance(e, ast.AsyncBlock):
                self.block(e.body)
            elif e is not None:
                self.generic(e)

    def generic(self, node: Any) -> None:
        """Every expression, block and statement among ``node``'s fields (types only for sizes)."""
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            for v in value if isinstance(value, tuple) else (value,):
                if isinstance(v, ast.Block):
                    self.block(v)
                elif isinstance(v, ast.Name | ast.Call | ast.MethodCall | ast.Index | ast.AsyncBlock):
                    self.exprs(v)
                elif isinstance(v, ast.Let | ast.LetTuple | ast.Assign | ast.For | ast.ForAwait | ast.Select):
                    self.stmt(v)
                elif dataclasses.is_dataclass(v) and not isinstance(v, ast.Span | ast.ScalarType | type):
                    self.generic(v)
