"""B2's hand-written limits: one word handed back and forth between two warps, across SMs and within one SM.

The protocol: the word starts at 0; side ``s`` (0 or 1) owns turn ``t`` when
the word reads ``t`` and ``t % 2 == s``, and ends its turn by writing
``t + 1``. Lane 0 of each side plays ``rounds`` turns, so the word changes
hands ``2 x rounds`` times and ends at ``2 x rounds``; us per hand-off is
kernel time / (2 x rounds), as B2 divides gasync's kernel time.

- **cross SM**: two blocks of one warp each, the word in global memory. Each
  block records its ``%smid`` so the caller can check the blocks really ran
  on different SMs (a row that was not is not labelled cross SM).
- **same SM**: two warps of one block, the word in shared memory.

Two ways to wait (gpu-notes: a plain load in a spin loop is hoisted and read
once; these are not):

- ``cas``: poll with an atomic compare-and-swap of ``t`` to ``t + 1``: the
  read that sees the turn also hands it on (one atomic per hand-off);
- ``load``: poll with a load that stays in the loop (``ld.relaxed.gpu`` through
  gasync's ``devicelib.ld`` for global memory, an atomic add of 0 for shared
  memory), then hand on with an atomic exchange.

Every wait is bounded: after ``limit`` polls the side records the turn it
waited for in ``err`` and stops, so a broken protocol (or blocks that are not
co-resident) fails loudly instead of hanging the suite. The kernels also
run on the simulator (same SM only: it runs blocks one after another), which
is why ``cuda`` is a module global, as in baselines.py.
"""

from __future__ import annotations

import time
from functools import cache
from typing import Any

import numpy as np
from numba import config, cuda, int32

PLACEMENTS = ("cross SM", "same SM")
WAITS = {"cas": "CAS poll", "load": "load poll + exch"}
SPIN_LIMIT = 1 << 24  # polls per turn before the watchdog: seconds at ~0.1-0.2 us a poll


@cache
def smid() -> Any:
    """A device function returning the SM the calling thread runs on (%smid); 0 on the simulator."""
    if config.ENABLE_CUDASIM:
        return lambda: 0

    from llvmlite import ir as llvm_ir
    from numba import types
    from numba.cuda.extending import intrinsic

    @intrinsic
    def _smid(typingctx):  # type: ignore[no-untyped-def]
        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            fty = llvm_ir.FunctionType(llvm_ir.IntType(32), [])
            return builder.call(llvm_ir.InlineAsm(fty, "mov.u32 $0, %smid;", "=r", side_effect=True), [])

        return types.int32(), codegen

    @cuda.jit(device=True, inline=True)
    def read_smid():  # type: ignore[no-untyped-def]
        return _smid()

    return read_smid


