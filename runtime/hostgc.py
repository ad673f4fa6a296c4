"""Python's garbage collector held off while a GPU run's kernel is launched and waited for.

Why. A prepared launch's call takes ~15 us in a loop of launches but 35-70 us right after a
run's reset, whatever the reset's last operation (bench/NOTES.md, runs 38-40): in the probe,
marshalling one int64 took 14 us and the next 3 us. That is the shape of a collection started
by the first allocation after the threshold: a reset allocates a few hundred surviving objects
(device arrays, their dicts), so the launch's first tuple may set off a generation-1 collection,
which in a process that has compiled a program takes ~13-70 us (~140,000 tracked objects; a
full one ~50 ms). ``paused`` disables the collector from before the launch call to after the
synchronize, so such a collection runs after the kernel is done, outside ``kernel_ms``; the
objects it frees and the time it takes are the same. It restores the collector only where it
was enabled (a caller that disabled it keeps it off), and only for the thread's own window: the
simulator's launch does not use it (its kernel runs Python, which allocates throughout).

``PAUSE = False`` leaves the collector alone (the stage bench/NOTES.md measures against).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

PAUSE = True


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
