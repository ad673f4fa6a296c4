"""Device helpers of groups (v1): the block's words and the local channels' rings.

Every array here lives in the shared memory of the block that runs a group
instance; runtime/state.py (groups) gives the words and their protocol, and
which acquire pairs with which release. The generated kernel declares each
local buffer and channel as a ``cuda.shared.array`` (one static allocation per
block) and hands them to the group's functions (codegen/groups.py). On the simulator every
block's shared arrays are its own, as on the GPU, and the ``.cta`` orders are
plain accesses under the one lock of runtime/order.py. Where the locals are views of
the block's dynamic shared memory instead (codegen/groups.py, ``dynamic_shared``),
``rows`` gives a two-dimensional buffer its shape.
"""

from __future__ import annotations

from numba import config, int64

from gasync.runtime import devicelib as dl
from gasync.runtime import devicembar as mbar
from gasync.runtime import linked
from gasync.runtime.devicelib import pause
from gasync.runtime.devicewarp import first, first2, lanes_ordered, vote_all
from gasync.runtime.order import (
    INLINE,
    cas_acq_rel_cta,
    ld_acquire_cta,
    ld_relaxed_cta,
    st_relaxed_cta,
    st_release_cta,
)
from gasync.runtime.state import LCH_CLOSED, LCH_RECV, LCH_SEND, LCH_WORDS

LCH_FULL, LCH_SENT, LCH_CLOSED_SEND = 0, 1, 2  # lch_try_send's outcomes (nothing for it: 0, as LCH_NONE)
LCH_NONE, LCH_TOOK, LCH_ENDED = 0, 1, 2  # lch_try_recv's outcomes
# HOW a local channel's ends claim, from the plan (codegen/shapes.py local_how; runtime/state.py,
# groups): one sending (receiving) warp takes its positions without a cas; no task closes it;
# no sender writes a local buffer, so no lane's shared-memory writes ride on a send: lane 0
# alone passes the slot, without its mbarriers (the value to the other lanes by shuffle)
LCH_LONE_SEND, LCH_LONE_RECV, LCH_OPEN, LCH_LANE0 = 1, 2, 4, 8
# A poll on all 32 lanes passes each slot through its two mbarriers (runtime/devicembar.py):
# racecheck then follows a local channel's hand-off (False: lane 0's sequence words alone, a
# stage of scripts/gpu_check.sh)
LCH_MBAR = True
# A lone local await's claims (codegen/groups.py LOCAL_TRIES) nap this long between them, as the
# pinned loop naps on the view (QUIET_NAP_NS): lane 0's waiting takes few of the issue slots its
# block's working warps share, and the simulator's waiting thread lets the others run
LCH_TRY_NAP_NS = 32
# On the simulator a lone local await claims at most this many times a poll (lch_claim_warp; 0: as
# many as the generated call says: the GPU, where Numba drops the test). A try there is two meetings of
# 32 Python threads (~50 ms), so 64 of them made each pending poll of a group ~3 s long, and a
# program waiting on a local channel took minutes to reach its deadline (the pinned loop looks at
# it between polls)
SIM_TRIES = 2 if config.ENABLE_CUDASIM else 0

if config.ENABLE_CUDASIM:

    def rows(flat, n, m):  # type: ignore[no-untyped-def]
        """``flat`` (n * m contiguous elements) as an n x m array, the same memory."""
        return flat.reshape((n, m))

    def warp_slot():  # type: ignore[no-untyped-def]
        """The simulator's threads have no schedulers to spread over: every block turns by 0."""
        return int64(0)