@cache
def kernels() -> dict[tuple[str, str], Any]:
    """The four ping-pong kernels, keyed by (placement, wait); each takes (word, rounds, smids, err, limit)."""
    from gasync.runtime.devicelib import ld

    @cuda.jit(device=True, inline=True)
    def take_cas(word, turn, limit):  # type: ignore[no-untyped-def]
        spins = 0
        while cuda.atomic.cas(word, 0, turn, int32(turn + 1)) != turn:
            spins += 1
            if spins >= limit:
                return False
        return True

    @cuda.jit(device=True, inline=True)
    def take_global_load(word, turn, limit):  # type: ignore[no-untyped-def]
        spins = 0
        while ld(word, 0) != turn:
            spins += 1
            if spins >= limit:
                return False
        cuda.atomic.exch(word, 0, int32(turn + 1))
        return True

    @cuda.jit(device=True, inline=True)
    def take_shared_load(word, turn, limit):  # type: ignore[no-untyped-def]
        spins = 0
        while cuda.atomic.add(word, 0, int32(0)) != turn:
            spins += 1
            if spins >= limit:
                return False
        cuda.atomic.exch(word, 0, int32(turn + 1))
        return True

    read_smid = smid()

    def player(take):  # type: ignore[no-untyped-def]
        @cuda.jit(device=True, inline=True)
        def play(word, side, rounds, err, limit):  # type: ignore[no-untyped-def]
            for k in range(rounds):
                turn = int32(2 * k + side)
                if not take(word, turn, limit):
                    err[side] = turn + 1  # 0 means no error
                    return

        return play

    def cross_sm(take):  # type: ignore[no-untyped-def]
        play = player(take)

        @cuda.jit
        def pingpong_cross_sm(word, rounds, smids, err, limit):  # type: ignore[no-untyped-def]
            side = cuda.blockIdx.x
            if cuda.threadIdx.x == 0:
                smids[side] = read_smid()
                play(word, side, rounds, err, limit)

        return pingpong_cross_sm

    def same_sm(take):  # type: ignore[no-untyped-def]
        play = player(take)

        @cuda.jit
        def pingpong_same_sm(word, rounds, smids, err, limit):  # type: ignore[no-untyped-def]
            shared = cuda.shared.array(1, int32)
            side = cuda.threadIdx.x // 32
            if cuda.threadIdx.x == 0:
                shared[0] = 0
            cuda.syncthreads()
            if cuda.threadIdx.x % 32 == 0:
                smids[side] = read_smid()
                play(shared, side, rounds, err, limit)
                if side == 1:  # side 1 plays the last turn: the final value, for the check
                    word[0] = cuda.atomic.add(shared, 0, int32(0))

        return pingpong_same_sm

    return {
        ("cross SM", "cas"): cross_sm(take_cas),
        ("cross SM", "load"): cross_sm(take_global_load),
        ("same SM", "cas"): same_sm(take_cas),
        ("same SM", "load"): same_sm(take_shared_load),
    }


def launch_shape(placement: str) -> tuple[int, int]:
    """(blocks, threads per block): two blocks of one warp, or one block of two warps."""
    return (2, 32) if placement == "cross SM" else (1, 64)


def run_once(placement: str, wait: str, rounds: int, limit: int = SPIN_LIMIT) -> tuple[float, list[int]]:
    """One checked run: (seconds of launch + synchronisation, the two sides' SM ids)."""
    kernel = kernels()[(placement, wait)]
    blocks, threads = launch_shape(placement)
    word = cuda.to_device(np.zeros(1, np.int32))
    smids = cuda.to_device(np.full(2, -1, np.int32))
    err = cuda.to_device(np.zeros(2, np.int32))
    cuda.synchronize()
    t0 = time.perf_counter()
    kernel[blocks, threads](word, np.int64(rounds), smids, err, np.int64(limit))
    cuda.synchronize()
    elapsed = time.perf_counter() - t0
    check(placement, wait, rounds, int(word.copy_to_host()[0]), err.copy_to_host())
    return elapsed, [int(s) for s in smids.copy_to_host()]


def check(placement: str, wait: str, rounds: int, final: int, err: np.ndarray[Any, Any]) -> None:
    """The watchdog did not fire and the word ended at 2 x rounds."""
    label = f"{placement} ping-pong ({WAITS[wait]})"
    for side, turn in enumerate(err.tolist()):
        if turn:
            raise AssertionError(f"{label}: side {side} waited too long for turn {turn - 1} (watchdog)")
    if final != 2 * rounds:
        raise AssertionError(f"{label}: the word ended at {final}, expected {2 * rounds}")


def handoff(placement: str, wait: str, rounds: int, reps: int) -> tuple[list[float], list[int]]:
    """Seconds per hand-off of ``reps`` runs after an untimed one (JIT), and the SM ids of the last run."""
    run_once(placement, wait, min(rounds, 1000))
    samples, smids = [], []
    for _ in range(reps):
        elapsed, smids = run_once(placement, wait, rounds)
        samples.append(elapsed / (2 * rounds))
    return samples, smids
