"""A group's words in shared memory are reached through their shared-window address with the
state space named (runtime/ptxops.py, ``shared_form``; runtime/order.py's ``_cta`` accesses):
``ld.acquire.cta.shared::cta`` is one LDS, where the generic ``ld.acquire.cta`` is an access the
hardware must place first, and a generic ``atom`` a branch per state space (bench/NOTES.md,
twenty-ninth session). Read in the PTX for sm_90, no GPU."""

from __future__ import annotations

import re

from numba import cuda, int64, types
from ptxtools import ptx_of

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
    order.bump_release_cta(ring, 4)
    order.st_release_cta(ring, 5, c)
    out[t] = a + b + c


def test_every_cta_access_names_the_shared_space() -> None:
    ptx = ptx_of(cuda.jit(_kernel), (types.int64[::1],))
    named = {
        "ld.acquire.cta.shared::cta.b64": 1,
        "ld.relaxed.cta.shared::cta.b64": 1,
        "atom.acq_rel.cta.shared::cta.cas.b64": 1,
        "red.release.cta.shared::cta.add.u32": 1,
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
