"""Loads, stores and read-modify-writes with a named memory order, for both backends.

On the GPU each is one PTX instruction at GPU scope through a small
``@intrinsic`` (``ld.acquire.gpu``, ``st.release.gpu``,
``atom.acq_rel.gpu.cas`` ...), so that a hand-off costs the round trips it
needs and no ``membar.gl`` (a full fence, 140-210 ns on the H200). Relaxed
read-modify-writes are Numba's ``cuda.atomic`` functions.

Under the simulator every read-modify-write of every word takes one lock.
Numba's simulator takes a different lock per kind of atomic (``cas``,
``exch``, ``add``), so a ``cas`` and an ``exch`` of one word there are not
atomic with respect to each other; through these helpers they are. Loads and
stores are plain (the GIL makes an aligned word's access whole), and orders
are meaningless there: memory-order mistakes show only on the GPU.
"""

from __future__ import annotations

import threading

from numba import config, cuda

from gasync.runtime import linked

SIM = bool(config.ENABLE_CUDASIM)
# A small helper that every caller gets inlined: NVVM inlines it (``forceinline``), and
# Numba types and lowers it once per signature (kept on disk: runtime/linked.py), where
# ``inline=True`` (Numba's own inlining) types its body again at every call site: a cold
# compile spent that much longer. The simulator's jit has no forceinline (nor needs one).
INLINE = linked.inline
PROGRAM_INLINE = linked.program_inline  # the same for a function of the generated code (not kept)

if SIM:
    _lock = threading.Lock()

    def ld_acquire(arr, i):  # type: ignore[no-untyped-def]
        return arr[i]

    def ld_relaxed(arr, i):  # type: ignore[no-untyped-def]
        return arr[i]

    def st_release(arr, i, value):  # type: ignore[no-untyped-def]
        arr[i] = value

    def st_relaxed(arr, i, value):  # type: ignore[no-untyped-def]
        arr[i] = value

    def fence_acq_rel():  # type: ignore[no-untyped-def]
        return None

    def fence_acquire():  # type: ignore[no-untyped-def]
        return None

    def fence_sc():  # type: ignore[no-untyped-def]
        return None  # the simulator's threads take turns: every order is sequential there

    def cas(arr, i, old, new):  # type: ignore[no-untyped-def]
        with _lock:
            cur = arr[i]
            if cur == old:
                arr[i] = new
            return cur

    def _apply(arr, i, f):  # type: ignore[no-untyped-def]
        with _lock:
            cur = arr[i]
            arr[i] = f(cur)
            return cur

    def exch(arr, i, value):  # type: ignore[no-untyped-def]
        return _apply(arr, i, lambda _: value)

    def add(arr, i, value):  # type: ignore[no-untyped-def]
        return _apply(arr, i, lambda c: c + value)

    def sub(arr, i, value):  # type: ignore[no-untyped-def]
        return _apply(arr, i, lambda c: c - value)

    def amax(arr, i, value):  # type: ignore[no-untyped-def]
        return _apply(arr, i, lambda c: max(c, value))

    def amin(arr, i, value):  # type: ignore[no-untyped-def]
        return _apply(arr, i, lambda c: min(c, value))

    def aand(arr, i, value):  # type: ignore[no-untyped-def]
        return _apply(arr, i, lambda c: c & value)

    def aor(arr, i, value):  # type: ignore[no-untyped-def]
        return _apply(arr, i, lambda c: c | value)

    def ananmax(arr, i, value):  # type: ignore[no-untyped-def]
        return _apply(arr, i, lambda c: value if c != c else c if value != value else max(c, value))

    def ananmin(arr, i, value):  # type: ignore[no-untyped-def]
        return _apply(arr, i, lambda c: value if c != c else c if value != value else min(c, value))

    cas_acq_rel = cas_release = cas
    exch_release = exch
    add_release = add_acq_rel = add
    # the .cta forms (a group's shared memory, runtime/devicegroups.py)
    ld_acquire_cta = ld_acquire
    ld_relaxed_cta = ld_relaxed
    st_release_cta = st_release
    st_relaxed_cta = st_relaxed
    cas_acq_rel_cta = cas

