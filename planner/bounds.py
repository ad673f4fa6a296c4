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

- a load of a group's local integer buffer every write of which (with the
  conditions around it) has a range: the hull of those and 0 (``_contents``).

Anything else (a parameter, a local assigned twice, any other buffer load, a
shared scalar) may be anything. Names are unique within a function, and each variable
above is assigned in one place, so one map from variable to range holds for the
whole body; a range found for a variable holds wherever it is read.

Inside a branch, what its condition says narrows that map (planner/narrowing.py,
:func:`~gasync.planner.narrowing.narrowings`):

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

This module finds the ranges that hold for a whole body; planner/narrowing.py holds the
conditions and the walk that marks each access (:class:`~gasync.planner.narrowing.Marker`),
which narrows the map in place as it enters a branch and puts it back as it leaves
(``Marker.undo``). A channel's range still comes from un-narrowed sends.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from functools import cached_property, partial

from gasync.planner import ir
from gasync.planner.footprints import Interval, contents_key, hull, interval
from gasync.planner.model import BufferDef, Function, GroupDef, TaskDef
from gasync.planner.narrowing import Marker
from gasync.planner.walk import replaced, stmts_in, subexprs

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
    contents = _contents(bodies, channels, shapes, _local_ints(buffers, groups))
    marked = [_marker(b, channels, shapes, contents).function(b.fn) if b.fn.run_time_indices else b.fn for b in bodies]
    out_tasks = [replaced(t, body=body) for t, body in zip(tasks, marked[len(functions) :], strict=True)]
    return marked[: len(functions)], out_tasks


def _marker(b: _Body, channels: Channels, shapes: dict[str, tuple[int, ...]], contents: Env) -> Marker:
    """The walk that marks ``b``'s proven accesses, from its ranges (planner/narrowing.py)."""
    fixed = b.once | {var for var, _, _ in b.instance}  # no value changes inside a branch
    return Marker(b.ranges(channels, contents), fixed, shapes, partial(_assigned, channels=channels))


def _local_ints(buffers: tuple[BufferDef, ...], groups: tuple[GroupDef, ...]) -> set[str]:
    """The groups' local buffers of an integer type (their names as the IR spells them)."""
    local = {b.name for g in groups for b in g.buffers}
    return {b.name for b in buffers if b.name in local and b.elem in ("i32", "i64", "u32", "u64")}


def _contents(bodies: list[_Body], channels: Channels, shapes: dict[str, tuple[int, ...]], local: set[str]) -> Env:
    """The range of every value each local integer buffer in ``local`` can hold, where every
    write to it has one (``contents_key``: ``let t = tile_of[s]`` then has a range).

    Sound because nothing else writes a local buffer: only its group's tasks name it (a fn
    takes no buffer, the host neither fills nor reads it), the block zeroes it before each
    instance (0 is in every range), and a word is written whole. Each write's value is ranged
    where it is written, under the conditions around it (``if t < TILES { tile_of[s] = t; }``):
    a first walk of every body (planner/narrowing.py, ``Marker.written``) that knows no
    buffer's contents, so a value that depends on a load, a compound assignment (``+=``) or an
    atomic makes that buffer's contents unknown."""
    if not local:
        return {}
    found: dict[str, Interval | None] = dict.fromkeys(local, (0, 1))
    for b in bodies:
        walk = _marker(b, channels, shapes, {})
        walk.function(b.fn)
        for buf, rng in walk.stored.items():
            if buf in found:
                found[buf] = hull(found[buf], rng)
    return {contents_key(buf): rng for buf, rng in found.items() if rng is not None}


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

    def ranges(self, channels: Channels, contents: Env | None = None) -> Env:
        """The range of every variable that has one (see the module's docstring), with
        ``contents``' ranges of what local buffers hold (``_contents``)."""
        return self.ranges_waiting(channels, set(), contents)[0]

    def ranges_waiting(self, channels: Channels, empty: set[str], contents: Env | None = None) -> tuple[Env, set[str]]:
        """``ranges``, and the locals whose every value comes from a channel in ``empty`` (one
        nothing is known to be sent on yet), directly or through the ``let``s of them."""
        env: Env = dict(contents or {})
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
                now[send.chan] = hull(now.get(send.chan, rng), rng)
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
                now[send.chan] = hull(now.get(send.chan, rng), rng)
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
