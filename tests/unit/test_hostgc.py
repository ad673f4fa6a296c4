"""runtime/hostgc.py: Python's collector off inside ``paused`` and as it was after."""

from __future__ import annotations

import gc

import pytest

from gasync.runtime import hostgc


@pytest.fixture(autouse=True)
def collector_on() -> object:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_the_collector_is_off_inside_and_on_after() -> None:
    with hostgc.paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off() -> None:
    gc.disable()
    with hostgc.paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_it_is_on_again_after_an_exception() -> None:
    with pytest.raises(KeyboardInterrupt), hostgc.paused():
        raise KeyboardInterrupt
    assert gc.isenabled()


def test_without_pause_it_leaves_the_collector_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hostgc, "PAUSE", False)
    with hostgc.paused():
        assert gc.isenabled()
    assert gc.isenabled()
