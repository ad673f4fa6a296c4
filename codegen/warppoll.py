"""A group task's poll on all 32 lanes of its pinned warp (docs/executor-v2.md, twenty-sixth session).

A task of a group runs pinned to a warp (codegen/groupkernel.py). Polled by
lane 0 alone, each of its ``parallel for`` loops costs a FORK: the poll stores
the loop's range and captured locals in global memory, suspends (its live
locals into the frame), the warp meets, reads the arguments back, runs the
loop, meets again, and lane 0 polls again (the frame reloaded). Where every
statement the poll runs itself gives the same result on every lane, the whole
warp runs the poll instead, and a parallel loop is a call right where it
stands (``par_<k>`` taking its range and captured locals as arguments, each
lane its share), followed by one meeting for the shared-memory writes it made.

What must happen once happens on lane 0, its outcome to every lane by
shuffle (``dl.first``): a local channel's send or receive (runtime/devicegroups.py,
``lch_send_warp``, ``lch_recv_warp``), the closed-sends count, the look at the
run's deadline (``dl.overdue_warp``: all lanes give up, or none), a store to a
buffer and an atomic that is a whole statement (``total.fetch_add(v);``, ``let t
= tickets.fetch_add(1);``): lane 0's, then the lanes meet, each with its value
(`out[g] += 1` adds once, and every lane's later load sees it). The frame's
words: every lane stores the same value and loads its own store (one
transaction a warp). The pinned loop's pending path (the view, the stuck check,
the naps) stays on lane 0.

Only a group whose tasks' polls await nothing but local channels, and whose
statements outside parallel loops have no other effect (an atomic inside a
larger expression, a signal, a call of an extern or of a fn with a loop, which
may give up at the deadline on one lane and not another), runs so; the others, and every group of a traced
run, keep the lane-0 poll. The simulator runs the same code: its shuffle is a
slot of the warp's own and a barrier of its 32 threads (runtime/devicewarp.py).
"""

from __future__ import annotations

from gasync.codegen import groups
from gasync.planner import ir
from gasync.planner.model import Plan, TaskDef
from gasync.planner.walk import exprs_of, subexprs

WARP_POLL = True  # False: every group task is polled by lane 0 (what bench/NOTES.md measured before)

OVERDUE_WARP = "dl.overdue_warp(G.sched.CTL, G.exec.CMD, w, lane)"
MEET = "dl.warp_sync(G.exec.CMD, w)  # the lanes meet: each sees what lane 0 did"
LANE = "lane = cuda.laneid  # the poll runs on every lane of its warp (codegen/warppoll.py); int32: one compare a test"


# what a poll on all lanes may evaluate outside its parallel loops: the same on every lane
_PURE = (ir.Lit, ir.Var, ir.Load, ir.Unary, ir.Binary, ir.Cast)


def warp_groups(plan: Plan, trace: bool) -> frozenset[str]:
    """The groups whose tasks are polled on all 32 lanes."""
    if not WARP_POLL or trace:
        return frozenset()
    out = set()
    for g in plan.groups:
        tasks = [t for t in plan.tasks if t.group == g.name]
        if tasks and all(eligible(plan, t) for t in tasks):
            out.add(g.name)
    return frozenset(out)


def eligible(plan: Plan, task: TaskDef) -> bool:
    """Whether ``task``'s poll gives the same result on every lane (the module's docstring)."""
    return _Check(plan).body(plan.function(task.body.name).body)


