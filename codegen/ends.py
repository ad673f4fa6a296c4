"""A poll's registers for its channel ends: late rings and early looks.

*Late rings* (``late_rings``): where the other end of a channel operation is a bell end, the
exchange of its slot leaves the old word in a local of the poll (``ring_<side>_<c>``, one int64
in a register), whose WAIT_BIT is tested where the result has long arrived (``ring_flush``).
*Early looks* (``early_looks``): a lone sender of an open channel that also receives loads its
next send's slot as a receive completes (``look_lines``, into ``seen_<c>``), and the send
takes that look (runtime/devicechan.py, ``chan_look``). :class:`ChannelEnds` holds both for
the block emitter (codegen/blocks.py); codegen/futures.py calls them.
"""

from __future__ import annotations

from gasync.codegen import groups
from gasync.codegen.machine import Emitter, Shared
from gasync.codegen.shapes import all_ops
from gasync.planner import ir
from gasync.planner.walk import stmts_in


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


class ChannelEnds(Emitter):
    """Late rings and early looks of the function being emitted (``rings``, ``looks``: a poll
    sets them; a plain function has none)."""

    rings: tuple[tuple[str, str], ...]
    looks: tuple[str, ...]

    def end_locals(self) -> list[str]:
        """The poll's declarations of its ring words and looks, at its start."""
        out = []
        for side, c in self.rings:  # one int64 (a register, once inlined): ring_flush
            word = self.ring_word(side, c)
            out += [f"{word} = cuda.local.array(1, int64)  # late ring: the last exchange's old word", f"{word}[0] = 0"]
        for c in self.looks:  # one int64 (a register): look_lines
            out.append(f"seen_{c} = int64(-1)  # channel {c}'s early look at its next send's slot (-1: none)")
        return out

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
        and ended with ticket ``got`` (runtime/devicechan.py, spin_look)."""
        return f"seen_{c} = dsync.spin_look(G.chan, CH_{c}, CAP_{c}, {got})  # early look, taken by the wait"

    def seen_arg(self, c: str) -> str:
        """What a send on ``c`` passes as its early look (-1: none)."""
        return f"seen_{c}" if c in self.looks else "int64(-1)"

    def turn_flush(self, body: tuple[ir.Stmt, ...]) -> list[str]:
        """A loop's turn: the late rings of the ends that no operation in the loop's ``body``
        rings (those ring again in each turn, and flush their own word first)."""
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
            out += [
                f"if {word}[0] & dsync.WAIT_BIT:  # channel {c}'s {side.lower()} end waits for this poll: wake it",
                f"    {word}[0] = 0",
                f"    {self.shared.wake(f'BELL_{side}_{c}', 'inst')}",
            ]
        return out
