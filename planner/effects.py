"""What each function does to the program's shared objects, directly and through calls.

A task *sends* on a channel if its body, or any fn or async fn it calls
(transitively), sends on it; the same holds for receiving, setting and
observing signals, and for plain (non-atomic) buffer writes. These sets give
the task graph its channel and signal edges and feed the concurrent-write
check, which needs every write with the elements it can touch
(:mod:`gasync.planner.footprints`). Atomic buffer updates (``atomic_add`` and
friends) are not writes here: they cannot race.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from gasync.planner import ir
from gasync.planner.footprints import Write, loop_ranges, store_write
from gasync.planner.model import Function, GroupDef, Plan, TaskDef
from gasync.planner.walk import LOOPS, exprs_of, stmts_in_loops, subexprs


@dataclass
class Effects:
    """Names a function touches; ``writes`` maps a buffer to its plain writes (an ordered set)."""

    sends: set[str] = field(default_factory=set)
    recvs: set[str] = field(default_factory=set)
    sets: set[str] = field(default_factory=set)
    waits: set[str] = field(default_factory=set)  # wait() and is_set()
    firm: set[str] = field(default_factory=set)  # of waits, those not in a select arm (nothing else ends them)
    writes: dict[str, dict[Write, None]] = field(default_factory=dict)
    calls: set[str] = field(default_factory=set)
    # for drawings only (``gasync graph``), not for the checks:
    reads: set[str] = field(default_factory=set)  # buffers loaded from
    updates: set[str] = field(default_factory=set)  # buffers updated atomically
    shared_reads: set[str] = field(default_factory=set)  # shared scalars loaded
    shared_writes: set[str] = field(default_factory=set)  # shared scalars stored or updated atomically
    closes: set[str] = field(default_factory=set)  # channels closed

    def absorb(self, other: Effects) -> None:
        self.sends |= other.sends
        self.recvs |= other.recvs
        self.sets |= other.sets
        self.waits |= other.waits
        self.firm |= other.firm
        self.reads |= other.reads
        self.updates |= other.updates
        self.shared_reads |= other.shared_reads
        self.shared_writes |= other.shared_writes
        self.closes |= other.closes
        for buf, writes in other.writes.items():
            self.writes.setdefault(buf, {}).update(writes)


def direct_effects(fn: Function, instance: tuple[tuple[str, int, int], ...] | None = None) -> Effects:
    """The effects of ``fn``'s own body (async blocks included, callees not);
    ``instance`` is a task's (instance variable, start, stop) and its group's."""
    eff = Effects()
    env = loop_ranges(fn, instance)
    for s, in_loop in stmts_in_loops(fn.body):
        if isinstance(s, ir.Store):
            eff.writes.setdefault(s.buf, {})[store_write(s, env)] = None
        elif isinstance(s, ir.ForAwait):
            eff.recvs.add(s.chan)
        elif isinstance(s, ir.AwaitS):
            _future(s.future, eff)
        elif isinstance(s, ir.Select):
            for arm in s.arms:
                _future(arm.future, eff, firm=len(s.arms) == 1)
        for e in exprs_of(s):
            _expr(e, eff)
        if in_loop or isinstance(s, LOOPS):  # an is_set() a loop tests again and again waits for the signal
            for e in exprs_of(s):
                eff.firm.update(sub.name for sub in subexprs(e) if isinstance(sub, ir.SignalOp) and sub.op != "set")
    return eff


def _future(f: ir.Future, eff: Effects, firm: bool = True) -> None:
    if isinstance(f, ir.Send):
        eff.sends.add(f.chan)
    elif isinstance(f, ir.Recv):
        eff.recvs.add(f.chan)
    elif isinstance(f, ir.Wait):
        eff.waits.add(f.signal)
        if firm:
            eff.firm.add(f.signal)
    elif isinstance(f, ir.AsyncCall):
        eff.calls.add(f.fn)
    elif isinstance(f, ir.Join):
        for sub in f.futures:
            _future(sub, eff, firm)


def _expr(e: ir.Expr, eff: Effects) -> None:
    for sub in subexprs(e):
        if isinstance(sub, ir.SignalOp):
            if sub.op == "set":
                eff.sets.add(sub.name)
            else:  # is_set(): a wait only where a loop asks again (direct_effects)
                eff.waits.add(sub.name)
        elif isinstance(sub, ir.Call) and sub.kind == "fn":
            eff.calls.add(sub.name)
        elif isinstance(sub, ir.Load):
            eff.reads.add(sub.buf)
        elif isinstance(sub, ir.BufAtomic):
            eff.updates.add(sub.buf)
        elif isinstance(sub, ir.SharedOp):
            (eff.shared_reads if sub.op == "load" else eff.shared_writes).add(sub.name)
        elif isinstance(sub, ir.ChannelClose):
            eff.closes.add(sub.name)


Ranges = dict[str, tuple[tuple[str, int, int], ...]]  # task body -> (variable, start, stop) of each


def instance_ranges(tasks: Iterable[TaskDef], groups: Iterable[GroupDef]) -> Ranges:
    """Each task body's instance variables with their ranges: its own (a task array's) and its
    group's (both are known for every instance, so the race check sees their writes apart)."""
    by_group = {g.name: g for g in groups}
    out = {}
    for t in tasks:
        g = by_group.get(t.group) if t.group is not None else None
        own = ((t.var, t.start, t.stop),) if t.var is not None else ()
        shared = ((g.var, g.start, g.stop),) if g is not None and g.var is not None else ()
        if own or shared:
            out[t.name] = own + shared
    return out


def transitive_effects(functions: Iterable[Function], instances: Ranges) -> dict[str, Effects]:
    """Each function's effects, its callees' included (the call graph is acyclic here);
    ``instances`` gives each task's instance variables and their ranges (instance_ranges)."""
    direct = {fn.name: direct_effects(fn, instances.get(fn.name)) for fn in functions}
    done: dict[str, Effects] = {}

    def visit(name: str) -> Effects:
        if name not in done:
            total = Effects()
            total.absorb(direct[name])
            total.calls = set(direct[name].calls)
            for callee in sorted(direct[name].calls):
                if callee in direct:
                    total.absorb(visit(callee))
            done[name] = total
        return done[name]

    for name in direct:
        visit(name)
    return done


def task_effects(plan: Plan) -> dict[str, Effects]:
    """Each task's effects, its callees' included, in the plan's task order."""
    instances = instance_ranges(plan.tasks, plan.groups)
    effects = transitive_effects([*plan.functions, *(t.body for t in plan.tasks)], instances)
    return {t.name: effects[t.body.name] for t in plan.tasks}


def host_set_signals(plan: Plan, effects: dict[str, Effects]) -> set[str]:
    """The signals no task sets: only the host can (``--signal``)."""
    return {s.name for s in plan.signals} - {n for e in effects.values() for n in e.sets}
