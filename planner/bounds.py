"""Which buffer indices are proven in range, so that code generation drops their run-time check.

Every buffer access is checked at run time (issue 13, decision 40) unless this
pass proves each of its indices inside the buffer along its dimension; it then
marks the access ``proven`` (:class:`~gasync.planner.ir.Load`, ``Store``,
``BufAtomic``). An access whose indices are all constants is marked where it is
checked (planner/exprs.py: one outside the buffer is a compile error, E0218),
and a body with only such accesses (``Function.run_time_indices`` false) is
not visited here. Any other index is proven when
:func:`~gasync.planner.footprints.interval` gives it a range inside
``0..length``: literals and consts have one value; ``+``, ``-``, ``*``, unary
``-``, ``min``, ``max``, casts, ``/``, ``%`` and ``&`` combine ranges while no
value can wrap; and a variable has a range when every value it can ever hold
is known to lie in one:

- the task's instance variable, and its group's: their ``start..stop``;
- the variable of a ``for``, ``parallel for`` or ``bulk for`` whose bounds
  have ranges (it is read-only);
- the variable of a ``for await``, or the one target of a ``recv()`` awaited
  or won in a ``select``, on a channel whose every ``send`` sends a value with
  a range: the channel holds only what was sent, so the union of those. A value
  sent may itself come from another channel: the ranges are found again, up to
  :data:`ROUNDS` times, each round from the last one's (each round's are sound,
  so stopping early only loses precision);
- a local with one assignment in its whole function, a ``let`` whose value has
  a range (or a receive, above): a local is read only inside its scope, after
  that assignment.

Anything else (a parameter, a local assigned twice, a buffer load, a shared
scalar) may be anything. Names are unique within a function, and each variable
above is assigned in one place, so one map from variable to range holds for the
whole body; a range found for a variable holds wherever it is read.

Inside a branch, what its condition says narrows that map (:func:`narrowings`):

- an ``if``'s condition holds in its ``then`` and fails in its ``else``, a
  ``while``'s holds in its body, the right side of ``&&`` runs where the left
  held and of ``||`` where it failed; past an ``if`` one of whose branches ends
  in ``return``, ``break`` or ``continue``, the condition went the other way;
- a comparison that holds (``v < e``, ``<=``, ``>``, ``>=``, ``==``, either side,
  through ``!``; both sides of a ``&&`` that holds and of a ``||`` that fails)
  narrows ``v`` by the range of ``e``: ``t < TILES`` takes ``t``'s top to
  ``TILES - 1``, so ``t * TILE + i`` with ``i`` in ``0..TILE`` stays under
  ``TILES * TILE``; a ``v`` with no range starts from its type's
  (``let j = idx[i]; if j >= 0 && j < n { x[j] ... }``);
- only a variable that cannot change while the branch runs is narrowed: an
  instance or loop variable (read-only), a local or parameter assigned in one
  place (that assignment comes before the condition, in a body around the
  branch). A local assigned twice (``j += 1`` in the branch, or in a loop in
  it) is not;
- in the branch, each such local's ``let`` is found again from the narrowed
  ranges: it is read only in its scope, inside the branch.

The map is narrowed in place as the walk enters a branch and put back as it
leaves (``_Marker.undo``). A channel's range still comes from un-narrowed sends.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from functools import cached_property

from gasync.planner import ir
from gasync.planner.exprs import LIMITS
from gasync.planner.footprints import Interval, interval
from gasync.planner.model import BufferDef, Function, GroupDef, TaskDef
from gasync.planner.walk import operands, rebuild, replaced, stmts_in, subexprs

ROUNDS = 4  # passes over the program for ranges of values that travel through channels

Env = dict[str, Interval]
Channels = dict[str, Interval | None]  # a channel's values; absent or None: unknown


def prove(
    functions: list[Function],
    tasks: list[TaskDef],
    buffers: tuple[BufferDef, ...],
    groups: tuple[GroupDef, ...] = (),
) -> tuple[list[Function], list[TaskDef]]:
    """``functions`` and ``tasks`` with every access whose indices are proven in range marked so."""
    by_name = {g.name: g for g in groups}
    bodies = [_Body(f, ()) for f in functions] + [
        _Body(t.body, _instance(t, by_name.get(t.group or ""))) for t in tasks
    ]
    if not any(b.fn.run_time_indices for b in bodies):
        return functions, tasks  # every index is a constant: proven where it was checked (E0218)
    channels = channel_ranges(bodies)
    shapes = {b.name: b.shape for b in buffers}
    marked = [_Marker(b, channels, shapes).function(b.fn) if b.fn.run_time_indices else b.fn for b in bodies]
    out_tasks = [replaced(t, body=body) for t, body in zip(tasks, marked[len(functions) :], strict=True)]
    return marked[: len(functions)], out_tasks


def _instance(t: TaskDef, group: GroupDef | None) -> tuple[tuple[str, int, int], ...]:
    """The ranges of a task's instance variable and of its group's (``start..stop``)."""
    out = [(t.var, t.start, t.stop)] if t.var is not None else []
    if group is not None and group.var is not None:
        out.append((group.var, group.start, group.stop))
    return tuple(out)


class _Body:
    """A function or task body, walked once, when first asked: its statements in order, its
    locals assigned in one place, and its sends."""

    def __init__(self, fn: Function, instance: tuple[tuple[str, int, int], ...]):
        self.fn = fn
        self.instance = instance

    @cached_property
    def stmts(self) -> list[ir.Stmt]:
        return list(stmts_in(self.fn.body))

    @cached_property
    def once(self) -> set[str]:
        n: Counter[str] = Counter(name for name, _ in self.fn.params)  # a parameter's caller assigns it
        for s in self.stmts:
            n.update(name for name, _ in _assigned(s, {}, {}))
        return {name for name, k in n.items() if k == 1}

    @cached_property
    def sends(self) -> list[ir.Send]:
        return [send for s in self.stmts for send in _sends(s)]

    @cached_property
    def receives(self) -> bool:
        return any(isinstance(s, ir.ForAwait) or _receives(s) for s in self.stmts)

    def ranges(self, channels: Channels) -> Env:
        """The range of every variable that has one (see the module's docstring)."""
        return self.ranges_waiting(channels, set())[0]

    def ranges_waiting(self, channels: Channels, empty: set[str]) -> tuple[Env, set[str]]:
        """``ranges``, and the locals whose every value comes from a channel in ``empty`` (one
        nothing is known to be sent on yet), directly or through the ``let``s of them."""
        env: Env = {}
        waiting: set[str] = set()
        for var, start, stop in self.instance:
            env[var] = (start, stop)  # half-open, as every range here
        for s in self.stmts:
            fed = _fed_by(s)
            for name, rng in _assigned(s, env, channels):
                if name not in self.once:
                    continue
                if fed.get(name) in empty or (isinstance(s, ir.Let) and _mentions(s.value, waiting)):
                    waiting.add(name)
                elif rng is not None:
                    env[name] = rng
        return env, waiting


def channel_ranges(bodies: list[_Body]) -> Channels:
    """The range of every value each channel can carry, where every send's value has one."""
    found: Channels = {}
    if not any(b.receives for b in bodies if b.fn.run_time_indices):
        return found  # nothing reads a channel's value into a variable that an index could use
    senders = [b for b in bodies if b.sends]
    least = _least_ranges(senders)
    if least is not None:
        return least
    for _ in range(ROUNDS):
        now: Channels = {}
        for b in senders:
            env = b.ranges(found)
            for send in b.sends:
                rng = interval(send.value, env)
                before = now.get(send.chan, rng)
                now[send.chan] = _hull(before, rng) if before is not None and rng is not None else None
        if now == found:
            break
        found = now
    return found


def _least_ranges(senders: list[_Body]) -> Channels | None:
    """The channels' ranges where values go round a cycle of channels (``free`` gives the stage
    that ``full`` is sent, ``full`` the one ``free`` is sent back), or None where they do not
    settle within ROUNDS. Every channel starts with nothing sent; each round a send adds its
    value's range, except a value that depends on what a channel with nothing sent yet gives
    (nothing can be received there yet). When a round changes nothing, every send's value lies
    in its channel's range given that every value received does: by induction over the sends
    of a run, every value a channel ever carries lies in its range. A channel that stays empty
    is never sent anything; its receivers' ranges stay unknown."""
    found: Channels = {}
    for _ in range(ROUNDS):
        now: Channels = {}
        empty = {send.chan for b in senders for send in b.sends} - set(found)
        for b in senders:
            env, waiting = b.ranges_waiting(found, empty)
            for send in b.sends:
                if _mentions(send.value, waiting):
                    continue
                rng = interval(send.value, env)
                if send.chan not in now:
                    now[send.chan] = rng
                else:
                    before = now[send.chan]
                    now[send.chan] = _hull(before, rng) if before is not None and rng is not None else None
        if now == found:
            return found
        found = now
    return None


def _mentions(e: ir.Expr, names: set[str]) -> bool:
    return bool(names) and any(isinstance(x, ir.Var) and x.name in names for x in subexprs(e))


def _fed_by(s: ir.Stmt) -> dict[str, str]:
    """The locals statement ``s`` receives into, each with its channel."""
    out: dict[str, str] = {}
    if isinstance(s, ir.ForAwait):
        out[s.var] = s.chan
    elif isinstance(s, ir.AwaitS):
        futures = s.future.futures if isinstance(s.future, ir.Join) else (s.future,)
        for target, fut in zip(s.targets, futures, strict=False):
            if target is not None and isinstance(fut, ir.Recv):
                out[target] = fut.chan
    elif isinstance(s, ir.Select):
        for arm in s.arms:
            if arm.target is not None and isinstance(arm.future, ir.Recv):
                out[arm.target] = arm.future.chan
    return out


def _assigned(s: ir.Stmt, env: Env, channels: Channels) -> Iterator[tuple[str, Interval | None]]:
    """Each variable statement ``s`` assigns (not counting its nested bodies), with the range
    of the values it can assign there (None: unknown)."""
    if isinstance(s, ir.Let):
        yield s.var, interval(s.value, env) if s.op == "=" else None
    elif isinstance(s, ir.For):
        start, stop = interval(s.start, env), interval(s.stop, env)
        yield s.var, (start[0], stop[1] - 1) if start is not None and stop is not None else None
        yield s.stop_var, None
        if s.reduce is not None:
            yield s.reduce.into, None
    elif isinstance(s, ir.ForAwait):
        yield s.var, channels.get(s.chan)
    elif isinstance(s, ir.AwaitS):
        futures = s.future.futures if isinstance(s.future, ir.Join) else (s.future,)
        for target, fut in zip(s.targets, futures, strict=False):
            if target is not None:
                yield target, channels.get(fut.chan) if isinstance(fut, ir.Recv) else None
        yield from _block_results(s.future)
    elif isinstance(s, ir.Select):
        for arm in s.arms:
            if arm.target is not None:
                yield arm.target, channels.get(arm.future.chan) if isinstance(arm.future, ir.Recv) else None
            yield from _block_results(arm.future)


def _block_results(f: ir.Future) -> Iterator[tuple[str, None]]:
    """An async block's result local, which its ``return``s set (and its tail, a ``let``)."""
    if isinstance(f, ir.AsyncBlock) and f.result is not None:
        yield f.result, None
    elif isinstance(f, ir.Join):
        for sub in f.futures:
            yield from _block_results(sub)


def _receives(s: ir.Stmt) -> bool:
    if isinstance(s, ir.AwaitS):
        futures = s.future.futures if isinstance(s.future, ir.Join) else (s.future,)
        return any(isinstance(f, ir.Recv) for f in futures)
    return isinstance(s, ir.Select) and any(isinstance(a.future, ir.Recv) for a in s.arms)


def _sends(s: ir.Stmt) -> Iterator[ir.Send]:
    """The sends that statement ``s`` awaits or selects on (not counting its nested bodies)."""
    futures = [s.future] if isinstance(s, ir.AwaitS) else [a.future for a in s.arms] if isinstance(s, ir.Select) else []
    while futures:
        f = futures.pop()
        if isinstance(f, ir.Send):
            yield f
        elif isinstance(f, ir.Join):
            futures.extend(reversed(f.futures))


def _hull(a: Interval, b: Interval) -> Interval:
    return min(a[0], b[0]), max(a[1], b[1])


class _Marker:
    """Rebuilds a body with each proven access marked (unchanged parts stay the same objects).

    ``env`` is the body's ranges, narrowed in place where a branch's condition is known
    (``assume``) and put back as the walk leaves the branch: ``undo`` holds each narrowed
    (or learned) variable's range before, newest last, so a branch costs what it narrows."""

    def __init__(self, body: _Body, channels: Channels, shapes: dict[str, tuple[int, ...]]):
        self.env = dict(body.ranges(channels))
        self.fixed = body.once | {var for var, _, _ in body.instance}  # no value changes inside a branch
        self.channels = channels
        self.shapes = shapes
        self.undo: list[tuple[str, Interval | None]] = []
        self.leaving: set[int] = set()  # the bodies walked so far that never fall through (by id)

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
        for name, rng in _assigned(s, self.env, self.channels):
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


def narrowings(cond: ir.Expr, holds: bool, env: Env, fixed: set[str]) -> Iterator[tuple[str, Interval]]:
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
