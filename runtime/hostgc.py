"""Python's garbage collector made to run seldom while Numba compiles a kernel.

A cold compile allocates hundreds of thousands of objects that live until it ends (Numba's IR,
type maps, llvmlite's instructions), and at the default threshold (a collection every 700 net
allocations) the collector scans them again and again: compiling samples/stencil2d.gasync set off
618 collections, ~0.47 s of its ~2.6 s of CPU (bench/NOTES.md, B6). ``sparse`` raises the first
generation's threshold to ``COMPILE_THRESHOLD`` while a compile runs (7 collections, ~0.07 s; the
ones after it cost less, not more) and puts it back after: the first thread in sets it, the last
one out restores what was there, so compiles in several threads neither leave it raised nor
undo each other. ``COMPILE_THRESHOLD = 0`` leaves it alone.

(The collector held off over the launch call, the twenty-fifth session's reading of the launch's
35-70 us after a run's reset, measured no change: run 58, bench/NOTES.md. It was taken out.)
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

COMPILE_THRESHOLD = 50_000
_lock = threading.Lock()
_inside = 0  # threads within ``sparse``
_saved: tuple[int, ...] = ()  # the thresholds the first of them found


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
