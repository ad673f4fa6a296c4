"""The program-specific device helpers the executor and polls call: setting a signal,
closing a channel (each waking its waiters), whether a host signal is still to come, and
``service``, which delivers host signals that arrived and wakes due sleepers; and
``await_in_place``, where a channel await waits while its executor has nothing else to do."""

from __future__ import annotations

from gasync.codegen.machine import Shared
from gasync.codegen.shapes import CREDITS


def services(shared: Shared) -> list[str]:
    """Signals, channels, timers and the host: the program-specific device helpers."""
    plan = shared.plan
    out = ["@cuda.jit(device=True)", "def signal_set(k, w, waker, G):"]
    out += ["    if dsync.set_signal(G.signals.SIG, k):", "        " + shared.wake_all("k", "waker")]
    out += ["", "", "@cuda.jit(device=True)", "def chan_close(c, w, waker, G):"]
    out += [
        "    # what was sent before: pairs with chan_closed's acquire",
        "    dl.exch_release(G.chan.CHCLOSED, c, int32(1))",
        "    dl.fence_sc()  # closed before it looks for waiters (devicesync.chan_try_send says why)",
    ]
    out += [
        "    " + shared.wake_all("N_SIGNALS + 2 * c", "waker"),
        "    " + shared.wake_all("N_SIGNALS + 2 * c + 1", "waker"),
    ]
    for ch in plan.channels:  # a crediting sender reads the closed flag at its next send
        if shared.shapes is not None and shared.shapes.how.get(ch.name, 0) & CREDITS:
            out.append(f"    if c == CH_{ch.name}:")
            out.append("        dsync.forget_credit(G.chan, c)")
    for ch in plan.channels:  # bell ends and ticket holders wait on no list: wake them
        bells = [f"BELL_{side}_{ch.name}" for side in ("RECV", "SEND") if shared.is_bell(side, ch.name)]
        if bells or shared.has_tickets(ch.name):
            out.append(f"    if c == CH_{ch.name}:")
            out += [f"        {shared.wake(b, 'waker')}" for b in bells]  # (a spurious wake is harmless)
        if shared.has_tickets(ch.name):
            # (a deferring sender's unlooked tickets, below the tail, are looked at as its poll ends)
            out.append(f"        dsync.wake_tickets(G.sched, QMASK, G.chan, CH_{ch.name})")
    if any(shared.credits(ch.name) for ch in plan.channels):
        out += ["", "", "@cuda.jit(device=True)", "def chan_close_own(c, w, waker, G, cur):"]
        out += [
            "    # a crediting sender's close of its own channel: its cursor is read again at its",
            "    # next send, which then reads the closed flag (runtime/devicecredit.py, credited_send)",
            "    chan_close(c, w, waker, G)",
            "    cur[0] = -1",
        ]
    out += ["", "", "@cuda.jit(device=True)", "def host_pending(signals):", "    # a host signal still to come?"]
    for sig in plan.signals:
        out.append(f"    if dsync.host_signal_pending(signals, SIGNAL_{sig.name}):")
        out.append("        return True")
    out.append("    return False")
    out += ["", "", "@cuda.jit(device=True)", "def service(w, G):", "    # host signals and due sleepers"]
    if plan.signals:
        out.append("    CTL = G.sched.CTL")
        out.append("    SIG, HOSTSIG, HOSTPEND = G.signals.SIG, G.signals.HOSTSIG, G.signals.HOSTPEND")
    for sig in plan.signals:
        k = f"SIGNAL_{sig.name}"
        arrived = f"HOSTPEND[{k}] != 0 and dsync.load_acquire_sys(HOSTSIG, {k}) != 0"
        out.append(f"    if {arrived} and not dl.signal_is_set(SIG, {k}):")
        out.append("        # in flight while it is delivered, so the deadlock check never sees it arrived")
        out.append("        # and its waiters not yet woken")
        out.append("        dl.add(CTL, dl.CTL_INFLIGHT, int64(1))  # (set_signal's release orders it first)")
        out.append(f"        signal_set({k}, w, int64(-1), G)")
        out.append("        dl.add(CTL, dl.CTL_INFLIGHT, int64(-1))")
    if shared.has_sleep:
        args = "G.sched, QMASK, G.sleep, SMASK, 4"
        if shared.trace:
            out.append(f"    dsync.wake_sleepers_traced({args}, G.TRACE, w)")
        else:
            out.append(f"    dsync.wake_sleepers({args})")
    out.append("    return")
    if shared.wait_in_place:
        out += ["", "", *AWAIT_IN_PLACE.strip("\n").splitlines()]
    return out