class _Check:
    """Whether statements and expressions outside parallel loops give the same on every lane."""

    def __init__(self, plan: Plan):
        self.plan = plan
        self.fns: dict[str, bool] = {}

    def body(self, body: tuple[ir.Stmt, ...]) -> bool:
        return all(self.stmt(s) for s in body)

    def stmt(self, s: ir.Stmt) -> bool:
        if isinstance(s, ir.AwaitS):
            f = s.future
            return isinstance(f, ir.Send | ir.Recv) and groups.is_local(f.chan) and self.exprs(_future_exprs(f))
        if isinstance(s, ir.ForAwait):
            return groups.is_local(s.chan) and self.body(s.body)
        if isinstance(s, ir.For):
            bounds = self.exprs((s.start, s.stop))
            if s.kind == "parallel":  # its body runs on each lane anyway: anything it may do there
                return bounds and s.reduce is None
            return bounds and s.kind == "seq" and self.body(s.body)
        if isinstance(s, ir.If):
            return self.exprs((s.cond,)) and self.body(s.then) and self.body(s.orelse)
        if isinstance(s, ir.While):
            return self.exprs((s.cond,)) and self.body(s.body)
        if isinstance(s, ir.Loop):
            return self.body(s.body)
        effect = _effect(s)
        if effect is not None:  # lane 0's, its value shuffled
            return self.exprs(_operands(effect))
        if isinstance(s, ir.Let | ir.Store | ir.Eval | ir.Return | ir.Break | ir.Continue):
            return self.exprs(tuple(exprs_of(s)))
        return False  # a select, a join, an async block: the lane-0 poll

    def exprs(self, exprs: tuple[ir.Expr, ...]) -> bool:
        for e in exprs:
            for x in subexprs(e):
                if isinstance(x, ir.ChannelClose):
                    if not groups.is_local(x.name):
                        return False
                elif isinstance(x, ir.Call):
                    if not (x.kind == "builtin" or (x.kind == "fn" and self.fn(x.name))):
                        return False
                elif not isinstance(x, _PURE):
                    return False
        return True

    def fn(self, name: str) -> bool:
        """A plain fn every lane may call: no loop (a long one gives up at the deadline, on one
        lane and not another), no store, no atomic; what it calls the same."""
        if name not in self.fns:
            self.fns[name] = False  # (a fn that calls itself: not while it is being read)
            self.fns[name] = self._straight(self.plan.function(name).body)
        return self.fns[name]

    def _straight(self, body: tuple[ir.Stmt, ...]) -> bool:
        for s in body:
            if isinstance(s, ir.If):
                if not (self.exprs((s.cond,)) and self._straight(s.then) and self._straight(s.orelse)):
                    return False
            elif not (isinstance(s, ir.Let | ir.Eval | ir.Return) and self.exprs(tuple(exprs_of(s)))):
                return False
        return True


def once(s: ir.Stmt) -> bool:
    """Whether statement ``s`` of a poll on all lanes is made by lane 0 alone (then the lanes
    meet): a store to a buffer, or an atomic (a shared scalar's or a buffer element's) that
    is the whole of a statement (``total.fetch_add(v);``, ``let old = atomic_add(h[b], 1);``)."""
    return isinstance(s, ir.Store) or _effect(s) is not None


def _effect(s: ir.Stmt) -> ir.SharedOp | ir.BufAtomic | None:
    e = s.value if isinstance(s, ir.Let) and s.op == "=" else s.expr if isinstance(s, ir.Eval) else None
    return e if isinstance(e, ir.SharedOp | ir.BufAtomic) else None


def _operands(e: ir.SharedOp | ir.BufAtomic) -> tuple[ir.Expr, ...]:
    return e.args if isinstance(e, ir.SharedOp) else (*e.index, e.value)


def shuffled(var: str, ty: str) -> str:
    """Lane 0's value of local ``var`` (Numba type ``ty``) in every lane: a shuffle moves 32- and
    64-bit ints and floats, so another type goes as an int64 and back."""
    first = "dl.first(G.exec.CMD, w, lane, {})"
    if ty in ("int32", "int64", "float32", "float64"):
        return first.format(var)
    if ty == "boolean":
        return first.format(f"int64({var})") + " != 0"
    return f"{ty}({first.format(f'int64({var})')})"


def _future_exprs(f: ir.Send | ir.Recv) -> tuple[ir.Expr, ...]:
    return (f.value,) if isinstance(f, ir.Send) else ()
