"""Channels by shape: which end of each channel the whole program reaches from one task
instance, and which of those ends awaits every operation on its own (runtime/state.py,
Channels and No lost wake, says what each buys).

- A *lone* end is one task instance (a task array counts each instance; a task's async fns
  count as the task). Its polls never overlap, so it takes its tickets with a store.
- A *bell* end is a lone end whose every send (or receive) of the channel is awaited by
  itself in the task's own body: no `select` arm, no part of a `join`, no async fn or block.
  It never joins a wait list: to wait, it sets a bit in the sequence word of the slot it
  waits on, and the other end's write of that slot (an exchange) returns the bit and wakes
  that one instance. No fence, no look at a wait list on either side.
- A *ticketed* receive end is one of many instances whose every receive is awaited by
  itself in a task's own body: a receive takes its ticket up front and waits for that
  ticket's value alone (runtime/state.py, Tickets), so a crowd of receivers never races
  for a value.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from gasync.planner import ir
from gasync.planner.effects import task_effects
from gasync.planner.model import Plan
from gasync.planner.walk import stmts_in

SIDES = ("SEND", "RECV")


def _ops(f: ir.Future) -> list[tuple[str, str]]:
    """(side, channel) of every channel operation in future ``f`` (a join's included)."""
    if isinstance(f, ir.Send):
        return [("SEND", f.chan)]
    if isinstance(f, ir.Recv):
        return [("RECV", f.chan)]
    if isinstance(f, ir.Join):
        return [op for sub in f.futures for op in _ops(sub)]
    return []


def _all_ops(st: ir.Stmt) -> list[tuple[str, str]]:
    if isinstance(st, ir.AwaitS):
        return _ops(st.future)
    if isinstance(st, ir.Select):
        return [op for arm in st.arms for op in _ops(arm.future)]
    if isinstance(st, ir.ForAwait):
        return [("RECV", st.chan)]
    return []


def _alone_op(st: ir.Stmt) -> tuple[str, str] | None:
    if isinstance(st, ir.AwaitS) and isinstance(st.future, ir.Send | ir.Recv):
        return _ops(st.future)[0]
    if isinstance(st, ir.ForAwait):
        return ("RECV", st.chan)
    return None


@dataclass(frozen=True)
class ChannelShapes:
    lone: frozenset[tuple[str, str]]  # (side, channel)
    bells: dict[tuple[str, str], int] = field(default_factory=dict)  # (side, channel) -> the instance
    tickets: frozenset[str] = frozenset()  # channels whose receive end takes tickets

    @staticmethod
    def of(plan: Plan) -> ChannelShapes:
        effects = task_effects(plan)
        ends: dict[tuple[str, str], list[int]] = {}
        for t in plan.tasks:
            for side, names in (("SEND", effects[t.name].sends), ("RECV", effects[t.name].recvs)):
                for name in names:
                    ends.setdefault((side, name), []).extend(range(t.first_instance, t.first_instance + t.count))
        lone = frozenset(k for k, insts in ends.items() if len(insts) == 1)
        every: Counter[tuple[str, str]] = Counter()
        for fn in [*plan.functions, *(t.body for t in plan.tasks)]:
            for st in stmts_in(fn.body):
                every.update(_all_ops(st))
        alone: Counter[tuple[str, str]] = Counter()
        for t in plan.tasks:
            for st in stmts_in(t.body.body, into_futures=False):
                op = _alone_op(st)
                if op is not None:
                    alone[op] += 1
        bells = {k: ends[k][0] for k in sorted(lone) if every[k] and alone[k] == every[k]}
        tickets = frozenset(
            name
            for (side, name), insts in ends.items()
            if side == "RECV" and len(insts) > 1 and every[(side, name)] and alone[(side, name)] == every[(side, name)]
        )
        return ChannelShapes(lone, bells, tickets)

    def is_lone(self, side: str, chan: str) -> bool:
        return (side, chan) in self.lone

    def bell(self, side: str, chan: str) -> int | None:
        """The instance of a bell end, or None."""
        return self.bells.get((side, chan))

    def constants(self, chan: str) -> list[str]:
        """The generated module's constants for channel ``chan``."""
        out = []
        for side, what in (("SEND", "tail"), ("RECV", "head")):
            out.append(f"LONE_{side}_{chan} = {self.is_lone(side, chan)}  # True: one instance, no cas on the {what}")
        for side in SIDES:
            inst = self.bell(side, chan)
            note = "its instance: it waits on a bit in the slot word" if inst is not None else "-1: not a bell end"
            out.append(f"BELL_{side}_{chan} = {-1 if inst is None else inst}  # {note}")
        out.append(f"TICKETS_{chan} = {chan in self.tickets}  # True: each receive takes a ticket first")
        return out
