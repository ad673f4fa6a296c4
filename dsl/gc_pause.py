"""Pausing Python's cyclic garbage collector while a stage builds its data.

Parsing and planning allocate hundreds of thousands of small objects and free
almost none of them until the stage ends, so every collection of the oldest
generation walks a heap that keeps growing: on a 1 MB program the collector
made parsing about twice as slow (bench/NOTES.md, issue 10). The objects
are trees without cycles, freed by reference counting as usual; the
collector runs again, as normal, once the outermost pause ends.

Re-enabling it alone would make the next allocation collect the youngest
generation, which now holds every object the stage made (0.1-0.2 s for a
1 MB program, once after parsing and once after planning). So the pause ends
with ``gc.freeze()`` then ``gc.unfreeze()``: together they move every tracked
object into the oldest generation, unscanned, and reset the allocation count.
Nothing is lost: a cycle among those objects is found by the next full
collection, as it would have been once it had aged there.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic collector inside the block, unless it already was."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.freeze()  # everything to the permanent generation, the count to zero,
            gc.unfreeze()  # then all of it to the oldest generation
            gc.enable()
