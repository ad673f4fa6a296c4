"""A group's words in shared memory are reached through their shared-window address with the
state space named (runtime/ptxops.py, ``shared_form``; runtime/order.py's ``_cta`` accesses):
``ld.acquire.cta.shared::cta`` is one LDS, where the generic ``ld.acquire.cta`` is an access the
hardware must place first, and a generic ``atom`` a branch per state space (bench/NOTES.md,
twenty-ninth session). Read in the PTX for sm_90, no GPU."""

from __future__ import annotations

import re

from numba import cuda, int64, types
from ptxtools import ptx_of

from gasync.runtime import devicegroups as dg
from gasync.runtime import order


def _kernel(out):  # type: ignore[no-untyped-def]
    ring = cuda.shared.array(8, int64)
    t = cuda.threadIdx.x
    if t == 0:
        ring[1] = 0
    cuda.syncthreads()
    a = order.ld_acquire_cta(ring, 1)
    b = order.ld_relaxed_cta(ring, 2)
    c = order.cas_acq_rel_cta(ring, 3, a, b + 1)
    order.st_release_cta(ring, 5, c)
    out[t] = a + b + c


def test_every_cta_access_names_the_shared_space() -> None:
    ptx = ptx_of(cuda.jit(_kernel), (types.int64[::1],))
    named = {
        "ld.acquire.cta.shared::cta.b64": 1,
        "ld.relaxed.cta.shared::cta.b64": 1,
        "atom.acq_rel.cta.shared::cta.cas.b64": 1,
    }
    for text, n in named.items():
        assert ptx.count(text) == n, text
    # the store: an exchange (order.CTA_ATOMIC_STORES, what racecheck needs) or a plain store
    assert ptx.count("atom.release.cta.shared::cta.exch.b64") + ptx.count("st.release.cta.shared::cta.b64") == 1
    # the shared-window address is an addrspacecast NVVM sees, not one inside each instruction's asm:
    # here, where the array is the kernel's own, NVVM takes it from the array's symbol (no cvta at
    # all); an array passed through device functions gets one cvta that its accesses share. And no
    # generic access at the block's scope is left
    assert ptx.count("cvta.to.shared.u64") == 0
    assert not re.search(r"\b(ld|st|atom|red)\.(acquire|relaxed|release|acq_rel)\.cta\.(b|u|cas|add|exch)", ptx)


@cuda.jit(device=True)
def _claims(out, how_send, how_recv):  # type: ignore[no-untyped-def]
    ring = cuda.shared.array(16, int64)
    t = cuda.threadIdx.x
    if t < 16:
        ring[t] = 0
    cuda.syncthreads()
    code, pos = dg.lch_claim_send(ring, 2, how_send)
    took, at = dg.lch_claim(ring, 2, how_recv)
    out[t] = code + pos + took + at


def _lone_open(out):  # type: ignore[no-untyped-def]
    _claims(out, dg.LCH_LONE_SEND | dg.LCH_OPEN, dg.LCH_LONE_RECV | dg.LCH_OPEN)


def _crowds(out):  # type: ignore[no-untyped-def]
    _claims(out, 0, 0)


def test_a_lone_end_of_an_open_ring_claims_without_a_cas_or_a_look_at_closed() -> None:
    """runtime/devicegroups.py: the bits are constants of the call, and what they leave out is
    not in the PTX (the claimed ends' cas and closed looks are, in the same helpers)."""
    lone = ptx_of(cuda.jit(_lone_open), (types.int64[::1],))
    crowd = ptx_of(cuda.jit(_crowds), (types.int64[::1],))
    assert "cas" not in lone and "atom.acq_rel.cta.shared::cta.cas.b64" in crowd
    # each claim's one acquire: its slot's sequence (the position is its own word, read relaxed)
    assert lone.count("ld.acquire.cta.shared::cta.b64") == 2
    assert crowd.count("ld.acquire.cta.shared::cta.b64") >= 5  # CLOSED, the positions, the sequences


@cuda.jit(device=True)
def _hand_off(out, how):  # type: ignore[no-untyped-def]
    ring = cuda.shared.array(16, int64)
    data = cuda.shared.array(2, int64)
    lane = cuda.threadIdx.x % 32
    sent = dg.lch_send_warp(ring, data, 0, 2, int64(7), out, 0, lane, 1, how)
    took, value = dg.lch_recv_warp(ring, data, 0, 2, int64(0), out, 0, lane, 1, how)
    out[lane, 0] = sent + took + value


def _lone_lane0(out):  # type: ignore[no-untyped-def]
    _hand_off(out, dg.LCH_LONE_SEND | dg.LCH_LONE_RECV | dg.LCH_OPEN | dg.LCH_LANE0)


def _crowd_lane0(out):  # type: ignore[no-untyped-def]
    _hand_off(out, dg.LCH_OPEN | dg.LCH_LANE0)


def _lone_every_lane(out):  # type: ignore[no-untyped-def]
    _hand_off(out, dg.LCH_LONE_SEND | dg.LCH_LONE_RECV | dg.LCH_OPEN)


def test_a_slot_no_lane_wrote_for_passes_without_its_mbarriers() -> None:
    """LCH_LANE0 (no sender writes a local buffer): lane 0 writes the value with an exchange and
    no lane passes the slot's mbarriers; otherwise every lane passes them. A lone end of an open
    ring claims on every lane (a vote, no shuffle); a crowd's end claims on lane 0 and shuffles."""
    sig = (types.int64[:, ::1],)
    lone, crowd, every = (ptx_of(cuda.jit(k), sig) for k in (_lone_lane0, _crowd_lane0, _lone_every_lane))
    assert "mbarrier" not in lone and "mbarrier" not in crowd
    assert "mbarrier.arrive" in every and "mbarrier.try_wait" in every
    assert "vote.sync.all" in lone and "shfl.sync" not in lone and "cas" not in lone
    assert "shfl.sync.idx" in crowd and "atom.acq_rel.cta.shared::cta.cas.b64" in crowd
