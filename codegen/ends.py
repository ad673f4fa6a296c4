"""A poll's registers for its channel ends: late rings, early looks, received and sent
values, and deferred frees.

*Late rings* (``late_rings``): where the other end of a channel operation is a bell end, the
exchange of its slot leaves the old word in a local of the poll (``ring_<side>_<c>``, one int64
in a register), whose WAIT_BIT is tested where the result has long arrived (``ring_flush``).
*Early looks* (``early_looks``): a lone sender of an open channel that also receives loads its
next send's slot as a receive completes (``look_lines``, into ``seen_<c>``), and the send
takes that look (runtime/devicechan.py, ``chan_look``).
*Values* (``recv_values``, ``kept_sends``): a lone receive takes its value into a register of
the poll (``rv_<c>``), and a send keeps its value in one (``sv_<c>``) for its attempts.
*Deferred frees* (``deferred_frees``): where a send comes next, that receive leaves its slot's
free to that send, which makes it right before its publish (``owed_arg``); after the send's
attempt, and at every ring flush, a free still owed is made (``free_lines``).
:class:`ChannelEnds` holds them for the block emitter (codegen/blocks.py); codegen/futures.py
and codegen/chanpolls.py call them.
"""

from __future__ import annotations

from gasync.codegen import groups
from gasync.codegen.machine import Emitter, Shared
from gasync.codegen.shapes import all_ops
from gasync.planner import ir
from gasync.planner.walk import LOOPS, children, stmts_in


def late_rings(shared: Shared, body: tuple[ir.Stmt, ...]) -> tuple[tuple[str, str], ...]:
    """(the end to wake, channel) for each channel operation of ``body`` (not of the async
    blocks inside it, which are polls of their own) whose other end is a bell end: the
    exchange of its slot tells whether that end waits (ChannelEnds.ring_flush)."""
    out: dict[tuple[str, str], None] = {}
    for st in stmts_in(body, into_futures=False):
        for side, c in all_ops(st):
            other = "RECV" if side == "SEND" else "SEND"
            if shared.is_bell(other, c):
                out[(other, c)] = None
    return tuple(out)


EARLY_LOOKS = True  # False: every send loads its slot's sequence itself (what bench/NOTES.md measured against)
# a lone receive's value lands in a register of its poll (``rv_<c>``), not in the executor's
# scratch row, which the poll then loads back (False: the scratch row; a stage of bench/NOTES.md)
RECV_IN_REGISTER = True
# a lone receive whose sender is a bell end and whose next await is a send leaves its slot's
# free to that send, made right before its publish (False: the take frees it; a stage of bench/NOTES.md)
DEFER_FREES = True


def early_looks(shared: Shared, body: tuple[ir.Stmt, ...]) -> tuple[str, ...]:
    """The channels whose next send's slot a poll of ``body`` looks at as it completes a
    receive (``ChannelEnds.look_lines``): each it sends on whose sender looks early
    (``Shared.looks_early``), where it receives on a channel too. A pipeline stage's send
    comes after its receive, and the receive's acquire has seen the frees that came before
    the value (B2's two tasks: the look finds the slot free)."""
    if not EARLY_LOOKS:
        return ()
    sends: dict[str, None] = {}
    receives = False
    for st in stmts_in(body, into_futures=False):
        for side, c in all_ops(st):
            if side == "SEND" and shared.looks_early(c):
                sends[c] = None
            receives = receives or (side == "RECV" and not groups.is_local(c))
    return tuple(sends) if receives else ()


def kept_names(c: str) -> tuple[str, str]:
    """The two registers of channel ``c``'s kept send (kept_sends): its value, and whether it
    holds it (``svl_``/``svlok_`` and the item's name for a group's local channel)."""
    return (f"svl_{groups.item(c)}", f"svlok_{groups.item(c)}") if groups.is_local(c) else (f"sv_{c}", f"svok_{c}")


