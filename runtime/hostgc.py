"""Python's garbage collector held off while a GPU run's kernel is launched, and made to run
seldom while Numba compiles the kernel.

Why. A prepared launch's call takes ~15 us in a loop of launches but 35-70 us right after a
run's reset, whatever the reset's last operation (bench/NOTES.md, runs 38-40): in the probe,
marshalling one int64 took 14 us and the next 3 us. That is the shape of a collection started
by the first allocation after the threshold: a reset allocates a few hundred surviving objects
(device arrays, their dicts), so the launch's first tuple may set off a generation-1 collection,
which in a process that has compiled a program takes ~13-70 us (~140,000 tracked objects; a
full one ~50 ms). ``paused`` disables the collector over the launch call alone, so such a
collection runs once the kernel is on its way, while it runs (in the synchronize's own Python),
not before it starts; the objects it frees and the time it takes are the same, and a long kernel
does not hold the collector off. It restores the collector only where it was enabled (a caller
that disabled it keeps it off). The simulator's launch does not use it (its kernel runs Python,
which allocates throughout).

``PAUSE = False`` leaves the collector alone (the stage bench/NOTES.md measures against).

A cold compile allocates hundreds of thousands of objects that live until it ends (Numba's IR,
type maps, llvmlite's instructions), and at the default threshold (a collection every 700 net
allocations) the collector scans them again and again: compiling samples/stencil2d.gasync set off
618 collections, ~0.47 s of its ~2.6 s of CPU (bench/NOTES.md, B6). ``sparse`` raises the first
generation's threshold to ``COMPILE_THRESHOLD`` while a compile runs (7 collections, ~0.07 s; the
ones after it cost less, not more) and puts it back after: the first thread in sets it, the last
one out restores what was there, so compiles in several threads neither leave it raised nor
undo each other. ``COMPILE_THRESHOLD = 0`` leaves it alone.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

PAUSE = True
COMPILE_THRESHOLD = 50_000
_lock = threading.Lock()
_inside = 0  # threads within ``sparse``
_saved: tuple[int, ...] = ()  # the thresholds the first of them found


@contextmanager
def paused() -> Iterator[None]:
    """The collector off within the block where it was on and PAUSE is set; as it was after."""
    hold = PAUSE and gc.isenabled()
    if hold:
        gc.disable()
    try:
        yield
    finally:
        if hold:
            gc.enable()


@contextmanager
def sparse() -> Iterator[None]:
    """The first generation's threshold at least COMPILE_THRESHOLD within the block."""
    global _inside, _saved
    with _lock:
        if _inside == 0:
            _saved = gc.get_threshold()
            if COMPILE_THRESHOLD > _saved[0]:
                gc.set_threshold(COMPILE_THRESHOLD, *_saved[1:])
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0:
                gc.set_threshold(*_saved)
