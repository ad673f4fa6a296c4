"""scripts/trace_summary.py, what a traced run's task instances spend their time on, over a
hand-written trace: two loader polls and three compute polls an instance, times in ns, each
poll leaving its instance in state 1 (``s1``: no label given)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from gasync.runtime.trace import POLL, WAKE, RawTrace

path = Path(__file__).parents[2] / "scripts" / "trace_summary.py"
spec = importlib.util.spec_from_file_location("trace_summary", path)
assert spec is not None and spec.loader is not None
trace_summary = importlib.util.module_from_spec(spec)
spec.loader.exec_module(trace_summary)


def poll(inst: int, t0: int, t1: int) -> tuple[int, int, int, int, int, int, int, int]:
    return (POLL, 0, inst, 0, 1, t0, t1, 0)


def test_each_task_gets_its_polls_time_life_and_gaps_and_the_run_its_concurrency() -> None:
    events = [
        poll(0, 0, 1_000), poll(0, 5_000, 6_000),  # loader 0: 2 us in polls, life 6 us, a 4 us gap
        poll(1, 10_000, 11_000), poll(1, 15_000, 16_000),  # loader 1, after loader 0 ended
        poll(2, 0, 2_000), poll(2, 4_000, 6_000), poll(2, 8_000, 10_000),  # compute 0: gaps of 2 us
        poll(3, 10_000, 12_000), poll(3, 14_000, 16_000), poll(3, 18_000, 20_000),
        (WAKE, 0, 2, 0, 0, 3_000, 3_000, 0),  # not a poll: not counted
    ]  # fmt: skip
    raw = RawTrace(events, 0, 64, [("loader", 0, 2), ("compute", 2, 2)], {}, 2, "sim")
    lines = trace_summary.summarize(raw)
    assert lines[2:] == [
        "| loader | 2 | 2 | 2.00 | 4.00 | s1 | 6.0 |",
        "| compute | 2 | 3 | 6.00 | 4.00 | s1 | 10.0 |",
        "at most 2 task instances alive at once; 0 events dropped",
        # starts 0, 10, 0, 10 us; ends 6, 16, 10, 20; lives 6, 6, 10, 10 (nearest rank)
        "over all instances, us after the first poll (p10 / p50 / p90 / max): "
        "first poll 0.0 / 10.0 / 10.0 / 10.0; last poll's end 6.0 / 16.0 / 20.0 / 20.0; "
        "life 6.0 / 10.0 / 10.0 / 10.0",
    ]