def send_counts(body: tuple[ir.Stmt, ...]) -> dict[str, int]:
    """How many sends on each channel the statements of ``body`` make (not counting async blocks')."""
    count: dict[str, int] = {}
    for st in stmts_in(body, into_futures=False):
        for side, c in all_ops(st):
            if side == "SEND":
                count[c] = count.get(c, 0) + 1
    return count


def kept_sends(
    shared: Shared, body: tuple[ir.Stmt, ...], cursors: frozenset[str], keep: bool, warp: bool = False
) -> tuple[str, ...]:
    """The channels whose send's value a poll of ``body`` keeps in a register from the send's
    start to its attempts (``sv_<c>``, ``svok_<c>``; ``keep``: chanpolls.SEND_VALUE_KEPT): a
    crediting sender's (``cursors``), and each integer channel it sends on once, global, or
    local in a poll on all lanes (``warp``: each lane computed the value; no lane reads back
    the frame word every lane stored, so the lanes need not meet between)."""
    if not keep:
        return ()
    count = send_counts(body)
    once = (
        c for c, n in count.items()
        if n == 1 and (warp or not groups.is_local(c)) and shared.counted(c) is None
    )  # fmt: skip
    ints = (c for c in once if shared.plan.channel(c).elem not in ir.FLOATS)
    return tuple(dict.fromkeys((*sorted(cursors), *ints)))


def restored_sends(
    kept: tuple[str, ...], body: tuple[ir.Stmt, ...], children: dict[int, tuple[str, str]]
) -> dict[str, tuple[int, str]]:
    """Of the kept sends (kept_sends), those made once and awaited by themselves
    (``c.send(v).await``, an await that may suspend): channel -> (that await's state, the send's
    frame word ``ci``). Such a value lives in its register alone while the poll runs: into the
    frame at the suspend exit of that state, back at its resume, and no frame store as the send
    starts nor frame load and select at its attempts (bench/NOTES.md, thirty-seventh session:
    the path from a receive to the send after it is a hand-off's critical path). The caller
    passes a poll on all lanes' local channels alone: run 97 measured a group's hand-off -2.5%
    with it, and B2 across SMs (a global channel's) +5%, not yet explained."""
    count = send_counts(body)
    direct = {
        st.future.chan: st.site
        for st in stmts_in(body, into_futures=False)
        if isinstance(st, ir.AwaitS) and st.suspends and isinstance(st.future, ir.Send)
    }
    return {c: (site, children[site][0]) for c, site in direct.items() if c in kept and count.get(c) == 1}


def kept_words(restored: dict[str, tuple[int, str]], state: int, restore: bool) -> list[str]:
    """A restored send's value (restored_sends) from its frame word at a resume of ``state``
    (``restore``), or into it at a suspend to ``state``."""
    sends = [(kept_names(c)[0], ci) for c, (site, ci) in restored.items() if site == state]
    return [f"{sv} = FI[fb_i + {ci} + 1]" if restore else f"FI[fb_i + {ci} + 1] = {sv}" for sv, ci in sends]


def _lone_recv(shared: Shared, c: str) -> bool:
    """Whether channel ``c``'s receives are a lone end's plain receives (no ticket, no count)."""
    s = shared.shapes
    lone = s is not None and s.is_lone("RECV", c)
    return lone and not groups.is_local(c) and not shared.has_tickets(c) and shared.counted(c) is None


def recv_values(shared: Shared, body: tuple[ir.Stmt, ...]) -> tuple[str, ...]:
    """The channels whose receives in ``body`` take their value into a register of the poll
    (``rv_<c>``; the wait in place reads a flagged value's halves into it too)."""
    if not RECV_IN_REGISTER:
        return ()
    out = {c: None for st in stmts_in(body, into_futures=False) for side, c in all_ops(st) if side == "RECV"}
    return tuple(c for c in out if _lone_recv(shared, c))


def _light(s: ir.Stmt) -> bool:
    return isinstance(s, ir.Let | ir.Store | ir.Eval)


