"""Device helpers for channels: bounded rings of slots with a sequence number each, by shape
(codegen/shapes.py: lone ends take tickets by store, bell ends wait on a bit in their slot's
word, a crowd of receivers takes tickets). runtime/state.py, Channels, Tickets and No lost
wake, gives each protocol; devicesync.py re-exports these for the generated code (``dsync``).
"""

from __future__ import annotations

from numba import cuda, int32, int64

from gasync.runtime.devicelib import ld, wake
from gasync.runtime.order import aor, cas, exch, exch_release, fence_sc, ld_acquire, st_release
from gasync.runtime.state import HEAD, TAIL

# ---- channels -----------------------------------------------------------------


# A slot's sequence number is 2t while it waits for the value of send ticket t, and
# 2t + 1 while that value waits for receive ticket t (doubling keeps the two apart
# even with a capacity of one, where t and t + capacity would meet). Bit WAIT_BIT of the
# word says a bell end waits for the slot's next write (codegen/shapes.py): every read of
# a sequence masks it off, and the writer of a bell end's slot exchanges the word, so the
# bit comes back to it and it wakes that end.
WAIT_BIT = 1 << 62
SEQ_MASK = WAIT_BIT - 1
RECV_NONE = 0
RECV_TOOK = 1
RECV_RING = 2  # took it, and the bell sender waits for the slot it freed: wake it
SEND_RING = 3  # sent, and the bell receiver waits for this value: wake it
SEND_WAKE = 16  # sent, and the holder of its ticket waits: SEND_WAKE + that instance


SEND_FULL = 0
SEND_DONE = 1
SEND_CLOSED = 2  # the value is dropped


@cuda.jit(device=True)
def chan_try_send(chan, c, cap, data, value, lone, bell, tickets):  # type: ignore[no-untyped-def]
    """Append ``value`` to channel ``c`` if it is open and has room: SEND_DONE if it did,
    SEND_CLOSED if the channel is closed (the value is dropped), SEND_FULL if it has no room.
    ``chan`` is G.chan (state.Channels), ``data`` the channel's value slots in it (CHI or CHF).

    The closed flag is read beside the tail (both loads in flight at once: no round trip of
    its own), relaxed: a sender reads nothing the closer wrote. ``lone``: the program has
    one sending instance for ``c`` (state.py, Channels), so the tail is its own: a store
    takes the ticket, no ``cas``. ``bell``: the receiving end is a bell end (SEND_RING
    when it waits for this value). ``tickets``: the receivers take tickets (SEND_WAKE +
    the holder of this value's ticket, when it waits)."""
    while True:
        pos = ld(chan.CHHT, (c, TAIL))
        if ld(chan.CHCLOSED, c) != 0:
            return SEND_CLOSED
        seq = ld_acquire(chan.CSEQ, (c, pos % cap)) & SEQ_MASK  # pairs with the receiver's release
        if seq == 2 * pos:
            if lone:
                return chan_put(chan, c, cap, data, value, pos, bell, tickets)
            if cas(chan.CHHT, (c, TAIL), pos, pos + 1) == pos:
                return _put(chan, c, cap, data, value, pos, bell, tickets)
        elif seq < 2 * pos:
            return SEND_FULL


@cuda.jit(device=True)
def chan_put(chan, c, cap, data, value, pos, bell, tickets):  # type: ignore[no-untyped-def]
    """The lone sender's send with ticket ``pos``, whose slot it saw free (an acquire of its
    sequence): it takes the ticket with a store."""
    chan.CHHT[c, TAIL] = pos + 1
    return _put(chan, c, cap, data, value, pos, bell, tickets)


@cuda.jit(device=True)
def _put(chan, c, cap, data, value, pos, bell, tickets):  # type: ignore[no-untyped-def]
    data[c, pos % cap] = value
    if bell:
        # one RMW both ends meet on (the waiting receiver's bit): the release pairs with
        # the receiver's acquire of the sequence
        if exch_release(chan.CSEQ, (c, pos % cap), int64(2 * pos + 1)) & WAIT_BIT:
            return SEND_RING
        return SEND_DONE
    st_release(chan.CSEQ, (c, pos % cap), 2 * pos + 1)  # pairs with the receiver's acquire
    # the value is out before the caller looks for waiting receivers: a receiver registers
    # (RMWs it waits for) and then looks again, so one of the two sees the other (a release
    # alone would let the look pass the store)
    fence_sc()
    if tickets:  # the holder of ticket pos, if it waits (state.py, Tickets)
        holder = exch(chan.CTW, (c, pos % chan.CTW.shape[1]), int32(0))
        if holder > 0:
            return SEND_WAKE + holder - 1
    return SEND_DONE


@cuda.jit(device=True)
def chan_try_recv(chan, c, cap, data, out, k, lone, bell):  # type: ignore[no-untyped-def]
    """Take the oldest value of channel ``c`` (from its slots ``data``, CHI or CHF) into
    ``out[k]``: RECV_TOOK (or RECV_RING) if there was one, else RECV_NONE. ``lone``: one
    receiving instance, whose own the head is (a store takes the ticket, no ``cas``).
    ``bell``: the sending end is a bell end (RECV_RING when it waits for the slot freed)."""
    while True:
        pos = ld(chan.CHHT, (c, HEAD))
        seq = ld_acquire(chan.CSEQ, (c, pos % cap)) & SEQ_MASK  # pairs with the sender's release
        if seq == 2 * pos + 1:
            if lone:
                return chan_take(chan, c, cap, data, out, k, pos, bell)
            if cas(chan.CHHT, (c, HEAD), pos, pos + 1) == pos:
                return _take(chan, c, cap, data, out, k, pos, bell)
        elif seq < 2 * pos + 1:
            return RECV_NONE


