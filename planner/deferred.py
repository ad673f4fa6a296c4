"""Futures bound to a name and awaited later: ``let f = double(21); ...; f.await``.

The spec's futures are lazy ("calling an async fn makes a future; nothing runs until it
is awaited or passed to join/select"), so a future kept in a local is a deferred call.
This pass, on the AST before the planner checks anything, rewrites it into the forms the
rest of the compiler knows (decision 57 in docs/language.md):

- ``let f = g(a, b);`` (``g`` an async fn) becomes ``let f_arg0: P0 = a; let f_arg1: P1 = b;``
  (the arguments are evaluated where the future is made, as in Rust, each typed as
  ``g``'s parameter), and the one use of ``f`` (``f.await``, or ``f`` as a ``join``
  argument or a ``select`` arm's future) becomes ``g(f_arg0, f_arg1)``;
- ``let j = join(...);``, ``let r = ch.recv();``, ``let w = stop.wait();``,
  ``let s = ch.send(v);``, ``let t = sleep(n);`` and ``let y = yield_now();`` are moved
  to their one use, every argument they take (those of a join's calls too) kept as for a
  call; ``let f = async { ... };`` runs where it is awaited, with the locals it reads as
  they are there (Rust would reject a write to them in between).

A future is used exactly once: awaited twice, awaited in a loop it was not made in, used
as a value, or never awaited at all is E0207, located. The argument locals are named
``f_arg0`` (more underscores where the item already has such a name), so they never meet
the program's own names and stay plain identifiers in the generated code.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from gasync.dsl import ast
from gasync.dsl.diagnostics import GasyncError, Note
from gasync.planner import ir
from gasync.planner.errors import FutureMisuseError

FUTURE_METHODS = ("recv", "wait", "send")
FUTURE_CALLS = ("join", "sleep", "yield_now")
AWAIT_HINT = Note("'.await' it, or pass it to join or select")


@dataclass(eq=False)
class Deferred:
    """A future kept in a local: what its use becomes, and where it was used."""

    name: str
    made: ast.Span
    depth: int  # loops around the let
    use: ast.Expr
    used: ast.Span | None = None


@dataclass
class Pass:
    async_fns: dict[str, ast.FnDef]
    errors: list[GasyncError]
    taken: set[str]  # every name the item uses: an argument local takes none of them
    changed: bool = False
    env: dict[str, Deferred] = field(default_factory=dict)

    # ---- blocks and statements ----

    def block(self, b: ast.Block, depth: int) -> ast.Block:
        outer = dict(self.env)
        made: list[Deferred] = []
        out: list[ast.Stmt] = []
        for s in b.stmts:
            if isinstance(s, ast.Let) and s.type is None and self._is_future(s.value):
                d, temps = self._defer(s, depth)
                out += temps
                self.env[s.name] = d
                made.append(d)
                self.changed = True
                continue
            out.append(self.stmt(s, depth))
        tail = self.expr(b.tail, depth) if b.tail is not None else None
        for d in made:
            if d.used is None:
                self.errors.append(FutureMisuseError(f"future '{d.name}' is never awaited", d.made, (AWAIT_HINT,)))
        self.env = outer
        return dataclasses.replace(b, stmts=tuple(out), tail=tail)

    def stmt(self, s: ast.Stmt, depth: int) -> ast.Stmt:
        if isinstance(s, ast.Let):
            value = self.expr(s.value, depth) if not isinstance(s.value, ast.Reduce) else self._reduce(s.value, depth)
            self.env.pop(s.name, None)  # shadowed from here on
            return dataclasses.replace(s, value=value)
        if isinstance(s, ast.LetTuple):
            value = self.expr(s.value, depth)
            for n in s.names:
                if n is not None:
                    self.env.pop(n, None)
            return dataclasses.replace(s, value=value)
        if isinstance(s, ast.Assign):
            if isinstance(s.target, ast.Name) and s.target.id in self.env:
                self.errors.append(
                    FutureMisuseError(
                        f"future '{s.target.id}' cannot be assigned",
                        s.target.span,
                        (Note("bind the new future with its own 'let'"),),
                    )
                )
                return s
            return dataclasses.replace(s, target=self.expr(s.target, depth), value=self.expr(s.value, depth))
        if isinstance(s, ast.ExprStmt):
            return dataclasses.replace(s, expr=self.expr(s.expr, depth))
        if isinstance(s, ast.Return):
            return dataclasses.replace(s, value=self.expr(s.value, depth) if s.value is not None else None)
        if isinstance(s, ast.If):
            return self._if(s, depth)
        if isinstance(s, ast.While):
            return dataclasses.replace(s, cond=self.expr(s.cond, depth + 1), body=self.block(s.body, depth + 1))
        if isinstance(s, ast.Loop):
            return dataclasses.replace(s, body=self.block(s.body, depth + 1))
        if isinstance(s, ast.For):
            return self._for(s, depth)
        if isinstance(s, ast.ForAwait):
            return dataclasses.replace(s, body=self._scoped(s.body, depth + 1, s.var))
        if isinstance(s, ast.Select):
            arms = []
            for arm in s.arms:
                fut = self.future_arg(arm.future, depth)
                arms.append(dataclasses.replace(arm, future=fut, body=self._scoped(arm.body, depth, arm.binding)))
            return dataclasses.replace(s, arms=tuple(arms))
        return s  # break, continue

    def _scoped(self, b: ast.Block, depth: int, binding: str | None) -> ast.Block:
        """A body whose first name is bound by its statement (a loop variable, an arm's binding)."""
        shadowed = self.env.pop(binding, None) if binding is not None else None
        out = self.block(b, depth)
        if shadowed is not None:
            self.env[shadowed.name] = shadowed
        return out

    def _for(self, s: ast.For, depth: int) -> ast.For:
        start, stop = self.expr(s.start, depth), self.expr(s.stop, depth)
        return dataclasses.replace(s, start=start, stop=stop, body=self._scoped(s.body, depth + 1, s.var))

    def _reduce(self, r: ast.Reduce, depth: int) -> ast.Reduce:
        return dataclasses.replace(r, loop=self._for(r.loop, depth))

    def _if(self, s: ast.If, depth: int) -> ast.If:
        """Either branch may use a future (Rust's moves in branches): each starts from what
        was used before the `if`, and after it a future is used if either branch used it."""
        cond = self.expr(s.cond, depth)
        live = list(self.env.values())
        before = [d.used for d in live]
        then = self.block(s.then, depth)
        after_then = [d.used for d in live]
        for d, u in zip(live, before, strict=True):
            d.used = u
        orelse: ast.Block | ast.If | None = None
        if isinstance(s.orelse, ast.If):
            orelse = self._if(s.orelse, depth)
        elif s.orelse is not None:
            orelse = self.block(s.orelse, depth)
        for d, u in zip(live, after_then, strict=True):
            d.used = d.used or u
        return dataclasses.replace(s, cond=cond, then=then, orelse=orelse)

    # ---- expressions ----

    def expr(self, e: Any, depth: int) -> Any:
        if isinstance(e, ast.Name):
            if e.id in self.env:
                self.env[e.id].used = e.span  # misused, not forgotten: one error, not two
                self.errors.append(FutureMisuseError(f"future '{e.id}' used as a value", e.span, (AWAIT_HINT,)))
            return e
        if isinstance(e, ast.Await):
            return dataclasses.replace(e, future=self.future_arg(e.future, depth))
        if isinstance(e, ast.Call) and e.func == "join":
            return dataclasses.replace(e, args=tuple(self.future_arg(a, depth) for a in e.args))
        if isinstance(e, ast.Call | ast.MethodCall):
            return dataclasses.replace(e, args=tuple(self.expr(a, depth) for a in e.args))
        if isinstance(e, ast.Unary):
            return dataclasses.replace(e, operand=self.expr(e.operand, depth))
        if isinstance(e, ast.Binary):
            return dataclasses.replace(e, left=self.expr(e.left, depth), right=self.expr(e.right, depth))
        if isinstance(e, ast.Cast):
            return dataclasses.replace(e, expr=self.expr(e.expr, depth))
        if isinstance(e, ast.Index):
            return dataclasses.replace(e, indices=tuple(self.expr(i, depth) for i in e.indices))
        if isinstance(e, ast.AsyncBlock):
            return dataclasses.replace(e, body=self.block(e.body, depth))
        return e  # literals

    def future_arg(self, e: ast.Expr, depth: int) -> ast.Expr:
        """Where a future is wanted (an await, a join argument, a select arm): a kept one is used up."""
        if not (isinstance(e, ast.Name) and e.id in self.env):
            return self.expr(e, depth)  # type: ignore[no-any-return]
        d = self.env[e.id]
        if d.used is not None:
            self.errors.append(
                FutureMisuseError(
                    f"future '{d.name}' is used twice: its first use ran it",
                    e.span,
                    (Note("first used here", d.used), Note("make a new future for each await, as in Rust")),
                )
            )
        elif depth > d.depth:
            self.errors.append(
                FutureMisuseError(
                    f"future '{d.name}' is awaited in a loop it was not made in: the first turn would use it up",
                    e.span,
                    (Note("made here, outside the loop", d.made), Note("make it inside the loop")),
                )
            )
        d.used = e.span
        return d.use

    # ---- making one ----

    def _temp(self, name: str, k: int) -> str:
        sep = "_"
        while f"{name}{sep}arg{k}" in self.taken:
            sep += "_"
        self.taken.add(f"{name}{sep}arg{k}")
        return f"{name}{sep}arg{k}"

    def _is_future(self, e: Any) -> bool:
        if isinstance(e, ast.AsyncBlock):
            return True
        if isinstance(e, ast.Call):
            return e.func in self.async_fns or e.func in FUTURE_CALLS
        return isinstance(e, ast.MethodCall) and e.method in FUTURE_METHODS

    def _defer(self, s: ast.Let, depth: int) -> tuple[Deferred, list[ast.Stmt]]:
        """The deferred future of ``s``, and the lets that keep its arguments' values."""
        temps: list[ast.Stmt] = []
        assert not isinstance(s.value, ast.Reduce)  # (_is_future said it is a future)
        use = self._capture(s.value, s.name, depth, temps)
        return Deferred(s.name, s.span, depth, use), temps

    def _capture(self, e: ast.Expr, name: str, depth: int, temps: list[ast.Stmt]) -> ast.Expr:
        """Future ``e`` made now and run later: every argument a call or send takes (in a join
        too) is evaluated now, into a local of ``temps``; a block runs where it is used."""
        if isinstance(e, ast.AsyncBlock):
            return dataclasses.replace(e, body=self.block(e.body, depth))
        if isinstance(e, ast.Name) and e.id in self.env:  # a kept future in a kept join
            return self.future_arg(e, depth)
        if isinstance(e, ast.Call) and e.func == "join":
            return dataclasses.replace(e, args=tuple(self._capture(a, name, depth, temps) for a in e.args))
        if isinstance(e, ast.Call) and e.func in self.async_fns:
            params = self.async_fns[e.func].params
            # a parameter of an unknown type is reported at the definition alone: its argument is untyped here
            types = [p.type if p.type.name in ir.SCALARS else None for p in params]
            types += [None] * max(0, len(e.args) - len(params))
            return dataclasses.replace(e, args=self._kept(e.args, types, name, depth, temps))
        if isinstance(e, ast.Call | ast.MethodCall) and self._is_future(e):  # sleep, yield_now, send
            return dataclasses.replace(e, args=self._kept(e.args, [None] * len(e.args), name, depth, temps))
        return self.expr(e, depth)  # type: ignore[no-any-return]

    def _kept(
        self, args: tuple[ast.Expr, ...], types: list[Any], name: str, depth: int, temps: list[ast.Stmt]
    ) -> tuple[ast.Expr, ...]:
        out = []
        for a, ty in zip(args, types, strict=False):
            a = self.expr(a, depth)
            if ty is None and _literal(a):  # its type is left to the use (a channel's, sleep's)
                out.append(a)
                continue
            temp = self._temp(name, len(temps))
            temps.append(ast.Let(temp, ty, a, a.span))
            out.append(ast.Name(temp, a.span))
        return tuple(out)


def _literal(e: ast.Expr) -> bool:
    """Literals and operators over them alone: a value that no later statement can change."""
    if isinstance(e, ast.IntLit | ast.FloatLit | ast.BoolLit):
        return True
    if isinstance(e, ast.Unary):
        return _literal(e.operand)
    if isinstance(e, ast.Binary):
        return _literal(e.left) and _literal(e.right)
    return False


def defer_futures(program: ast.Program, errors: list[GasyncError]) -> tuple[ast.Program, frozenset[str]]:
    """``program`` with every future kept in a local moved to its use (see the module's text),
    and the fns, async fns and tasks where that failed: their rewritten bodies would hide the
    misused futures (a future used as a value, say, is no local of theirs any more), so the
    checks after this pass leave those bodies alone and check the other items."""
    async_fns = {i.name: i for i in program.items if isinstance(i, ast.FnDef) and i.is_async}
    items: list[ast.Item] = []
    items_named = {i.name for i in program.items}  # a local may not shadow a buffer, a const, ...
    failed: set[str] = set()
    changed = False
    for item in program.items:
        if isinstance(item, ast.FnDef | ast.Task):
            known = len(errors)
            p = Pass(async_fns, errors, names_in(item) | items_named)
            body = p.block(item.body, 0)
            if len(errors) > known:
                failed.add(item.name)
            if p.changed:
                changed = True
                item = dataclasses.replace(item, body=body)
        items.append(item)
    return (dataclasses.replace(program, items=tuple(items)) if changed else program), frozenset(failed)


def names_in(node: Any) -> set[str]:
    """Every name bound or used in an AST node (locals, parameters, loop variables, bindings)."""
    found: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, tuple | list):
            stack.extend(n)
        elif dataclasses.is_dataclass(n) and not isinstance(n, ast.Span):
            for f in dataclasses.fields(n):
                v = getattr(n, f.name)
                if f.name in ("id", "name", "var", "binding") and isinstance(v, str):
                    found.add(v)
                elif f.name == "names":
                    found.update(x for x in v if isinstance(x, str))
                else:
                    stack.append(v)
    return found