def _sends_next(shared: Shared, stmts: tuple[ir.Stmt, ...], c: str) -> int | None:
    """The await site of the first await of ``stmts`` where it comes after light statements
    alone (no loop, no branch) and is a send on a global channel other than ``c`` (not a
    crediting sender's: its put makes no free first)."""
    for s in stmts:
        if isinstance(s, ir.AwaitS):
            f = s.future
            plain = isinstance(f, ir.Send) and not groups.is_local(f.chan) and not shared.credits(f.chan)
            return s.site if plain and f.chan != c else None
        if not _light(s):
            return None
    return None


def deferred_frees(shared: Shared, body: tuple[ir.Stmt, ...]) -> tuple[dict[int, str], dict[int, str]]:
    """The await sites of ``body``'s receives that leave their slot's free to the send that
    follows (runtime/state.py, Deferred frees), and those sends' sites, each with the channel
    received on: a lone end's receive of a channel whose sender is a bell end, whose next await
    is a send on another channel after light statements only (in the same statement list, or
    around the loop whose body it ends)."""
    out: dict[int, str] = {}
    riders: dict[int, str] = {}
    if not DEFER_FREES:
        return out, riders

    def walk(stmts: tuple[ir.Stmt, ...], loop: bool) -> None:
        for i, s in enumerate(stmts):
            f = s.future if isinstance(s, ir.AwaitS) else None
            if isinstance(f, ir.Recv) and _lone_recv(shared, f.chan) and shared.is_bell("SEND", f.chan):
                rest = stmts[i + 1 :]
                if all(_light(x) for x in rest) and loop:
                    rest += stmts[:i]  # its next await is the loop's next turn's first
                send = _sends_next(shared, rest, f.chan)
                if send is not None and riders.get(send, f.chan) == f.chan:
                    out[s.site] = riders[send] = f.chan
            for inner in children(s, into_futures=False):  # (a parallel loop's body awaits nothing)
                walk(inner, isinstance(s, LOOPS))

    walk(body, False)
    return out, riders


