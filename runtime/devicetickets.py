"""Device helpers for a channel whose receives take tickets (runtime/state.py, Tickets): a
receive's ticket and its wait, and the sender's look for waiting holders (each ticket's word
in ``CTW``). The slots themselves are devicechan.py's; devicesync.py re-exports these for the
generated code (``dsync``).
"""

from __future__ import annotations

from numba import int32, int64

from gasync.runtime import linked
from gasync.runtime.devicechan import CALM_RECV, PREREAD, RECV_NONE, SEQ_MASK, _take, seq_of
from gasync.runtime.devicelib import ld, wake
from gasync.runtime.order import add, exch, fence_sc, ld_acquire, sub
from gasync.runtime.state import SLOT_WORDS
from gasync.runtime.words import CH_CHECKED, CH_REGISTERED, HEAD, TAIL


@linked.device
def look_for_holders(sched, qmask, chan, c):  # type: ignore[no-untyped-def]
    """A deferring sender's look at the tickets it sent since its last look (CHECKED to TAIL):
    wake each holder that waits (state.py, Flagged words, credits, deferred looks)."""
    lo = chan.CHHT[c, CH_CHECKED]
    hi = chan.CHHT[c, TAIL]
    if lo == hi:
        return
    chan.CHHT[c, CH_CHECKED] = hi
    fence_sc()  # the run's values are out before the look (a holder: count, write, fence, look)
    if ld(chan.CHHT, (c, CH_REGISTERED)) != 0:
        wake_holders(sched, qmask, chan, c, lo, hi)


@linked.device
def wake_holders(sched, qmask, chan, c, lo, hi):  # type: ignore[no-untyped-def]
    """Wake each holder of a ticket in [lo, hi) that waits (after the looker's fence.sc, or
    after a close: then every ticket no send took)."""
    for t in range(lo, hi):
        holder = exch(chan.CTW, (c, t % chan.CTW.shape[1]), int32(0))
        if holder > 0:
            sub(chan.CHHT, (c, CH_REGISTERED), int64(1))
            wake(sched, qmask, holder - 1)


@linked.device
def chan_take_ticket(chan, c, cap, data, out, k, t, bell, how, ring):  # type: ignore[no-untyped-def]
    """Ticket ``t``'s receive (runtime/state.py, Tickets): RECV_TOOK if its value is there,
    else RECV_NONE."""
    if t & PREREAD:  # its value was read beside the sequence, which was seen
        return _take(chan, c, cap, data, out, k, t, bell, how, ring, False)
    if seq_of(chan, c, t % cap, how & CALM_RECV) == 2 * t + 1:  # pairs with the publish
        return _take(chan, c, cap, data, out, k, t, bell, how, ring, False)
    return RECV_NONE


@linked.device
def ticket_wait(chan, waiton, c, cap, t, inst, r):  # type: ignore[no-untyped-def]
    """Ticket ``t``'s holder ``inst`` waits: it writes itself into the ticket's table word,
    then looks at the slot again (True: the value is there, take it now)."""
    waiton[inst] = r + 1
    add(chan.CHHT, (c, CH_REGISTERED), int64(1))  # before the word: a sender that sees the word sees it
    exch(chan.CTW, (c, t % chan.CTW.shape[1]), int32(inst + 1))
    fence_sc()  # the exchange is out before the second look (the sender: publish, fence, exchange)
    return (ld_acquire(chan.CSEQ, (c, (t % cap) * SLOT_WORDS)) & SEQ_MASK) == 2 * t + 1


@linked.device
def ticket_ended(chan, c, t):  # type: ignore[no-untyped-def]
    """Whether ticket ``t`` will never be served: its channel is closed and no send took it."""
    return ld_acquire(chan.CHCLOSED, c) != 0 and t >= ld(chan.CHHT, (c, TAIL))


@linked.device
def wake_tickets(sched, qmask, chan, c):  # type: ignore[no-untyped-def]
    """After a close: wake the holders of every ticket no send took (they see the end)."""
    wake_holders(sched, qmask, chan, c, ld(chan.CHHT, (c, TAIL)), ld(chan.CHHT, (c, HEAD)))