else:
    from llvmlite import ir as llvm_ir
    from numba import types
    from numba.cuda import cgutils
    from numba.cuda.extending import intrinsic

    @intrinsic
    def rows(typingctx, flat, n, m):  # type: ignore[no-untyped-def]
        """``flat`` (n * m contiguous elements) as an n x m C-ordered array, the same memory:
        built in place, where ndarray.reshape would call numba-cuda's linked C helper and lose
        the shared address space."""

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            from numba.cuda.np.arrayobj import make_array, populate_array

            src = make_array(signature.args[0])(context, builder, args[0])
            out = make_array(signature.return_type)(context, builder)
            (_, rows_ty, cols_ty), (_, nrows, ncols) = signature.args, args
            nrows = context.cast(builder, nrows, rows_ty, types.intp)
            ncols = context.cast(builder, ncols, cols_ty, types.intp)
            shape = cgutils.pack_array(builder, [nrows, ncols])
            strides = cgutils.pack_array(builder, [builder.mul(ncols, src.itemsize), src.itemsize])
            populate_array(out, src.data, shape, strides, src.itemsize, src.meminfo, src.parent)
            return out._getvalue()

        return types.Array(flat.dtype, 2, "C")(flat, n, m), codegen

    @intrinsic
    def warp_slot(typingctx):  # type: ignore[no-untyped-def]
        """The calling warp's slot on its SM (PTX ``%warpid``); slot % 4 is the scheduler that
        issues its instructions. PTX allows it to change where a warp is preempted, so it
        decides only where work goes, never what is correct."""

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            fty = llvm_ir.FunctionType(llvm_ir.IntType(32), [])
            slot = builder.call(llvm_ir.InlineAsm(fty, "mov.u32 $0, %warpid;", "=r", side_effect=True), [])
            return builder.zext(slot, llvm_ir.IntType(64))

        return types.int64(), codegen


@linked.device
def lch_reset(ring, cap, t, nt):  # type: ignore[no-untyped-def]
    """Thread ``t`` of ``nt`` empties a ring for a new group instance and starts its slots'
    barriers (the block meets after). A ring is its words, each slot's sequence, then each
    slot's ``pub`` and ``freed`` mbarriers (runtime/state.py, LCH_WORDS; lch_pub, lch_freed)."""
    for k in range(t, LCH_WORDS + 3 * cap, nt):
        if k < LCH_WORDS:
            ring[k] = 0
        elif k < LCH_WORDS + cap:
            ring[k] = 2 * (k - LCH_WORDS)  # slot j free for position j
        else:
            mbar.init(ring, k)


@linked.device
def lch_retire(ring, cap, t, nt):  # type: ignore[no-untyped-def]
    """Thread ``t`` of ``nt`` ends the ring's barriers once its instance has ended and the block
    has met (the memory may hold another group's locals next)."""
    for k in range(LCH_WORDS + cap + t, LCH_WORDS + 3 * cap, nt):
        mbar.inval(ring, k)


@INLINE
def lch_pub(cap, j):  # type: ignore[no-untyped-def]
    """Slot ``j``'s barrier that its sender's lanes arrive at (the ring's word)."""
    return LCH_WORDS + cap + j


@INLINE
def lch_freed(cap, j):  # type: ignore[no-untyped-def]
    """Slot ``j``'s barrier that its receiver's lanes arrive at once they have read it."""
    return LCH_WORDS + 2 * cap + j


@linked.device
def lch_view(ring, cap):  # type: ignore[no-untyped-def]
    """A number that grows at every step a waiter of this ring waits for, and never falls: four
    times its positions and CLOSED (a claim, a close), plus 1 while SEND's slot is free for it
    (the free a waiting sender waits for) and 2 while RECV's slot holds its value (the publish
    a waiting receiver waits for). A claim raises the positions by one and may clear its bit:
    +4 - 1 or +4 - 2 at least. A publish or free of any other slot is one no warp waits for
    (every claim publishes or frees in the same call, before its warp waits on anything), so
    the view need not see it (runtime/state.py, groups; docs/groups.md, invariant 6). Five
    relaxed loads, each afresh, so that a nap's look is never hoisted out of its loop."""
    send = ld_relaxed_cta(ring, LCH_SEND)
    recv = ld_relaxed_cta(ring, LCH_RECV)
    free = ld_relaxed_cta(ring, LCH_WORDS + send % cap) == 2 * send
    holds = ld_relaxed_cta(ring, LCH_WORDS + recv % cap) == 2 * recv + 1
    return 4 * (send + recv + ld_relaxed_cta(ring, LCH_CLOSED)) + int64(free) + 2 * int64(holds)