class ChannelEnds(Emitter):
    """Late rings and early looks of the function being emitted (``rings``, ``looks``: a poll
    sets them; a plain function has none)."""

    rings: tuple[tuple[str, str], ...]
    looks: tuple[str, ...]
    kept: tuple[str, ...]  # kept_sends
    values: tuple[str, ...]  # recv_values
    frees: dict[int, str]  # deferred_frees: the receives' await sites, with their channels
    riders: dict[int, str]  # ... and the sends' that make those frees

    @property
    def owes(self) -> tuple[str, ...]:
        """The channels whose slots this poll's receives leave to its sends to free."""
        return tuple(dict.fromkeys(self.frees.values()))

    def end_locals(self) -> list[str]:
        """The poll's declarations of its ring words, looks, received values and deferred
        frees, at its start."""
        out = []
        for side, c in self.rings:  # one int64 (a register, once inlined): ring_flush
            word = self.ring_word(side, c)
            if side == "SEND" and c in self.owes:  # and the free this poll owes channel c (free_lines)
                out += [f"{word} = cuda.local.array(2, int64)  # late ring, and a free owed (free_lines)"]
                out += [f"{word}[0] = 0", f"{word}[1] = 0"]
            else:
                out += [f"{word} = cuda.local.array(1, int64)  # late ring: the last exchange's old word"]
                out += [f"{word}[0] = 0"]
        for c in self.looks:  # one int64 (a register): look_lines
            out.append(f"seen_{c} = int64(-1)  # channel {c}'s early look at its next send's slot (-1: none)")
        for c in self.values:  # (registers, once inlined)
            if self.shared.plan.channel(c).elem in ir.FLOATS:
                out.append(f"rv_{c} = cuda.local.array(1, float64)  # channel {c}'s received value")
            else:  # and the early look its wait took in its turns (runtime/devicechan.py, spin_look)
                out.append(f"rv_{c} = cuda.local.array(2, int64)  # channel {c}'s received value, and a look")
        return out

    def free_lines(self, only: str | None = None) -> list[str]:
        """The slots this poll took and has not freed yet (runtime/state.py, Deferred frees;
        ``only``: channel ``only``'s): free them now. The take left one past its ticket in its
        ring's word 1; the exchange's old word lands in word 0, tested later (ring_flush)."""
        return [
            f"dsync.chan_free(G.chan, CH_{c}, CAP_{c}, HOW_{c}, {self.ring_word('SEND', c)})  # if still owed"
            for c in self.owes
            if only is None or c == only
        ]

    def owed_arg(self, c: str, site: int) -> str:
        """What the send on ``c`` at await ``site`` passes for the free it makes right before
        its publish (runtime/devicechan.py, free_first): that of the receive it follows, if any."""
        o = self.riders.get(site)
        if o is None:
            return f"dsync.NO_FREE, {self.ring_word('RECV', c)}"
        return f"(CH_{o}, CAP_{o}, HOW_{o}), {self.ring_word('SEND', o)}"

    def ring_word(self, side: str, c: str) -> str:
        """Where an exchange of channel ``c``'s slot leaves its old word when the other end
        (``side``) is a bell end: the poll's local ``ring_<side>_<c>``, one int64 in a register,
        which ``ring_flush`` tests later; else the scratch row, never written then."""
        if (side, c) not in self.rings:
            return "G.exec.SCRATCH_I"
        return f"ring_{side.lower()}_{c}"

    def look_lines(self) -> list[str]:
        """A receive is complete (or its slot is seen ready): look at each early-looking send's
        next slot now, the load in flight beside the receive's own (runtime/devicechan.py,
        chan_look), into the poll's local ``seen_<c>``, which that send takes."""
        return [
            f"seen_{c} = dsync.chan_look(G.chan, CH_{c}, CAP_{c})  # early look: its next send's slot"
            for c in self.looks
        ]

    def spin_look_line(self, c: str, got: str) -> str:
        """``look_lines``' line for ``c`` after a wait in place that took the look in its turns
        and left it in ``got[1]`` (runtime/devicechan.py, spin_look)."""
        return f"seen_{c} = dsync.spin_look(G.chan, CH_{c}, CAP_{c}, {got})  # early look, taken by the wait"

    def look_resets(self, only: str | None = None) -> list[str]:
        """Forget the early looks (``only``: channel ``only``'s): as a send on its channel is
        tried (a look serves one send), and as a receive whose free rides on the next send
        begins, so that its send finds either no look or one taken as that receive completed
        (runtime/devicechan.py, chan_try_send, which then trusts its tail)."""
        return [f"seen_{c} = int64(-1)" for c in self.looks if only is None or c == only]

    def seen_arg(self, c: str) -> str:
        """What a send on ``c`` passes as its early look (-1: none)."""
        return f"seen_{c}" if c in self.looks else "int64(-1)"

    def turn_flush(self, body: tuple[ir.Stmt, ...]) -> list[str]:
        """A loop's turn: the late rings of the ends that no operation in the loop's ``body``
        rings (those ring again in each turn, and flush their own word first)."""
        if not self.rings:  # (no walk of the loop's body: loops nested N deep walked N^2 statements)
            return []
        inside = late_rings(self.shared, body)
        return self.ring_flush(tuple(r for r in self.rings if r not in inside))

    def ring_flush(self, only: tuple[tuple[str, str], ...] | None = None) -> list[str]:
        """Wake each bell end whose bit an earlier exchange of this poll found set (``only``:
        those ends alone). A ring is late on purpose: tested where the exchange's result has
        long arrived (at the next operation of that end, before any wait, at a loop's turn and
        where the poll returns), not right after it, where the test would wait a round trip."""
        out = []
        for side, c in self.rings:
            if only is not None and (side, c) not in only:
                continue
            word = self.ring_word(side, c)
            out += self.free_lines(c) if side == "SEND" else []
            out += [
                f"if {word}[0] & dsync.WAIT_BIT:  # channel {c}'s {side.lower()} end waits for this poll: wake it",
                f"    {word}[0] = 0",
                f"    {self.shared.wake(f'BELL_{side}_{c}', 'inst')}",
            ]
        return out