else:
    from gasync.runtime import ptxops as ptx  # the intrinsics' builders

    _fence_acq_rel = ptx.fence("fence.acq_rel.gpu;")
    _fence_acquire = ptx.fence("fence.acquire.gpu;")

    _ld_acquire = ptx.load("acquire")
    _ld_relaxed = ptx.load("relaxed")
    _st_release = ptx.store("release")
    _st_relaxed = ptx.store("relaxed")
    _cas_acq_rel = ptx.cas("acq_rel")
    _cas_release = ptx.cas("release")
    _exch_release = ptx.rmw("exch", "release")
    _add_release = ptx.rmw("add", "release")
    _add_acq_rel = ptx.rmw("add", "acq_rel")

    @INLINE
    def ld_acquire(arr, i):  # type: ignore[no-untyped-def]
        return _ld_acquire(arr, i)

    @INLINE
    def ld_relaxed(arr, i):  # type: ignore[no-untyped-def]
        return _ld_relaxed(arr, i)

    @INLINE
    def st_release(arr, i, value):  # type: ignore[no-untyped-def]
        _st_release(arr, i, value)

    @INLINE
    def st_relaxed(arr, i, value):  # type: ignore[no-untyped-def]
        """A store other SMs read without ordering anything before it (a flagged word)."""
        _st_relaxed(arr, i, value)

    @INLINE
    def fence_acq_rel():  # type: ignore[no-untyped-def]
        _fence_acq_rel()

    @INLINE
    def fence_acquire():  # type: ignore[no-untyped-def]
        """``fence.acquire.gpu`` after a relaxed load that saw a released value: the acquire
        pattern of the memory model, at the price of one invalidation of this SM's L1
        (``CCTL.IVALL``, no round trip), where ``ld.acquire`` pays that invalidation at every
        look of a spin loop."""
        _fence_acquire()

    @INLINE
    def fence_sc():  # type: ignore[no-untyped-def]
        """``fence.sc.gpu`` (``membar.gl``): the one fence that keeps a store before a later load
        of another word (a release does not: the load may be performed first)."""
        cuda.threadfence()

    @INLINE
    def cas_acq_rel(arr, i, old, new):  # type: ignore[no-untyped-def]
        return _cas_acq_rel(arr, i, old, new)

    @INLINE
    def cas_release(arr, i, old, new):  # type: ignore[no-untyped-def]
        return _cas_release(arr, i, old, new)

    @INLINE
    def exch_release(arr, i, value):  # type: ignore[no-untyped-def]
        return _exch_release(arr, i, value)

    @INLINE
    def add_release(arr, i, value):  # type: ignore[no-untyped-def]
        return _add_release(arr, i, value)

    @INLINE
    def add_acq_rel(arr, i, value):  # type: ignore[no-untyped-def]
        return _add_acq_rel(arr, i, value)

    @INLINE
    def cas(arr, i, old, new):  # type: ignore[no-untyped-def]
        return cuda.atomic.cas(arr, i, old, new)

    @INLINE
    def exch(arr, i, value):  # type: ignore[no-untyped-def]
        return cuda.atomic.exch(arr, i, value)

    @INLINE
    def add(arr, i, value):  # type: ignore[no-untyped-def]
        return cuda.atomic.add(arr, i, value)

    @INLINE
    def sub(arr, i, value):  # type: ignore[no-untyped-def]
        return cuda.atomic.sub(arr, i, value)

    @INLINE
    def amax(arr, i, value):  # type: ignore[no-untyped-def]
        return cuda.atomic.max(arr, i, value)

    @INLINE
    def amin(arr, i, value):  # type: ignore[no-untyped-def]
        return cuda.atomic.min(arr, i, value)

    @INLINE
    def aand(arr, i, value):  # type: ignore[no-untyped-def]
        return cuda.atomic.and_(arr, i, value)

    @INLINE
    def aor(arr, i, value):  # type: ignore[no-untyped-def]
        return cuda.atomic.or_(arr, i, value)

    @INLINE
    def ananmax(arr, i, value):  # type: ignore[no-untyped-def]
        """max, a NaN being no candidate."""
        return cuda.atomic.nanmax(arr, i, value)

    @INLINE
    def ananmin(arr, i, value):  # type: ignore[no-untyped-def]
        """min, a NaN being no candidate."""
        return cuda.atomic.nanmin(arr, i, value)

    # ---- .cta scope: a group's words in its block's shared memory (runtime/devicegroups.py).
    # A shared array returned by a device function is a generic pointer; each access takes it to
    # its shared-window form and names the state space (ptxops.on_shared): LDS, STS and ATOMS,
    # not generic accesses the hardware must place first (a generic atom is a branch per space).
    _ld_acquire_cta = ptx.load("acquire", "cta.shared")
    _ld_relaxed_cta = ptx.load("relaxed", "cta.shared")
    _st_release_cta = ptx.store("release", "cta.shared")
    _st_relaxed_cta = ptx.store("relaxed", "cta.shared")
    _cas_acq_rel_cta = ptx.cas("acq_rel", "cta.shared")

    # compute-sanitizer's racecheck reports a plain release and acquire of a flag in shared memory
    # as a race, and no atomic access (scripts/racecheck_probe.py: flag 2 hazards, atomflag 1,
    # the data's; bench/NOTES.md run 71). With CTA_ATOMIC_STORES every store of a group's words
    # below is an exchange (as cheap as the store: one ATOMS.EXCH on the word's shared-window
    # address), so that no plain write of them is left (their claims and counts are atomics
    # already); with CTA_ATOMIC_LOADS every load is a compare-and-swap of 0 for 0, which changes
    # no word (one ATOMS.CAS.64 and a zeroed register pair: B7's kernel +6% instructions, so off
    # until racecheck is seen to need it: the probe's exchflag, an atomic store and plain loads).
    CTA_ATOMIC_STORES = True
    CTA_ATOMIC_LOADS = False

    _read_acquire_cta = ptx.read("acquire")
    _read_relaxed_cta = ptx.read("relaxed")
    _exch_release_cta = ptx.rmw("exch", "release", "cta.shared")
    _exch_relaxed_cta = ptx.rmw("exch", "relaxed", "cta.shared")

    @cuda.jit(device=True, inline=True)
    def ld_acquire_cta(arr, i):  # type: ignore[no-untyped-def]
        """Pairs with ``st_release_cta`` of the same word by another warp of the block."""
        if CTA_ATOMIC_LOADS:
            return _read_acquire_cta(arr, i)
        return _ld_acquire_cta(arr, i)

    @cuda.jit(device=True, inline=True)
    def ld_relaxed_cta(arr, i):  # type: ignore[no-untyped-def]
        """A word another warp of the block writes, read afresh each time (a spin's look: never
        hoisted out of its loop), ordering nothing."""
        if CTA_ATOMIC_LOADS:
            return _read_relaxed_cta(arr, i)
        return _ld_relaxed_cta(arr, i)

    @cuda.jit(device=True, inline=True)
    def st_release_cta(arr, i, value):  # type: ignore[no-untyped-def]
        """Publishes this warp's earlier shared-memory writes to ``ld_acquire_cta`` of the word."""
        if CTA_ATOMIC_STORES:
            _exch_release_cta(arr, i, value)
        else:
            _st_release_cta(arr, i, value)

    @cuda.jit(device=True, inline=True)
    def st_relaxed_cta(arr, i, value):  # type: ignore[no-untyped-def]
        """A word that only this warp writes and others watch (a lone end's position), ordering
        nothing: an exchange where racecheck is to see no plain write (CTA_ATOMIC_STORES)."""
        if CTA_ATOMIC_STORES:
            _exch_relaxed_cta(arr, i, value)
        else:
            _st_relaxed_cta(arr, i, value)

    @cuda.jit(device=True, inline=True)
    def cas_acq_rel_cta(arr, i, old, new):  # type: ignore[no-untyped-def]
        """A position claimed among the block's warps: acquires the previous claimer's release."""
        return _cas_acq_rel_cta(arr, i, old, new)