@cuda.jit(device=True)
def chan_take(chan, c, cap, data, out, k, pos, bell):  # type: ignore[no-untyped-def]
    """The lone receiver's receive of ticket ``pos``, whose value it saw there (an acquire of
    its sequence): it takes the ticket with a store."""
    chan.CHHT[c, HEAD] = pos + 1
    return _take(chan, c, cap, data, out, k, pos, bell)


@cuda.jit(device=True)
def _take(chan, c, cap, data, out, k, pos, bell):  # type: ignore[no-untyped-def]
    out[k] = ld(data, (c, pos % cap))
    if bell:  # (as in _put: the waiting sender's bit comes back with the exchange)
        if exch_release(chan.CSEQ, (c, pos % cap), int64(2 * (pos + cap))) & WAIT_BIT:
            return RECV_RING
        return RECV_TOOK
    st_release(chan.CSEQ, (c, pos % cap), 2 * (pos + cap))  # frees the slot for the sender's acquire
    fence_sc()  # the free is out before the caller looks for waiting senders (as in _put)
    return RECV_TOOK


@cuda.jit(device=True)
def chan_take_ticket(chan, c, cap, data, out, k, t, bell):  # type: ignore[no-untyped-def]
    """Ticket ``t``'s receive (runtime/state.py, Tickets): RECV_TOOK (or RECV_RING) if its
    value is there, else RECV_NONE."""
    if (ld_acquire(chan.CSEQ, (c, t % cap)) & SEQ_MASK) == 2 * t + 1:  # pairs with the publish
        return _take(chan, c, cap, data, out, k, t, bell)
    return RECV_NONE


@cuda.jit(device=True)
def ticket_wait(chan, waiton, c, cap, t, inst, r):  # type: ignore[no-untyped-def]
    """Ticket ``t``'s holder ``inst`` waits: it writes itself into the ticket's table word,
    then looks at the slot again (True: the value is there, take it now)."""
    waiton[inst] = r + 1
    exch(chan.CTW, (c, t % chan.CTW.shape[1]), int32(inst + 1))
    fence_sc()  # the exchange is out before the second look (the sender: publish, fence, exchange)
    return (ld_acquire(chan.CSEQ, (c, t % cap)) & SEQ_MASK) == 2 * t + 1


@cuda.jit(device=True)
def ticket_ended(chan, c, t):  # type: ignore[no-untyped-def]
    """Whether ticket ``t`` will never be served: its channel is closed and no send took it."""
    return ld_acquire(chan.CHCLOSED, c) != 0 and t >= ld(chan.CHHT, (c, TAIL))


@cuda.jit(device=True)
def wake_tickets(sched, qmask, chan, c):  # type: ignore[no-untyped-def]
    """After a close: wake the holders of every ticket no send took (they see the end)."""
    tail = ld(chan.CHHT, (c, TAIL))
    head = ld(chan.CHHT, (c, HEAD))
    for t in range(tail, head):
        holder = exch(chan.CTW, (c, t % chan.CTW.shape[1]), int32(0))
        if holder > 0:
            wake(sched, qmask, holder - 1)


@cuda.jit(device=True)
def ring_me(chan, waiton, c, cap, side, inst, r):  # type: ignore[no-untyped-def]
    """A bell end's registration: ``inst`` waits for the next write of the slot of its own
    ticket (side 0: a receive waits for the value, 1: a send for the free slot). It sets
    WAIT_BIT with an RMW whose old value is its second look: True if the slot was already
    ready (the caller tries again at once), else the other end's exchange will return the
    bit and wake it. (Both ends meet on one word: nothing can pass in between.)"""
    waiton[inst] = r + 1
    t = ld(chan.CHHT, (c, HEAD if side == 0 else TAIL))  # its own ticket word
    old = aor(chan.CSEQ, (c, t % cap), int64(WAIT_BIT)) & SEQ_MASK
    return old == 2 * t + 1 - side


@cuda.jit(device=True)
def chan_can_recv(chan, c, cap):  # type: ignore[no-untyped-def]
    """Whether channel ``c`` holds a value for the next receive (a hint: it may change)."""
    pos = ld(chan.CHHT, (c, HEAD))
    return (ld(chan.CSEQ, (c, pos % cap)) & SEQ_MASK) == 2 * pos + 1


@cuda.jit(device=True)
def chan_can_send(chan, c, cap):  # type: ignore[no-untyped-def]
    """Whether channel ``c`` has a free slot for the next send (a hint: it may change)."""
    pos = ld(chan.CHHT, (c, TAIL))
    return (ld(chan.CSEQ, (c, pos % cap)) & SEQ_MASK) == 2 * pos


@cuda.jit(device=True)
def chan_closed(closed, c):  # type: ignore[no-untyped-def]
    """Whether channel ``c`` is closed; the acquire pairs with ``chan_close``'s release."""
    return ld_acquire(closed, c) != 0
