"""runtime/runstats.py: a run's span from its executors' STATS rows."""

from __future__ import annotations

import numpy as np

from gasync.runtime.runstats import span_ms
from gasync.runtime.state import STAT_WORDS, Stat


def rows(*executors: tuple[int, int]) -> np.ndarray:
    """STATS with one row per (first look, exit) in ns; (0, 0): an executor that never exited."""
    out = np.zeros((len(executors), STAT_WORDS), np.int64)
    for k, (first, end) in enumerate(executors):
        if end:
            out[k, Stat.ELAPSED_NS] = end - first
            out[k, Stat.END_NS] = end
    return out


def test_span_is_the_earliest_first_look_to_the_latest_exit() -> None:
    # the longest executor's own time is 3 ms; the span 1_000 -> 6_000_000 ns is 5.999 ms
    stats = rows((1_000, 3_001_000), (3_000_000, 6_000_000), (2_000_000, 4_000_000))
    assert span_ms(stats) == 5.999
    assert float(stats[:, Stat.ELAPSED_NS].max()) / 1e6 == 3.0


def test_executors_that_never_exited_are_left_out() -> None:
    assert span_ms(rows((5_000, 1_005_000), (0, 0))) == 1.0
    assert span_ms(rows((0, 0), (0, 0))) == 0.0
