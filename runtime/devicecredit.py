"""Device helpers for a crediting sender (codegen/shapes.py ``CREDITS``; runtime/state.py,
Flagged words, credits, deferred looks): its sends below the credit read nothing, its
cursor keeps the tail and credit in registers for a poll, and a credit read takes up to
CREDIT_RUN (state.py) slots at once (with the deferred look for waiting ticket holders). The ring
itself and the puts are devicechan.py's; devicesync.py re-exports these for the generated
code (``dsync``).
"""

from __future__ import annotations

from numba import int64

from gasync.runtime import linked
from gasync.runtime.devicechan import (
    DEFER,
    NO_FREE,
    QUIET_FREE,
    SEND_CLOSED,
    SEND_FULL,
    SEQ_MASK,
    chan_put,
)
from gasync.runtime.devicelib import ld
from gasync.runtime.devicetickets import wake_holders
from gasync.runtime.order import fence_acq_rel, fence_sc
from gasync.runtime.state import SLOT_WORDS
from gasync.runtime.words import CH_CHECKED, CH_CREDIT, CH_REGISTERED, TAIL


@linked.device
def credited_send(sched, qmask, chan, c, cap, value, bell, tickets, how, cur, ring):  # type: ignore[no-untyped-def]
    """A crediting sender's send (how & CREDITS): below its credit the slot is known free and
    the channel was open when it was last read, so the send reads nothing (state.py, Credits).
    ``cur`` is the poll's cursor, two int64 in registers: the sender's tail and credit (cur[0]
    < 0: not read yet this poll; both words are this instance's alone, so a copy stays true
    until its poll returns, its own close or an in-place put: those reset it)."""
    pos = cur[0]
    if pos < 0:
        pos = chan.CHHT[c, TAIL]
        cur[1] = chan.CHHT[c, CH_CREDIT]
    if pos >= cur[1]:
        free = _credit(sched, qmask, chan, c, cap, pos, how)
        if free <= 0:
            cur[0] = pos
            return SEND_CLOSED if free < 0 else SEND_FULL
        cur[1] = pos + free
        chan.CHHT[c, CH_CREDIT] = pos + free
    cur[0] = pos + 1
    return chan_put(chan, c, cap, chan.CHI, value, pos, bell, tickets, how, ring, NO_FREE, ring)


@linked.device
def put_credited(chan, c, cap, value, tickets, how, cur):  # type: ignore[no-untyped-def]
    """A send of a row of sends below the credit (codegen/sendloops.py, _send_run): the caller saw
    ``cur[0] < cur[1]``, so the slot is free and nothing is read; a deferring sender's
    receivers are looked for later, so there is nothing to wake (credited_send's fast path)."""
    pos = cur[0]
    cur[0] = pos + 1
    chan_put(chan, c, cap, chan.CHI, value, pos, False, tickets, how, cur, NO_FREE, cur)  # (no bell: no ring word)


@linked.device
def credited_put(chan, c, cap, data, value, pos, bell, tickets, how, cur, ring):  # type: ignore[no-untyped-def]
    """chan_put for a crediting sender that waited in place for ticket ``pos``: its cursor is
    read again at its next send."""
    cur[0] = -1
    return chan_put(chan, c, cap, data, value, pos, bell, tickets, how, ring, NO_FREE, ring)


@linked.device
def forget_credit(chan, c):  # type: ignore[no-untyped-def]
    """At a close: the crediting sender's next send reads the closed flag (if the sender closed
    it, its next sends are dropped; a close by another task is concurrent with them anyway)."""
    chan.CHHT[c, CH_CREDIT] = 0


@linked.device
def _credit(sched, qmask, chan, c, cap, pos, how):  # type: ignore[no-untyped-def]
    """How many slots from ticket ``pos`` on are free, in a row (0: none), or -1 if the
    channel is closed: CREDIT_RUN sequences read at once (one round trip: no load waits for
    another), then the closed flag after them. Past the capacity a read meets a slot again,
    whose sequence is then at most ``2(pos + k - cap)``: the count stops at the capacity.
    A deferring sender (DEFER) makes its look for waiting holders of the tickets it sent
    since its last look here: one ``fence.sc`` serves both (it orders the frees' acquire
    too), and ``REGISTERED`` is read beside the closed flag."""
    s = chan.CSEQ
    s0 = ld(s, (c, (pos % cap) * SLOT_WORDS))
    s1 = ld(s, (c, ((pos + 1) % cap) * SLOT_WORDS))
    s2 = ld(s, (c, ((pos + 2) % cap) * SLOT_WORDS))
    s3 = ld(s, (c, ((pos + 3) % cap) * SLOT_WORDS))
    s4 = ld(s, (c, ((pos + 4) % cap) * SLOT_WORDS))
    s5 = ld(s, (c, ((pos + 5) % cap) * SLOT_WORDS))
    s6 = ld(s, (c, ((pos + 6) % cap) * SLOT_WORDS))
    s7 = ld(s, (c, ((pos + 7) % cap) * SLOT_WORDS))
    lo = chan.CHHT[c, CH_CHECKED]
    if how & DEFER and lo != pos:
        chan.CHHT[c, CH_CHECKED] = pos
        # the values sent up to pos are out before the look (a holder: count, write, fence,
        # look); and, a fortiori, each receiver's release of its free is acquired
        fence_sc()
        closed = ld(chan.CHCLOSED, c)
        if ld(chan.CHHT, (c, CH_REGISTERED)) != 0:
            wake_holders(sched, qmask, chan, c, lo, pos)
    else:
        if not how & QUIET_FREE:
            # pairs with each receiver's release of its free: what came before it (a close) is
            # seen by the loads after this fence
            fence_acq_rel()
        closed = ld(chan.CHCLOSED, c)
    if closed != 0:
        return int64(-1)
    free = int64(0)
    for k, seq in enumerate((s0, s1, s2, s3, s4, s5, s6, s7)):
        if free == k and (seq & SEQ_MASK) == 2 * (pos + k):
            free += 1
    return free
