"""The guard conditions around a buffer access and what they narrow, and the walk that marks it.

This is the second half of planner/bounds.py's pass; that module's docstring is the one
place its rules are listed (what has a range in a whole body, and how a branch's condition
narrows it). planner/bounds.py finds the ranges that hold for a whole body; this module holds
what a condition that holds or fails says of the variables it compares (:func:`narrowings`),
and :class:`Marker`, the walk that rebuilds a body with each access whose every index is in
range marked ``proven``, narrowing the body's ranges in place as it enters a branch and putting
them back as it leaves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from gasync.planner import ir
from gasync.planner.exprs import LIMITS
from gasync.planner.footprints import Interval, hull, interval
from gasync.planner.model import Function
from gasync.planner.walk import operands, rebuild, replaced

# what a statement assigns (not counting its nested bodies), each variable with the range of
# the values it can take there under the ranges given (None: unknown)
Assigned = Callable[[ir.Stmt, dict[str, Interval]], Iterable[tuple[str, Interval | None]]]


class Marker:
    """Rebuilds a body with each proven access marked (unchanged parts stay the same objects).

    ``env`` is the body's ranges (planner/bounds.py), narrowed in place where a branch's
    condition is known (``assume``) and put back as the walk leaves the branch: ``undo`` holds
    each narrowed (or learned) variable's range before, newest last, so a branch costs what it
    narrows. ``fixed`` holds the variables no value of which changes inside a branch, the only
    ones narrowed; ``assigned`` is planner/bounds.py's, with the body's channels."""

    def __init__(
        self,
        env: dict[str, Interval],
        fixed: set[str],
        shapes: dict[str, tuple[int, ...]],
        assigned: Assigned,
    ):
        self.env = dict(env)
        self.fixed = fixed
        self.assigned = assigned
        self.shapes = shapes
        self.undo: list[tuple[str, Interval | None]] = []
        self.leaving: set[int] = set()  # the bodies walked so far that never fall through (by id)
        # per buffer written in the walk, the range of every value written (None: some unknown),
        # each where it is written, under the ranges narrowed there (planner/bounds.py, contents)
        self.stored: dict[str, Interval | None] = {}

    def written(self, buf: str, rng: Interval | None) -> None:
        self.stored[buf] = hull(self.stored.get(buf, rng), rng)

    def proven(self, buf: str, index: tuple[ir.Expr, ...]) -> bool:
        for ix, length in zip(index, self.shapes[buf], strict=True):
            rng = interval(ix, self.env)
            if rng is None or rng[0] < 0 or rng[1] > length:
                return False
        return True

    def narrow(self, name: str, rng: Interval) -> None:
        self.undo.append((name, self.env.get(name)))
        self.env[name] = rng

    def restore(self, mark: int) -> None:
        while len(self.undo) > mark:
            name, rng = self.undo.pop()
            if rng is None:
                del self.env[name]
            else:
                self.env[name] = rng

    def assume(self, cond: ir.Expr, holds: bool) -> None:
        for name, rng in narrowings(cond, holds, self.env, self.fixed):
            self.narrow(name, rng)

    def learn(self, s: ir.Stmt) -> None:
        """Under a narrowed range, the ranges of what ``s`` assigns, found again from it: each
        local assigned once is read only in its scope, inside the branch, where they hold."""
        for name, rng in self.assigned(s, self.env):
            if rng is not None and name in self.fixed:
                before = self.env.get(name)
                self.narrow(name, _meet(before, rng) if before is not None else rng)

    def function(self, fn: Function) -> Function:
        return replaced(fn, body=self.body(fn.body))

    def body(self, stmts: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
        mark = len(self.undo)
        out = []
        for s in stmts:
            if self.undo:
                self.learn(s)
            out.append(self.stmt(s))
            if isinstance(s, ir.If) and (id(s.then) in self.leaving or id(s.orelse) in self.leaving):
                # the rest runs only where the condition went the way of the branch that does not leave
                self.assume(s.cond, id(s.then) not in self.leaving)
        self.restore(mark)
        if _leaves(stmts, self.leaving):
            self.leaving.add(id(stmts))
        return stmts if all(a is b for a, b in zip(out, stmts, strict=True)) else tuple(out)

    def under(self, cond: ir.Expr, holds: bool, stmts: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
        """``stmts`` marked where ``cond`` is ``holds``."""
        mark = len(self.undo)
        self.assume(cond, holds)
        out = self.body(stmts)
        self.restore(mark)
        return out

    def stmt(self, s: ir.Stmt) -> ir.Stmt:
        x, b = self.expr, self.body
        if isinstance(s, ir.Let | ir.Return) and s.value is not None:
            return replaced(s, value=x(s.value))
        if isinstance(s, ir.Store):
            self.written(s.buf, interval(s.value, self.env) if s.op == "=" else None)
            index = tuple(x(i) for i in s.index)
            return replaced(s, index=index, value=x(s.value), proven=self.proven(s.buf, s.index))
        if isinstance(s, ir.Eval):
            return replaced(s, expr=x(s.expr))
        if isinstance(s, ir.If):
            then, orelse = self.under(s.cond, True, s.then), self.under(s.cond, False, s.orelse)
            return replaced(s, cond=x(s.cond), then=then, orelse=orelse)
        if isinstance(s, ir.While):
            return replaced(s, cond=x(s.cond), body=self.under(s.cond, True, s.body))
        if isinstance(s, ir.For):
            return replaced(s, start=x(s.start), stop=x(s.stop), body=b(s.body))
        if isinstance(s, ir.Loop | ir.ForAwait):
            return replaced(s, body=b(s.body))
        if isinstance(s, ir.AwaitS):
            return replaced(s, future=self.future(s.future))
        if isinstance(s, ir.Select):
            return replaced(s, arms=tuple(replaced(a, future=self.future(a.future), body=b(a.body)) for a in s.arms))
        return s

    def future(self, f: ir.Future) -> ir.Future:
        if isinstance(f, ir.AsyncCall):
            return replaced(f, args=tuple(self.expr(a) for a in f.args))
        if isinstance(f, ir.Sleep):
            return replaced(f, ns=self.expr(f.ns))
        if isinstance(f, ir.Send):
            return replaced(f, value=self.expr(f.value))
        if isinstance(f, ir.Join):
            return replaced(f, futures=tuple(self.future(sub) for sub in f.futures))
        if isinstance(f, ir.AsyncBlock):
            return replaced(f, body=self.body(f.body))
        return f

    def expr(self, e: ir.Expr) -> ir.Expr:
        if isinstance(e, ir.Var | ir.Lit):  # most nodes: nothing inside
            return e
        if isinstance(e, ir.Binary) and e.op in ("&&", "||"):
            return self.logical(e)
        kids = operands(e)
        new = [self.expr(k) for k in kids]
        if any(a is not b for a, b in zip(new, kids, strict=True)):
            e = rebuild(e, new)
        if isinstance(e, ir.BufAtomic):
            self.written(e.buf, None)
        if isinstance(e, ir.Load | ir.BufAtomic):
            return replaced(e, proven=self.proven(e.buf, e.index))
        return e

    def logical(self, e: ir.Binary) -> ir.Expr:
        """``a && b && c`` marked, each operand where those before it held (failed, for
        ``||``), as it runs; a chain of one operator is walked once, not once per operand."""
        chain = [e]  # the chain's nodes, top first: ((a && b) && c) is [_ && c, a && b]
        while isinstance(chain[-1].left, ir.Binary) and chain[-1].left.op == e.op:
            chain.append(chain[-1].left)
        mark = len(self.undo)
        out = self.expr(chain[-1].left)
        self.assume(chain[-1].left, e.op == "&&")
        for node in reversed(chain):
            right = self.expr(node.right)
            if node is not e:
                self.assume(node.right, e.op == "&&")
            out = replaced(node, left=out, right=right)
        self.restore(mark)
        return out


NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
MIRRORED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


def narrowings(cond: ir.Expr, holds: bool, env: dict[str, Interval], fixed: set[str]) -> Iterator[tuple[str, Interval]]:
    """The narrower range of each variable in ``fixed`` that ``cond`` compares (``v < e``,
    ``e >= v``, ``v == e``, ...) with an expression of known range, where ``cond`` is
    ``holds``: through ``!``, both sides of a ``&&`` that holds and of a ``||`` that fails.
    Each is given as soon as found, and ``env`` must take it before the next is asked for:
    the right side of ``j >= 0 && j < n`` is read knowing the left."""
    stack = [(cond, holds)]  # (a condition, whether it holds), the next one last
    while stack:
        c, h = stack.pop()
        if isinstance(c, ir.Unary) and c.op == "!":  # on a bool (on an int it is '~')
            stack.append((c.operand, not h))
        elif isinstance(c, ir.Binary) and c.op == ("&&" if h else "||"):
            stack += [(c.right, h), (c.left, h)]
        elif isinstance(c, ir.Binary) and c.op in NEGATED:
            op = c.op if h else NEGATED[c.op]
            for v, rel, other in ((c.left, op, c.right), (c.right, MIRRORED[op], c.left)):
                if isinstance(v, ir.Var) and v.name in fixed and str(v.ty) in LIMITS:
                    rng = _compared(env.get(v.name), str(v.ty), rel, interval(other, env))
                    if rng is not None:
                        yield v.name, rng


def _compared(rng: Interval | None, ty: str, op: str, other: Interval | None) -> Interval | None:
    """The values of ``rng`` (None: any of type ``ty``) that can stand ``op`` to some value of
    ``other``, where that narrows it to some values (None otherwise)."""
    if other is None or op == "!=":
        return None
    lo, hi = rng if rng is not None else (LIMITS[ty][0], LIMITS[ty][1] + 1)
    if op in ("<", "<=", "=="):
        hi = min(hi, other[1] - (op == "<"))
    if op in (">", ">=", "=="):
        lo = max(lo, other[0] + (op == ">"))
    return (lo, hi) if lo < hi and (lo, hi) != rng else None


def _meet(a: Interval, b: Interval) -> Interval:
    return max(a[0], b[0]), min(a[1], b[1])


def _leaves(body: tuple[ir.Stmt, ...], leaving: set[int]) -> bool:
    """Whether ``body`` never falls through to what follows it: it ends in ``return``, ``break``
    or ``continue``, or in an ``if`` both of whose branches are in ``leaving`` (walked already)."""
    last = body[-1] if body else None
    if isinstance(last, ir.If):
        return id(last.then) in leaving and id(last.orelse) in leaving
    return isinstance(last, ir.Return | ir.Break | ir.Continue)