@linked.device
def lch_claim_send(ring, cap, how):  # type: ignore[no-untyped-def]
    """Claim the next free position to send at: (LCH_SENT, pos), (LCH_FULL, 0), or
    (LCH_CLOSED_SEND, 0) (the value dropped). The claimer writes slot ``pos % cap`` and then
    publishes it (lch_publish). ``how``: LCH_LONE_SEND, LCH_OPEN (a constant of the call)."""
    if not how & LCH_OPEN and ld_acquire_cta(ring, LCH_CLOSED) != 0:
        return LCH_CLOSED_SEND, int64(0)
    if how & LCH_LONE_SEND:  # SEND is this warp's own word: no cas
        pos = ld_relaxed_cta(ring, LCH_SEND)
        if ld_acquire_cta(ring, LCH_WORDS + pos % cap) == 2 * pos:  # pairs with the receiver's free
            st_relaxed_cta(ring, LCH_SEND, pos + 1)
            return LCH_SENT, pos
        return LCH_FULL, int64(0)
    while True:
        pos = ld_acquire_cta(ring, LCH_SEND)
        seq = ld_acquire_cta(ring, LCH_WORDS + pos % cap)  # pairs with the receiver's free of the slot
        if seq == 2 * pos:
            if cas_acq_rel_cta(ring, LCH_SEND, pos, pos + 1) == pos:
                return LCH_SENT, pos
        elif seq < 2 * pos:
            return LCH_FULL, int64(0)  # the slot still holds the value sent cap positions ago


@linked.device
def lch_publish(ring, cap, pos):  # type: ignore[no-untyped-def]
    """The slot of claimed position ``pos``, written: its value to its receiver."""
    st_release_cta(ring, LCH_WORDS + pos % cap, 2 * pos + 1)  # the value, to its receiver


@linked.device
def lch_try_send(ring, data, base, cap, value, how):  # type: ignore[no-untyped-def]
    """Put ``value`` in the next free slot: LCH_SENT, LCH_FULL, or LCH_CLOSED_SEND (dropped)."""
    code, pos = lch_claim_send(ring, cap, how)
    if code == LCH_SENT:
        data[base + pos % cap] = value
        lch_publish(ring, cap, pos)
    return code


@linked.device
def lch_claim(ring, cap, how):  # type: ignore[no-untyped-def]
    """Claim the oldest value's position: (LCH_TOOK, pos), (LCH_NONE, 0), or (LCH_ENDED, 0)
    (closed and drained). The taker reads slot ``pos % cap`` and then frees it (lch_free).
    ``how``: LCH_LONE_RECV, LCH_OPEN (a constant of the call)."""
    lone = how & LCH_LONE_RECV  # RECV is this warp's own word: no cas
    while True:
        pos = ld_relaxed_cta(ring, LCH_RECV) if lone else ld_acquire_cta(ring, LCH_RECV)
        seq = ld_acquire_cta(ring, LCH_WORDS + pos % cap)  # pairs with the sender's publish
        if seq == 2 * pos + 1:
            if lone:
                st_relaxed_cta(ring, LCH_RECV, pos + 1)
                return LCH_TOOK, pos
            if cas_acq_rel_cta(ring, LCH_RECV, pos, pos + 1) == pos:
                return LCH_TOOK, pos
        elif seq < 2 * pos + 1 or lone:  # (a lone receiver's slot never runs ahead of RECV)
            # empty at pos: ended once closed (the acquire pairs with lch_close) and no sender
            # holds a claimed position beyond what this receiver saw
            if how & LCH_OPEN:
                return LCH_NONE, int64(0)
            if ld_acquire_cta(ring, LCH_CLOSED) != 0 and ld_acquire_cta(ring, LCH_SEND) == pos:
                return LCH_ENDED, int64(0)
            return LCH_NONE, int64(0)


@linked.device
def lch_claim_within(ring, cap, tries, send, how):  # type: ignore[no-untyped-def]
    """lch_claim_send (``send``) or lch_claim, tried up to ``tries`` times, napping between, while
    the ring has nothing for it (LCH_FULL and LCH_NONE are both 0)."""
    k = 0
    while True:
        code, pos = lch_claim_send(ring, cap, how) if send else lch_claim(ring, cap, how)
        k += 1
        if code != 0 or k >= tries:
            return code, pos
        pause(LCH_TRY_NAP_NS)


