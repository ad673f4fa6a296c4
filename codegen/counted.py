"""Counted channels: a channel whose values the receivers can compute from their tickets.

A task that hands out numbers (B4's loader, the spec's tile hand-out) is a loop of sends
whose values are arithmetic of the loop's variable::

    task loader {
        for t in 0..N / TILE { tiles.send(t).await; }
        tiles.close();
    }

Sent through the ring, each value costs the one sending lane a few dependent stores and a
credit read (~0.5 us on the H200: bench/NOTES.md, runs 11-12), so the receivers wait on the
sender. Here the k-th value is known to everyone: it is the send's expression at
``t = start + k``. So a receive takes a ticket ``k`` (one atomic add on the channel's head)
and computes the value itself; ``k >= count`` is the closed, drained channel. The sender's
loop does no sends: it completes once the receivers have taken ``count - capacity``
tickets, when its last send would have found room, and then closes the channel as before.
What every task sees is what the ring gives (the values, their order, one receiver each,
the end of every ``for await``); what the sender waits on is what it waits on through the
ring, so a program whose receivers stop early deadlocks as before, the sender named as
waiting on its send (docs/language.md, decision 66).

A channel is counted when (``counted_channels``):
- one task sends on it and closes it, and that task is one instance outside any group, with
  no ``after`` edge either way (a task after it would start once its sends are taken; one
  before it would order its writes before the values, which the receivers take without it);
- that task's body is exactly ``for v in a..b { c.send(e).await; }`` then ``c.close();``,
  ``a`` and ``b`` known at compile time, ``e`` pure arithmetic of ``v`` and literals (no
  load, call of a fn, or division by anything but a nonzero literal: the receivers evaluate
  it, and it must not fault where the sender would not);
- every receive of it anywhere is a ``for await`` outside a group (a ``recv()`` on a closed,
  drained channel never completes, decision 16, and a ``select`` may not take a ticket it
  then drops).
"""

from __future__ import annotations

from dataclasses import dataclass

from gasync.codegen import groups
from gasync.planner import consteval, ir
from gasync.planner.effects import Effects
from gasync.planner.errors import ConstEvalError, DependentError
from gasync.planner.model import Plan, TaskDef
from gasync.planner.walk import stmts_in

COUNTED = True  # False: every channel goes through its ring (a stage of bench/NOTES.md)


@dataclass(frozen=True)
class Counted:
    """Channel ``chan``'s values: the ``k``-th is ``value`` with ``var`` = ``start + k``, for
    ``k < count``; its sender ``task`` waits until ``need`` tickets are taken."""

    chan: str
    task: str
    var: str
    var_ty: str
    start: int
    count: int
    need: int  # count - capacity: the tickets taken when its last send would have found room
    value: ir.Expr
    line: int  # the send's line


def counted_channels(plan: Plan, effects: dict[str, Effects]) -> dict[str, Counted]:
    """The program's counted channels (the module's docstring), by name."""
    if not COUNTED:
        return {}
    out: dict[str, Counted] = {}
    for t in plan.tasks:
        found = _sender_loop(plan, t)
        if found is None:
            continue
        loop, send = found
        c = send.chan
        if [u.name for u in plan.tasks if c in effects[u.name].sends or c in effects[u.name].closes] != [t.name]:
            continue
        if not _received_by_for_await_only(plan, c, effects):
            continue
        start, stop = consteval.evaluate(loop.start), consteval.evaluate(loop.stop)
        assert isinstance(start, int) and isinstance(stop, int)  # (the loop's bounds are integers)
        count = max(0, stop - start)
        need = count - plan.channel(c).capacity
        out[c] = Counted(c, t.name, loop.var, str(loop.start.ty), start, count, need, send.value, send.span.line)
    return out


def _sender_loop(plan: Plan, t: TaskDef) -> tuple[ir.For, ir.Send] | None:
    """Task ``t``'s loop and send, where its body is a counted channel's sender's."""
    if t.count != 1 or t.group is not None or t.after or any(t.name in u.after for u in plan.tasks):
        return None
    body = t.body.body
    if len(body) != 2:
        return None
    loop, close = body
    if not (isinstance(loop, ir.For) and loop.kind == "seq" and loop.reduce is None and len(loop.body) == 1):
        return None
    st = loop.body[0]
    if not (isinstance(st, ir.AwaitS) and not st.targets and isinstance(st.future, ir.Send)):
        return None
    send = st.future
    if groups.is_local(send.chan):
        return None
    if not (isinstance(close, ir.Eval) and isinstance(close.expr, ir.ChannelClose) and close.expr.name == send.chan):
        return None
    if not (_constant(loop.start) and _constant(loop.stop) and _pure(send.value, loop.var)):
        return None
    return loop, send


def _constant(e: ir.Expr) -> bool:
    try:
        return isinstance(consteval.evaluate(e), int)
    except (ConstEvalError, DependentError):
        return False


def _pure(e: ir.Expr, var: str) -> bool:
    """Whether ``e`` is arithmetic of ``var`` and literals that cannot fault."""
    if isinstance(e, ir.Lit):
        return True
    if isinstance(e, ir.Var):
        return e.name == var
    if isinstance(e, ir.Cast):
        return _pure(e.expr, var)
    if isinstance(e, ir.Unary):
        return _pure(e.operand, var)
    if isinstance(e, ir.Binary):
        if e.op in ("/", "%") and str(e.ty) not in ir.FLOATS:
            if not (isinstance(e.right, ir.Lit) and e.right.value != 0):
                return False
        return _pure(e.left, var) and _pure(e.right, var)
    if isinstance(e, ir.Call) and e.kind == "builtin":
        return all(_pure(a, var) for a in e.args)
    return False


def _received_by_for_await_only(plan: Plan, c: str, effects: dict[str, Effects]) -> bool:
    """Whether channel ``c`` is received from, and every receive of it is a ``for await``
    of a task outside any group (or of a fn, which a group's task does not call on it)."""
    receivers = [t for t in plan.tasks if c in effects[t.name].recvs]
    if not receivers or any(t.group is not None for t in receivers):
        return False
    for fn in [*plan.functions, *(t.body for t in plan.tasks)]:
        for st in stmts_in(fn.body):
            if isinstance(st, ir.ForAwait):
                continue
            if isinstance(st, ir.AwaitS) and _receives(st.future, c):
                return False
            if isinstance(st, ir.Select) and any(_receives(a.future, c) for a in st.arms):
                return False
    return True


def _receives(f: ir.Future, c: str) -> bool:
    if isinstance(f, ir.Recv):
        return f.chan == c
    if isinstance(f, ir.Join):
        return any(_receives(sub, c) for sub in f.futures)
    return False
