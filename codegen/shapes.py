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
- ``HOW_c`` (runtime/state.py, Flagged words, credits, deferred looks) says what the ends
  need ordered: a lone sender that touches nothing another task must see ordered before its
  last send (``clean``, below) sends *flagged* values with relaxed stores; receivers that are
  all as clean free slots with relaxed stores; a flagged sender whose only awaits are its
  sends of the channel keeps *credits*; and with ticketed receivers it *defers* its looks
  for waiting holders to the end of a run of sends. An end whose other end writes the slots'
  sequences relaxed, and that reads nothing another task writes, is *calm*: it reads the
  sequences relaxed too (no acquire, which on sm_90 invalidates the SM's L1 at every look).
  A channel no task closes is *open*: no end reads its closed flag.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

from gasync.codegen import groups
from gasync.codegen.counted import Counted, counted_channels
from gasync.codegen.groups import LCH_LANE0, LCH_LONE_RECV, LCH_LONE_SEND, LCH_OPEN
from gasync.planner import ir
from gasync.planner.effects import Effects, direct_effects, task_effects, transitive_effects
from gasync.planner.model import ChannelDef, Plan, TaskDef
from gasync.planner.walk import stmts_in

SIDES = ("SEND", "RECV")
# HOW_c's bits (the same values as runtime/devicechan.py's, which the generated code passes)
FLAGGED, QUIET_FREE, CREDITS, DEFER, CALM_RECV, CALM_SEND, OPEN = 1, 2, 4, 8, 16, 32, 64
HOW_NAMES = (
    ("FLAGGED", FLAGGED),
    ("QUIET_FREE", QUIET_FREE),
    ("CREDITS", CREDITS),
    ("DEFER", DEFER),
    ("CALM_RECV", CALM_RECV),
    ("CALM_SEND", CALM_SEND),
    ("OPEN", OPEN),
)
RELAXED = True  # False: every channel orders as a release (what bench/NOTES.md measured against)


def _ops(f: ir.Future) -> list[tuple[str, str]]:
    """(side, channel) of every channel operation in future ``f`` (a join's included)."""
    if isinstance(f, ir.Send):
        return [("SEND", f.chan)]
    if isinstance(f, ir.Recv):
        return [("RECV", f.chan)]
    if isinstance(f, ir.Join):
        return [op for sub in f.futures for op in _ops(sub)]
    return []


def all_ops(st: ir.Stmt) -> list[tuple[str, str]]:
    if isinstance(st, ir.AwaitS):
        return _ops(st.future)
    if isinstance(st, ir.Select):
        return [op for arm in st.arms for op in _ops(arm.future)]
    if isinstance(st, ir.ForAwait):
        return [("RECV", st.chan)]
    return []


LOCAL_BITS = True  # False: every local end claims with a cas and looks at CLOSED (a stage of gpu_check.sh)


def local_how(plan: Plan, effects: dict[str, Effects]) -> dict[str, int]:
    """Each local channel's LCH_ bits (runtime/state.py, groups). An end is lone where one task of
    the group, of one warp an instance, reaches it (its async fns' operations count as its own):
    that warp alone writes the end's position word, so it claims with a store, not a cas. Where
    no task that sends on the channel writes a local buffer, what a send publishes is lane 0's
    value alone (global memory is ordered by the lanes' meeting and lane 0's release; a staged
    tile's lanes' writes go through the slot's mbarriers, which racecheck follows)."""
    out: dict[str, int] = {}
    for g in plan.groups if LOCAL_BITS else ():
        tasks = [t for t in plan.tasks if t.name in g.tasks]
        for ch in g.channels:
            how = 0
            for bit, ends in ((LCH_LONE_SEND, "sends"), (LCH_LONE_RECV, "recvs")):
                users = [t for t in tasks if ch.name in getattr(effects[t.name], ends)]
                if len(users) == 1 and users[0].per_copy == 1:
                    how |= bit
            if not any(ch.name in e.closes for e in effects.values()):
                how |= LCH_OPEN
            senders = [effects[t.name] for t in tasks if ch.name in effects[t.name].sends]
            if not any(groups.is_local(b) for e in senders for b in (*e.writes, *e.updates)):
                how |= LCH_LANE0
            out[ch.name] = how
    return out


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
    how: dict[str, int] = field(default_factory=dict)  # channel -> HOW bits (0 where absent)
    deferring: dict[str, tuple[str, ...]] = field(default_factory=dict)  # task -> the channels it defers on
    crediting: dict[str, tuple[str, ...]] = field(default_factory=dict)  # task -> its channels with a cursor
    counted: dict[str, Counted] = field(default_factory=dict)  # channel -> its values by ticket (codegen/counted.py)
    local_how: dict[str, int] = field(default_factory=dict)  # local channel -> its LCH_ bits (local_how)

    @staticmethod
    def of(plan: Plan) -> ChannelShapes:
        effects = task_effects(plan)
        counted = counted_channels(plan, effects)
        ends: dict[tuple[str, str], list[int]] = {}
        for t in plan.tasks:
            for side, names in (("SEND", effects[t.name].sends), ("RECV", effects[t.name].recvs)):
                for name in names:
                    # a group's own ring in shared memory, a counted channel: none of these shapes
                    if groups.is_local(name) or name in counted:
                        continue
                    ends.setdefault((side, name), []).extend(range(t.first_instance, t.first_instance + t.count))
        lone = frozenset(k for k, insts in ends.items() if len(insts) == 1)
        every: Counter[tuple[str, str]] = Counter()
        for fn in [*plan.functions, *(t.body for t in plan.tasks)]:
            for st in stmts_in(fn.body):
                every.update(all_ops(st))
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
        clean = _Cleanliness(plan, effects)
        how = {ch.name: _how(plan, ch, lone, tickets, clean) for ch in plan.channels if ch.name not in counted}
        deferring: dict[str, tuple[str, ...]] = {}
        crediting: dict[str, tuple[str, ...]] = {}
        for name, bits in how.items():
            sender = next((t.name for t in plan.tasks if name in effects[t.name].sends), "")
            if bits & DEFER:
                deferring[sender] = (*deferring.get(sender, ()), name)
            if bits & CREDITS:
                crediting[sender] = (*crediting.get(sender, ()), name)
        how_set = {k: v for k, v in how.items() if v}
        return ChannelShapes(lone, bells, tickets, how_set, deferring, crediting, counted, local_how(plan, effects))

    def defers(self, chan: str) -> bool:
        """Whether the sender of ``chan`` defers its looks for waiting ticket holders."""
        return bool(self.how.get(chan, 0) & DEFER)

    def credits(self, chan: str) -> bool:
        """Whether the sender of ``chan`` keeps credits, and a cursor of them in its poll."""
        return bool(self.how.get(chan, 0) & CREDITS)

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
        how = self.how.get(chan, 0)
        names = [n for n, bit in HOW_NAMES if how & bit]
        out.append(f"HOW_{chan} = {how}  # {' | '.join(names) or 'nothing relaxed'} (runtime/state.py, Flagged words)")
        k = self.counted.get(chan)
        if k is not None:
            note = f"counted (codegen/counted.py): ticket k < COUNT is the value at {k.var} = {k.start} + k"
            out.append(f"COUNT_{chan} = {k.count}  # {note}")
            out.append(f"NEED_{chan} = {k.need}  # the tickets taken when the sender's last send would have found room")
        return out


def _how(
    plan: Plan, ch: ChannelDef, lone: frozenset[tuple[str, str]], tickets: frozenset[str], clean: _Cleanliness
) -> int:
    """The HOW bits of channel ``ch`` (the module's docstring)."""
    senders = [t for t in plan.tasks if ch.name in clean.effects[t.name].sends]
    receivers = [t for t in plan.tasks if ch.name in clean.effects[t.name].recvs]
    if not senders or not receivers or not RELAXED:
        return 0
    how = 0
    if not any(ch.name in e.closes for e in clean.effects.values()):
        how |= OPEN  # (the effects are each task's, its callees' included)
    if ("SEND", ch.name) in lone and ch.elem not in ir.FLOATS and clean.before_last(senders[0], "SEND", ch.name):
        how |= FLAGGED
        # (a group's task is polled by its pinned warp, whose poll ends look at nothing)
        if clean.only_sends(senders[0], ch.name) and ch.capacity > 1 and senders[0].group is None:
            how |= CREDITS
            if ch.name in tickets:
                how |= DEFER
    if all(clean.before_last(t, "RECV", ch.name) for t in receivers):
        how |= QUIET_FREE
    # an end whose other end writes the sequence relaxed acquires nothing by reading it; where it
    # also reads nothing another task writes, no line of its L1 can be stale: it reads relaxed
    if how & FLAGGED and all(clean.reads_nothing_written(t) for t in receivers):
        how |= CALM_RECV
    if how & QUIET_FREE and all(clean.reads_nothing_written(t) for t in senders):
        how |= CALM_SEND
    return how


class _Cleanliness:
    """Whether a task touches, up to its last statement with an operation on a channel end,
    nothing that another task must see ordered: no buffer write or atomic, no shared-scalar
    update, and reads only of buffers and scalars that no task writes (its callees too)."""

    def __init__(self, plan: Plan, effects: dict[str, Effects]) -> None:
        self.plan = plan
        self.effects = effects
        self.written = {b for e in effects.values() for b in (*e.writes, *e.updates, *e.shared_writes)}
        self.fns = transitive_effects(plan.functions, {})

    def _clean(self, eff: Effects) -> bool:
        if eff.writes or eff.updates or eff.shared_writes:
            return False
        if (eff.reads | eff.shared_reads) & self.written:
            return False
        return all(self._clean(self.fns[c]) for c in eff.calls if c in self.fns)

    def reads_nothing_written(self, t: TaskDef) -> bool:
        """Whether task ``t`` (its callees too) reads no buffer or shared scalar that a task writes."""
        eff = self.effects[t.name]
        return not ((eff.reads | eff.shared_reads) & self.written)

    def only_sends(self, t: TaskDef, chan: str) -> bool:
        """Whether every await of task ``t`` is a send of ``chan`` by itself in the task's body
        and it calls no fn (it awaits nothing that could order a close of ``chan`` before a send)."""
        eff = self.effects[t.name]
        if eff.calls or eff.recvs or eff.waits:
            return False
        return not any(
            isinstance(st, ir.Select | ir.ForAwait) or (isinstance(st, ir.AwaitS) and _alone_op(st) != ("SEND", chan))
            for st in stmts_in(t.body.body)
        )

    def before_last(self, t: TaskDef, side: str, chan: str) -> bool:
        body = t.body.body
        ops = [i for i, st in enumerate(body) if any((side, chan) in all_ops(s) for s in stmts_in((st,)))]
        if not ops:  # its operations are in a callee's body: not looked into, so not clean
            return False
        last = ops[-1]
        instance = ((t.var, t.start, t.stop),) if t.var is not None else None
        return self._clean(direct_effects(replace(t.body, body=body[: last + 1]), instance))
