"""Device helpers for channels: bounded rings of slots with a sequence number each, by shape
(codegen/shapes.py: lone ends take tickets by store, bell ends wait on a bit in their slot's
word, a crowd of receivers takes tickets). runtime/state.py, Channels, Tickets and No lost
wake, gives each protocol; devicesync.py re-exports these for the generated code (``dsync``).
"""

from __future__ import annotations

from numba import int32, int64

from gasync.runtime import linked
from gasync.runtime.devicelib import ld
from gasync.runtime.order import (
    add,
    aor,
    cas,
    exch,
    exch_release,
    fence_acquire,
    fence_sc,
    ld_acquire,
    st_relaxed,
    st_release,
    sub,
)
from gasync.runtime.state import HALF_HI, HALF_LO, SLOT_WORDS
from gasync.runtime.words import CH_REGISTERED, HEAD, TAIL

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
SEND_WAKE = 16  # sent, and the holder of its ticket waits: SEND_WAKE + that instance


SEND_FULL = 0
SEND_DONE = 1
SEND_CLOSED = 2  # the value is dropped

# HOW_c, what a channel's ends need ordered (codegen/shapes.py computes it; runtime/state.py,
# Flagged words, credits, deferred looks, gives each protocol)
FLAGGED = 1  # the lone sender orders nothing before its sends: relaxed, tagged value halves
QUIET_FREE = 2  # nor do the receivers before their receives: relaxed frees
CREDITS = 4  # the flagged sender awaits only its sends: it reads the slots ahead, a run at a time
DEFER = 8  # ... and its receivers take tickets: it looks for waiting holders once per run
CALM_RECV = 16  # the receivers read a sequence relaxed: the sends are, and they read nothing written
CALM_SEND = 32  # the senders read a sequence relaxed: the frees are, and they read nothing written
OPEN = 64  # no task closes it: no end reads the closed flag
TAG_MASK = (1 << 31) - 1  # a flagged half's tag: its ticket's sequence 2t + 1, 31 bits
HALF = (1 << 32) - 1
PREREAD = 1 << 61  # on a receive's ticket: the wait in place already put its flagged value in out[k]


@linked.device
def seq_of(chan, c, slot, calm):  # type: ignore[no-untyped-def]
    """Slot ``slot``'s sequence, read as an acquire that pairs with the other end's release of
    it; relaxed where ``calm`` (HOW_c's CALM_RECV or CALM_SEND for this end: the other end's
    write is relaxed, so there is nothing to acquire, and this end reads nothing that another
    task writes, so no line of its SM's L1 can be stale): no invalidation of that L1."""
    at = (c, slot * SLOT_WORDS)
    return (ld(chan.CSEQ, at) if calm else ld_acquire(chan.CSEQ, at)) & SEQ_MASK


@linked.device
def chan_look(chan, c, cap):  # type: ignore[no-untyped-def]
    """The lone sender's early look at the sequence of its next send's slot (relaxed), which
    its poll takes as it completes a receive (codegen/futures.py, early looks): in flight
    beside the receive's own loads, not after them, when the send comes. A slot seen free
    stays free until this sender fills it, so the look stays true however old it is; and
    ``seen == 2 * pos`` holds for ticket ``pos``'s slot alone (each slot's sequences are
    ``2p`` and ``2p + 1`` for its own tickets ``p``), so a look at an older ticket's slot
    is simply not used. Its value: ``2 * TAIL`` where that slot was free, else -1."""
    pos = chan.CHHT[c, TAIL]
    seq = ld(chan.CSEQ, (c, (pos % cap) * SLOT_WORDS)) & SEQ_MASK
    return seq if seq == 2 * pos else int64(-1)


@linked.device
def spin_look(chan, c, cap, got):  # type: ignore[no-untyped-def]
    """The early look at channel ``c`` as a receive's wait in place ends: where the wait looked
    at that send's slot in its last turn, beside the sequence it waited on, and saw it free,
    the look it left in ``got[1]`` (``2 * TAIL``; the wait loaded TAIL as it began), with no
    load; else the look itself (``chan_look``). A slot seen free stays free until its one
    sender fills it, and TAIL moves with this sender's sends alone."""
    if got[1] >= 0:
        return got[1]
    return chan_look(chan, c, cap)


