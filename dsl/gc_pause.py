"""Pausing Python's cyclic garbage collector while a stage builds its data.

Parsing and planning allocate hundreds of thousands of small objects and free
almost none of them until the stage ends, so every collection of the oldest
generation walks a heap that keeps growing: on a 1 MB program the collector
made parsing about twice as slow (bench/NOTES.md, issue 10). The objects
are trees without cycles, freed by reference counting as usual; the
collector runs again, as normal, once the outermost pause ends.
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
            gc.enable()
