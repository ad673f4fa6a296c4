"""runtime/hostgc.py: the collector's first threshold raised inside ``sparse`` and put back after."""

from __future__ import annotations

import gc
import threading

import pytest

from gasync.runtime import hostgc


@pytest.fixture(autouse=True)
def collector_on() -> object:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_a_compile_raises_the_first_threshold_and_puts_it_back() -> None:
    before = gc.get_threshold()
    with hostgc.sparse():
        assert gc.get_threshold() == (hostgc.COMPILE_THRESHOLD, *before[1:])
        with hostgc.sparse():  # (a compile within a compile: the outer one restores)
            assert gc.get_threshold()[0] == hostgc.COMPILE_THRESHOLD
        assert gc.get_threshold()[0] == hostgc.COMPILE_THRESHOLD
    assert gc.get_threshold() == before


def test_compiles_in_two_threads_leave_the_threshold_as_it_was() -> None:
    """The first in raises it, the last out restores it, whichever order they leave in."""
    before = gc.get_threshold()
    inside, leave_first = threading.Barrier(2), threading.Event()
    seen: list[int] = []

    def compile_(first: bool) -> None:
        with hostgc.sparse():
            inside.wait(10)
            if not first:
                leave_first.wait(10)
            seen.append(gc.get_threshold()[0])
        if first:
            leave_first.set()

    threads = [threading.Thread(target=compile_, args=(k == 0,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == [hostgc.COMPILE_THRESHOLD] * 2  # the second still compiling when the first left
    assert gc.get_threshold() == before


def test_a_threshold_already_higher_is_kept() -> None:
    before = gc.get_threshold()
    gc.set_threshold(10 * hostgc.COMPILE_THRESHOLD, *before[1:])
    try:
        with hostgc.sparse():
            assert gc.get_threshold()[0] == 10 * hostgc.COMPILE_THRESHOLD
        assert gc.get_threshold()[0] == 10 * hostgc.COMPILE_THRESHOLD
    finally:
        gc.set_threshold(*before)