@linked.device
def chan_try_send(chan, c, cap, data, value, lone, bell, tickets, how, ring, seen, owed, oring):  # type: ignore[no-untyped-def]
    """Append ``value`` to channel ``c`` if it is open and has room: SEND_DONE if it did,
    SEND_CLOSED if the channel is closed (the value is dropped), SEND_FULL if it has no room.
    ``chan`` is G.chan (state.Channels), ``data`` the channel's value slots in it (CHI or CHF).

    The closed flag is read beside the slot's sequence (both loads in flight at once: no round
    trip of its own), relaxed: a sender reads nothing the closer wrote; not at all where no
    task closes the channel (``OPEN``). ``lone``: the program has one sending instance for
    ``c`` (state.py, Channels), so the tail is its own: a store takes the ticket, no ``cas``.
    ``bell``: the receiving end is a bell end (the publish's old word, whose WAIT_BIT says it
    waits for this value, into ``ring[0]``). ``tickets``: the receivers take tickets
    (SEND_WAKE + the holder of this value's ticket, when it waits). ``how``: HOW_c.
    ``seen``: the lone sender's early look at an open channel (``chan_look``; -1: none): where
    it saw this send's slot free, the send loads nothing (an acquire fence where the frees
    are releases: the look was relaxed). ``owed``, ``oring``: a free the poll owes, made
    right before the publish (``free_first``; ``NO_FREE``: none). Where that free is still
    owed, this send follows its receive with nothing sent or awaited between (codegen/ends.py,
    deferred_frees), and the look was taken as that receive completed (the poll cleared it
    as the receive began): its ``2 * TAIL`` is the tail, so not even TAIL is loaded."""
    if lone and how & OPEN:
        if seen >= 0 and owed[0] >= 0 and oring[1] != 0:
            if not how & CALM_SEND:
                fence_acquire()  # (as below)
            return chan_put(chan, c, cap, data, value, seen >> 1, bell, tickets, how, ring, owed, oring)
        pos = chan.CHHT[c, TAIL]
        if seen == 2 * pos:
            if not how & CALM_SEND:
                fence_acquire()  # with the relaxed look: pairs with the receiver's release of the slot
            return chan_put(chan, c, cap, data, value, pos, bell, tickets, how, ring, owed, oring)
    while True:
        # a lone end's ticket is its own word, which it wrote last: a plain load (L1) serves it
        pos = chan.CHHT[c, TAIL] if lone else ld(chan.CHHT, (c, TAIL))
        closed = False if how & OPEN else ld(chan.CHCLOSED, c) != 0
        seq = seq_of(chan, c, pos % cap, how & CALM_SEND)  # pairs with the receiver's release
        if closed:  # (tested after the sequence's load is out: both loads in flight at once)
            return SEND_CLOSED
        if seq == 2 * pos:
            if lone:
                return chan_put(chan, c, cap, data, value, pos, bell, tickets, how, ring, owed, oring)
            if cas(chan.CHHT, (c, TAIL), pos, pos + 1) == pos:
                return _put(chan, c, cap, data, value, pos, bell, tickets, how, ring, owed, oring)
        elif seq < 2 * pos:
            return SEND_FULL


@linked.device
def chan_put(chan, c, cap, data, value, pos, bell, tickets, how, ring, owed, oring):  # type: ignore[no-untyped-def]
    """The lone sender's send with ticket ``pos``, whose slot it saw free (an acquire of its
    sequence): it takes the ticket with a store (``owed``, ``oring``: as in chan_try_send)."""
    chan.CHHT[c, TAIL] = pos + 1
    return _put(chan, c, cap, data, value, pos, bell, tickets, how, ring, owed, oring)


@linked.device
def _tagged(tag, half):  # type: ignore[no-untyped-def]
    return (int64(tag) << 32) | (int64(half) & HALF)


@linked.device
def _write_seq(chan, c, slot, seq, relaxed, bell, ring):  # type: ignore[no-untyped-def]
    """Write slot ``slot``'s sequence: relaxed, or as a release. A bell end's side exchanges
    it, one RMW both ends meet on, and leaves the old word in ``ring[0]`` (a local of the
    poll, in a register once inlined): the poll tests its WAIT_BIT later, where the result
    has long arrived (codegen/futures.py, late rings), not here, where the test would wait
    a round trip for the exchange."""
    at = (c, slot * SLOT_WORDS)
    if bell:
        ring[0] = exch(chan.CSEQ, at, seq) if relaxed else exch_release(chan.CSEQ, at, seq)
    elif relaxed:
        st_relaxed(chan.CSEQ, at, seq)
    else:
        st_release(chan.CSEQ, at, seq)