# side 0: a receive waits for a value; 1: a send waits for a free slot
AWAIT_IN_PLACE = """
@cuda.jit(device=True)
def await_in_place(side, c, cap, lone, own, w, G, how, look, lcap, out, k, first):
    # A channel await that found nothing waits for it here, while this executor has
    # nothing else to run (EXS[w, SPIN]; runtime/state.py, Waiting in place): no wait
    # list, wake or run queue on either side of the hand-off. Returns -1 when it gave up:
    # work waits in the run queue, or fresh instances wait to be claimed, that no idle
    # executor has taken for a while; a bulk for was posted; the run ends; or SPIN_NS
    # passed. Returns -2 once the channel looks ready (or closed): the caller tries again.
    # A lone end (``lone``: the one receiver or sender) owns its ticket, so it reads it
    # once and then only the slot: it returns the ticket, its slot acquired, to take
    # (dsync.chan_take, chan_put) without reading either again; so does a receive that
    # holds ticket ``own`` (>= 0; runtime/state.py, Tickets). A receive of a flagged
    # channel (``how``) reads the value's halves beside the sequence: when both are there it
    # returns the ticket with dsync.PREREAD set, the value in out[k] (no load after: the
    # scratch row SCRATCH_I[w], or the poll's register rv_<c>, codegen/ends.py).
    # A lone receive whose poll sends next on channel ``look`` (>= 0, capacity ``lcap``; its
    # early look, codegen/ends.py) loads that send's slot in each turn too, beside the
    # sequence, and leaves the look in out[k + 1]: 2 * its tail if free, else -1 (dsync.spin_look).
    # ``first``: no attempt came before this wait (a lone end's; codegen/chanpolls.py TRY_FIRST):
    # its first turn is the await's attempt, so an executor that may not wait gives up after it,
    # and the test of EXS waits on nothing before the turn's loads (one load's latency, not two).
    if dl.PROBE_WAIT_CYCLES > 0:  # (a probe's delay: folded away at 0, runtime/devicelib.py)
        dl.delay_cycles(dl.PROBE_WAIT_CYCLES)
    spin = G.exec.EXS[w, dl.EXS_SPIN] != 0
    if not spin and not first:
        return int64(-1)
    QHT, CTL = G.sched.QHT, G.sched.CTL
    t0 = dl.now_ns()
    nap = 0
    turn = 0
    head = int64(-1)  # the run queue's head when it was first seen holding work,
    since = t0  # and when
    claimed = int64(-1)  # the claims of fresh instances when some were first seen unclaimed,
    claimed_at = t0  # and when
    epoch = dl.ld(CTL, dsync.CTL_JOB_EPOCH) if HAS_BULK else int64(0)
    ticket = own
    if lone:
        ticket = G.chan.CHHT[c, dl.HEAD if side == 0 else dl.TAIL]  # a lone end's own (it wrote it last)
    ltail = G.chan.CHHT[look, dl.TAIL] if look >= 0 else int64(0)  # the look's own tail (it wrote it last)
    seen = int64(-1)
    while True:
        closed = False if how & dsync.OPEN else dl.ld(G.chan.CHCLOSED, c) != 0
        far = 0
        if ticket >= 0:
            halves = side == 0 and how & dsync.FLAGGED
            if halves:  # in flight with the sequence, from its line
                lo = dl.ld(G.chan.CSEQ, (c, (ticket % cap) * dl.SLOT_WORDS + dl.HALF_LO))
                hi = dl.ld(G.chan.CSEQ, (c, (ticket % cap) * dl.SLOT_WORDS + dl.HALF_HI))
            if look >= 0:  # in flight with the sequence: no round trip of its own after it
                seen = dl.ld(G.chan.CSEQ, (look, (ltail % lcap) * dl.SLOT_WORDS)) & dsync.SEQ_MASK
            # relaxed, look after look: an acquire load would invalidate this SM's L1 each time
            seq = dl.ld(G.chan.CSEQ, (c, (ticket % cap) * dl.SLOT_WORDS)) & dsync.SEQ_MASK
            # (a value already sent is taken even once closed; a send to a closed channel drops)
            if seq == 2 * ticket + 1 - side and not (closed and side == 1):
                if dl.PROBE_SEEN_CYCLES > 0:  # (as above)
                    dl.delay_cycles(dl.PROBE_SEEN_CYCLES)
                if not how & (dsync.CALM_RECV if side == 0 else dsync.CALM_SEND):
                    # pairs with the other end's release of the slot: what it wrote before is
                    # visible (a calm end's other end released nothing: runtime/state.py)
                    dl.fence_acquire()
                dl.add(G.exec.STATS, (w, dl.STAT_SPUN), int64(1))  # (no load: nothing waits for it)
                if look >= 0:  # (out is the poll's two registers then: codegen/chanpolls.py)
                    out[k + 1] = seen if seen == 2 * ltail else int64(-1)
                if halves and dsync.halves_carry(lo, hi, ticket):
                    out[k] = dsync.joined(lo, hi)
                    return ticket | dsync.PREREAD
                return ticket
            if not spin:
                return int64(-1)  # (first: this turn was the await's one attempt)
            ready = False
            # whole turns of the ring still to come before this ticket's: look that much less
            # often (a crowd of ticket holders would keep the slot's line busy for the few served)
            far = (2 * ticket + 1 - side - seq) // (2 * cap)
        elif side == 0:  # relaxed reads: a hint only, the take or put that follows decides
            ready = dsync.chan_can_recv(G.chan, c, cap)
        else:
            ready = dsync.chan_can_send(G.chan, c, cap)
        if ready or closed:
            dl.add(G.exec.STATS, (w, dl.STAT_SPUN), int64(1))
            return int64(-2)
        turn += 1
        if turn % 8 == 0:
            if HAS_SERVICE: service(w, G)  # others' timers and host signals, while this one waits
            t = dl.now_ns()
            if dl.ld(CTL, dl.CTL_EXIT) != 0 or t - t0 > dl.SPIN_NS:
                return int64(-1)
            h = dl.ld(QHT, dl.HEAD)
            if h == dl.ld(QHT, dl.TAIL):
                head = int64(-1)
            elif h != head:
                head, since = h, t
            elif t - since > QUEUE_STALL_NS:
                return int64(-1)  # no idle executor takes it: go and run it
            claims, waiting = claimable(G.sched)
            if not waiting:
                claims = int64(-1)
            elif claims != claimed:
                claimed, claimed_at = claims, t
            elif t - claimed_at > QUEUE_STALL_NS:
                return int64(-1)  # fresh instances that no idle executor claims: go and start one
            if HAS_BULK and dl.ld(CTL, dsync.CTL_JOB_EPOCH) != epoch:
                return int64(-1)  # a bulk for was posted: its chunks want every idle warp
        if far > 0 and not dl.SIM:
            dl.pause(min(far * 512, 8192))
        elif turn > 16 or dl.SIM:  # on the GPU the first turns are the loads alone (an L2 trip each)
            dl.pause(nap)
            nap = min(2 * nap + 32, 256)
"""