@linked.device
def lch_claim_lanes(ring, cap, tries, send, cmd, w, lane):  # type: ignore[no-untyped-def]
    """A lone end of an open ring (LCH_LONE_SEND or LCH_LONE_RECV, with LCH_OPEN) claims on all 32
    lanes, as lch_claim_within does on lane 0: after a meeting that shows every lane the position
    lane 0 took last, each lane reads the position once (a broadcast load: the word is this warp's
    alone, so it does not move while the warp waits) and, each try, the slot's sequence (with its
    acquire); the lanes agree by one vote that the slot is ready (a lane that looked a moment
    earlier may have found it not yet: then no lane claims this try). (code, pos), the same in
    every lane: no lane-0 region, no shuffle. Lane 0 takes the position later (lch_take), in the
    region where it publishes or frees the slot: one lane-0 region a hand-off, not two (an
    atomic's region costs its branch and reconvergence: bench/NOTES.md run 81)."""
    word = LCH_SEND if send else LCH_RECV
    ready = 0 if send else 1  # the sequence of a slot free for pos is 2 pos, holding it 2 pos + 1
    if dl.PROBE_WAIT_CYCLES > 0 and not send:  # a probe's delay (devicelib.py): none at 0
        dl.delay_cycles(dl.PROBE_WAIT_CYCLES)
    lanes_ordered(cmd, w)
    pos = ld_relaxed_cta(ring, word)  # this warp's own word: no other warp moves it while it waits
    seq = LCH_WORDS + pos % cap
    k = 0
    while True:
        if vote_all(cmd, w, lane, ld_acquire_cta(ring, seq) == 2 * pos + ready):
            if dl.PROBE_SEEN_CYCLES > 0 and not send:  # (as above)
                dl.delay_cycles(dl.PROBE_SEEN_CYCLES)
            return LCH_SENT, pos  # (LCH_SENT is LCH_TOOK)
        k += 1
        if k >= tries:
            return LCH_FULL, int64(0)  # (LCH_FULL is LCH_NONE)
        pause(LCH_TRY_NAP_NS)


# A lone end of an open ring claims on all lanes (lch_claim_lanes; False: on lane 0, its outcome
# by shuffle, as before the thirtieth session: a stage of scripts/gpu_check.sh)
LANES_CLAIM = True


@INLINE
def lch_take(ring, word, pos, lanes):  # type: ignore[no-untyped-def]
    """Lane 0 takes the position its lanes' claim found ready (``lanes``: lch_claim_lanes), before
    its publish or free of the slot, so that the view never falls (lch_view: the position's 4
    come before the slot's bit goes)."""
    if lanes:
        st_relaxed_cta(ring, word, pos + 1)


@INLINE
def lanes_claim(how, send):  # type: ignore[no-untyped-def]
    """Whether the claims of this end (``send``: the sending one) are lch_claim_lanes'."""
    return LANES_CLAIM and how & LCH_OPEN and how & (LCH_LONE_SEND if send else LCH_LONE_RECV)


@linked.device
def lch_claim_warp(ring, cap, tries, send, how, cmd, w, lane):  # type: ignore[no-untyped-def]
    """The claim of a poll on all 32 lanes: (code, pos) in every lane where the end claims on all
    lanes (lanes_claim), else lane 0's (the other lanes' code says nothing was claimed)."""
    if SIM_TRIES:  # (0 on the GPU: Numba drops the branch)
        tries = min(tries, SIM_TRIES)
    if lanes_claim(how, send):
        return lch_claim_lanes(ring, cap, tries, send, cmd, w, lane)
    if lane == 0:
        return lch_claim_within(ring, cap, tries, send, how)
    return LCH_FULL, int64(0)  # (LCH_FULL is LCH_NONE)


@linked.device
def lch_free(ring, cap, pos):  # type: ignore[no-untyped-def]
    """The slot of claimed position ``pos``, read: free for its next sender."""
    st_release_cta(ring, LCH_WORDS + pos % cap, 2 * (pos + cap))  # the slot, to the sender of pos + cap


@linked.device
def lch_try_recv(ring, data, base, cap, out, w, how):  # type: ignore[no-untyped-def]
    """Take the oldest value into ``out[w]``: LCH_TOOK, LCH_NONE, or LCH_ENDED (closed and drained)."""
    code, pos = lch_claim(ring, cap, how)
    if code == LCH_TOOK:
        out[w] = data[base + pos % cap]
        lch_free(ring, cap, pos)
    return code