@linked.device
def _put(chan, c, cap, data, value, pos, bell, tickets, how, ring, owed, oring):  # type: ignore[no-untyped-def]
    """The value and sequence of ticket ``pos``'s slot, whose ticket the caller holds."""
    slot = pos % cap
    seq = int64(2 * pos + 1)
    if how & FLAGGED:  # each half carries its tag: no release orders them (state.py, Flagged words)
        bits = int64(value)  # (an integer channel's; typed for a float channel's too, never run there)
        # (in the sequence's line: state.py)
        st_relaxed(chan.CSEQ, (c, slot * SLOT_WORDS + HALF_LO), _tagged(seq & TAG_MASK, bits))
        st_relaxed(chan.CSEQ, (c, slot * SLOT_WORDS + HALF_HI), _tagged(seq & TAG_MASK, bits >> 32))
    else:
        data[c, slot] = value
    if owed[0] >= 0:  # (a constant: NO_FREE's -1 folds away)
        free_first(chan, owed, oring)
    # the release (where one is needed) pairs with the receiver's acquire of the sequence
    _write_seq(chan, c, slot, seq, how & FLAGGED, bell, ring)
    if bell:
        return SEND_DONE
    if how & DEFER:
        return SEND_DONE  # the look for a waiting holder comes once per run (look_for_holders)
    # the value is out before the caller looks for waiting receivers: a receiver registers
    # (RMWs it waits for) and then looks again, so one of the two sees the other (a release
    # alone would let the look pass the store)
    fence_sc()
    if tickets and ld(chan.CHHT, (c, CH_REGISTERED)) > 0:  # the holder of ticket pos, if it waits
        holder = exch(chan.CTW, (c, pos % chan.CTW.shape[1]), int32(0))
        if holder > 0:
            sub(chan.CHHT, (c, CH_REGISTERED), int64(1))
            return SEND_WAKE + holder - 1
    return SEND_DONE


@linked.device
def chan_try_recv(chan, c, cap, data, out, k, lone, bell, how, ring, later=False):  # type: ignore[no-untyped-def]
    """Take the oldest value of channel ``c`` (from its slots ``data``, CHI or CHF) into
    ``out[k]``: RECV_TOOK if there was one, else RECV_NONE. ``lone``: one receiving instance,
    whose own the head is (a store takes the ticket, no ``cas``). ``bell``: the sending end
    is a bell end (the free's old word, whose WAIT_BIT says it waits, into ``ring[0]``).
    ``later``: a lone receive whose poll frees the slot itself, later (``chan_free``)."""
    while True:
        pos = chan.CHHT[c, HEAD] if lone else ld(chan.CHHT, (c, HEAD))  # (as in chan_try_send)
        seq = seq_of(chan, c, pos % cap, how & CALM_RECV)  # pairs with the sender's release
        if seq == 2 * pos + 1:
            if lone:
                return chan_take(chan, c, cap, data, out, k, pos, bell, how, ring, later)
            if cas(chan.CHHT, (c, HEAD), pos, pos + 1) == pos:
                return _take(chan, c, cap, data, out, k, pos, bell, how, ring, False)
        elif seq < 2 * pos + 1:
            return RECV_NONE


@linked.device
def chan_take(chan, c, cap, data, out, k, pos, bell, how, ring, later=False):  # type: ignore[no-untyped-def]
    """The lone receiver's receive of ticket ``pos``, whose value it saw there (an acquire of
    its sequence): it takes the ticket with a store (``later``: as in chan_try_recv)."""
    chan.CHHT[c, HEAD] = (pos & ~PREREAD) + 1
    return _take(chan, c, cap, data, out, k, pos, bell, how, ring, later)


@linked.device
def chan_free(chan, c, cap, how, ring):  # type: ignore[no-untyped-def]
    """The free of the slot that the lone receiver of channel ``c`` took last, where its poll
    still owes it (``ring[1]``: one past its ticket, 0: none; runtime/state.py, Deferred
    frees). The old word lands in ``ring[0]``, as a take's does."""
    if ring[1] != 0:
        pos = ring[1] - 1
        ring[1] = 0
        _write_seq(chan, c, pos % cap, int64(2 * (pos + cap)), how & QUIET_FREE, True, ring)


NO_FREE = (-1, 1, 0)  # a send with no deferred free to make before its publish (free_first)


@linked.device
def free_first(chan, owed, oring):  # type: ignore[no-untyped-def]
    """A deferred free made right before a publish (runtime/state.py, Deferred frees), so that
    both exchanges are in flight at once: ``owed`` is (channel, capacity, HOW) of the lone
    receive, ``oring`` its ring (word 0) and the free still owed (word 1, as in chan_free).
    Where none is, 0 goes into an unused word of the same line instead: no branch, so nothing
    waits for the exchange's old word before the publish (ptxas waits at a branch's merge)."""
    fc, fcap, fhow = owed
    pos = oring[1] - 1
    owe = oring[1] != 0
    at = (fc, (pos % fcap) * SLOT_WORDS + (0 if owe else 1))
    new = int64(2 * (pos + fcap)) if owe else int64(0)
    oring[0] |= exch(chan.CSEQ, at, new) if fhow & QUIET_FREE else exch_release(chan.CSEQ, at, new)
    oring[1] = 0


@linked.device
def halves_carry(lo, hi, t):  # type: ignore[no-untyped-def]
    """Whether flagged halves ``lo`` and ``hi`` both carry ticket ``t``'s tag."""
    tag = (2 * t + 1) & TAG_MASK
    return (lo >> 32) == tag and (hi >> 32) == tag


