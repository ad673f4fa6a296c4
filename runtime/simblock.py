"""The simulator's block, ended whole as soon as one of its threads fails (simulator only).

Numba's simulator runs a block as one Python thread per CUDA thread, and its manager
(numba_cuda's ``simulator/kernel.py``, ``BlockManager.run``) re-raises the first exception
it sees; but it looks only at threads still alive, so a thread that raises and ends
between two of its looks is dropped unseen, and the manager then waits for every other
thread to end. In gasync's kernel that is never: the failed warp's other lanes wait at
their warp's barrier and the executors wait for work that will not come. An index out of
bounds under ``--unchecked`` (an IndexError) then stopped the run only at the simulator's
hard limit (its timeout and 30 s, 600 s without one), instead of at once with E0305, and
the threads left spinning took the warm worker's CPU from every later run.

``BlockManager`` here looks at every thread's exception, alive or not; once it has one it
sets ``FAILED`` and breaks the warps' barriers, so that every other thread raises
``Failed`` at its next barrier, pause or clock read (runtime/devicewarp.py,
runtime/devicelib.py), waits a little for them to end, and raises the first exception.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
from numba.cuda.simulator import kernel as simkernel

FAILED = threading.Event()  # set once a thread of the running block has raised
END_WAIT_S = 5.0  # how long a failed block's other threads get to end
_thread: Any = simkernel.BlockThread  # (numba's, untyped)


class Failed(Exception):
    """Raised in every other thread of a block one of whose threads failed."""


def check() -> None:
    """Raise ``Failed`` in a thread of a block that has failed."""
    if FAILED.is_set():
        raise Failed("another thread of the block failed")


class BlockManager(simkernel.BlockManager):
    """Numba's, but an exception is seen whether or not its thread has ended."""

    def run(self, grid_point: Any, *args: Any) -> None:
        from gasync.runtime.devicewarp import forget_warps

        FAILED.clear()
        threads: list[Any] = []
        for block_point in np.ndindex(*self._block_dim):
            t = _thread(lambda: self._f(*args), self, grid_point, block_point, self._debug)
            t.start()
            threads.append(t)
        while True:
            failed = next((t for t in threads if t.exception), None)
            if failed is not None:
                FAILED.set()
                forget_warps(abort=True)
                for t in threads:
                    t.abort = True
                    t.syncthreads_blocked = False
                    t.syncthreads_event.set()
                _join(threads)
                raise failed.exception[0].with_traceback(failed.exception[1])
            live = [t for t in threads if t.is_alive()]
            if not live:
                return
            if all(t.syncthreads_blocked for t in live):  # every live thread has come to the barrier
                for t in live:
                    t.syncthreads_blocked = False
                    t.syncthreads_event.set()


def _join(threads: list[Any]) -> None:
    end = time.monotonic() + END_WAIT_S
    for t in threads:
        t.join(max(0.0, end - time.monotonic()))


def install() -> None:
    """Launches of simulated kernels in this process use ``BlockManager`` (idempotent)."""
    simkernel.BlockManager = BlockManager  # type: ignore[misc]  # (the name its kernel launch looks up)