@linked.device
def lch_recv_warp(ring, data, base, cap, zero, cmd, w, lane, tries, how):  # type: ignore[no-untyped-def]
    """lch_try_recv for a poll that runs on all 32 lanes (codegen/warppoll.py): lane 0 claims
    (up to ``tries`` times while the ring is empty: a lone await waits in place a while, the
    other lanes at the meeting, before its poll returns pending),
    every lane learns the outcome and the position (by shuffle), waits for the slot's ``pub``
    phase, reads the value and arrives at its ``freed``; lane 0 frees the slot after its own
    arrival (no meeting: the next sender's lanes wait for the phase, which the last lane's
    arrival completes). Returns (code, value); ``zero`` is a value of the slots' type, given
    where nothing was taken (no lane reads a slot it has not claimed: racecheck saw that read
    race a send). A lone receiver of an open ring claims on every lane instead (lch_claim_lanes);
    with LCH_LANE0 every lane then reads the value, and lane 0 frees the slot after they meet."""
    lanes = lanes_claim(how, False)
    code, pos = lch_claim_warp(ring, cap, tries, False, how, cmd, w, lane)
    value = zero
    if not LCH_MBAR or how & LCH_LANE0:  # lane 0 frees; the value to every lane
        if code == LCH_TOOK:  # (every lane where they claimed together, else lane 0 alone)
            value = data[base + pos % cap]
            if lanes:
                lanes_ordered(cmd, w)  # every lane has read before lane 0 frees the slot
            if lane == 0:
                lch_take(ring, LCH_RECV, pos, lanes)
                lch_free(ring, cap, pos)
        return (code, value) if lanes else first2(cmd, w, lane, code, value)
    if not lanes:
        code, pos = first2(cmd, w, lane, code, pos)
    if code == LCH_TOOK:
        j = pos % cap
        mbar.wait(ring, lch_pub(cap, j), (pos // cap) % 2)  # the sender's lanes, done with it
        value = data[base + j]
        mbar.arrive(ring, lch_freed(cap, j))
        if lane == 0:
            lch_take(ring, LCH_RECV, pos, lanes)
            lch_free(ring, cap, pos)
    return code, value


@linked.device
def lch_send_warp(ring, data, base, cap, value, cmd, w, lane, tries, how):  # type: ignore[no-untyped-def]
    """lch_try_send for a poll that runs on all 32 lanes: lane 0 claims (up to ``tries`` times
    while the ring is full), every lane learns the
    outcome; with a slot, the lanes wait for its ``freed`` phase of the lap before (the
    receiver of ``pos - cap``, done reading), lane 0 writes the value, every lane arrives at
    ``pub`` (what each wrote before, a staged tile's part among it, goes with it), and lane 0
    publishes after its own arrival (no meeting: a receiver that sees the publish waits for the
    phase, which the last lane's arrival completes; the phases it may find are still this lap's
    or the one before, which one bit tells apart: runtime/devicembar.py). A lone sender of an
    open ring claims on every lane instead (lch_claim_lanes)."""
    lanes = lanes_claim(how, True)
    code, pos = lch_claim_warp(ring, cap, tries, True, how, cmd, w, lane)
    if not LCH_MBAR or how & LCH_LANE0:  # lane 0 writes and publishes; its outcome to every lane
        if code == LCH_SENT and lane == 0:
            lch_take(ring, LCH_SEND, pos, lanes)
            st_relaxed_cta(data, base + pos % cap, value)  # (an exchange: racecheck sees no plain write)
            lch_publish(ring, cap, pos)
        return code if lanes else first(cmd, w, lane, code)
    if not lanes:
        code, pos = first2(cmd, w, lane, code, pos)
    if code == LCH_SENT:
        j = pos % cap
        if pos >= cap:
            mbar.wait(ring, lch_freed(cap, j), (pos // cap - 1) % 2)
        if lane == 0:
            data[base + j] = value
        mbar.arrive(ring, lch_pub(cap, j))
        if lane == 0:
            lch_take(ring, LCH_SEND, pos, lanes)
            lch_publish(ring, cap, pos)
    return code


@linked.device
def lch_close(ring):  # type: ignore[no-untyped-def]
    st_release_cta(ring, LCH_CLOSED, int64(1))  # the closer's sends, to the receiver that ends