@linked.device
def joined(lo, hi):  # type: ignore[no-untyped-def]
    """The value of flagged halves ``lo`` and ``hi``."""
    top = hi & HALF
    if top > TAG_MASK:  # the value's sign
        top -= HALF + 1
    return (top << 32) | (lo & HALF)


@linked.device
def _halves(chan, c, slot, tag):  # type: ignore[no-untyped-def]
    """A flagged value, once both halves carry ``tag`` (the sender stored them before the
    sequence that was seen, so they arrive; until then a half may still be the slot's last)."""
    while True:
        lo = ld(chan.CSEQ, (c, slot * SLOT_WORDS + HALF_LO))
        hi = ld(chan.CSEQ, (c, slot * SLOT_WORDS + HALF_HI))
        if (lo >> 32) == tag and (hi >> 32) == tag:
            return joined(lo, hi)


@linked.device
def _take(chan, c, cap, data, out, k, pos, bell, how, ring, later):  # type: ignore[no-untyped-def]
    preread = pos & PREREAD
    pos &= ~PREREAD
    slot = pos % cap
    if preread:
        pass  # the waiting receive read it beside the sequence (codegen/services.py)
    elif how & FLAGGED:
        out[k] = _halves(chan, c, slot, (2 * pos + 1) & TAG_MASK)
    else:
        out[k] = ld(data, (c, slot))
    if later:  # a bell sender's slot, freed by the poll with its next send (chan_free, free_first)
        ring[1] = pos + 1
        return RECV_TOOK
    # the free comes after the value's loads, on whose values it depends (QUIET_FREE: relaxed)
    free = int64(2 * (pos + cap))
    # (the release, where one is needed, frees the slot for the sender's acquire)
    _write_seq(chan, c, slot, free, how & QUIET_FREE, bell, ring)
    if bell:
        return RECV_TOOK
    fence_sc()  # the free is out before the caller looks for waiting senders (as in _put)
    return RECV_TOOK


@linked.device
def ring_me(chan, waiton, c, cap, side, inst, r):  # type: ignore[no-untyped-def]
    """A bell end's registration: ``inst`` waits for the next write of the slot of its own
    ticket (side 0: a receive waits for the value, 1: a send for the free slot). It sets
    WAIT_BIT with an RMW whose old value is its second look: True if the slot was already
    ready (the caller tries again at once), else the other end's exchange will return the
    bit and wake it. (Both ends meet on one word: nothing can pass in between.)"""
    waiton[inst] = r + 1
    t = ld(chan.CHHT, (c, HEAD if side == 0 else TAIL))  # its own ticket word
    old = aor(chan.CSEQ, (c, (t % cap) * SLOT_WORDS), int64(WAIT_BIT)) & SEQ_MASK
    return old == 2 * t + 1 - side


@linked.device
def chan_can_recv(chan, c, cap):  # type: ignore[no-untyped-def]
    """Whether channel ``c`` holds a value for the next receive (a hint: it may change)."""
    pos = ld(chan.CHHT, (c, HEAD))
    return (ld(chan.CSEQ, (c, (pos % cap) * SLOT_WORDS)) & SEQ_MASK) == 2 * pos + 1


@linked.device
def chan_can_send(chan, c, cap):  # type: ignore[no-untyped-def]
    """Whether channel ``c`` has a free slot for the next send (a hint: it may change)."""
    pos = ld(chan.CHHT, (c, TAIL))
    return (ld(chan.CSEQ, (c, (pos % cap) * SLOT_WORDS)) & SEQ_MASK) == 2 * pos


@linked.device
def chan_closed(closed, c):  # type: ignore[no-untyped-def]
    """Whether channel ``c`` is closed; the acquire pairs with ``chan_close``'s release."""
    return ld_acquire(closed, c) != 0


# ---- counted channels (codegen/counted.py) ------------------------------------------


@linked.device
def counted_take(chan, c):  # type: ignore[no-untyped-def]
    """A receive of counted channel ``c``: its ticket, one atomic add on the head (the caller
    computes the ticket's value). The receiver of ticket ``need - 1`` then fences and wakes
    the sender's line: the fence pairs with :func:`counted_room`'s."""
    return add(chan.CHHT, (c, HEAD), int64(1))


@linked.device
def counted_room(chan, c, need):  # type: ignore[no-untyped-def]
    """Whether counted channel ``c``'s receivers have taken ``need`` tickets, so its sender's
    last send would have found room. A sender that registered in its line before this look
    is seen by the receiver of ticket ``need - 1`` (claim, fence, look at the line), or this
    look sees that ticket (register, fence, look at the head)."""
    fence_sc()
    return ld(chan.CHHT, (c, HEAD)) >= need
