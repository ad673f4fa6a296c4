"""The per-task profile of a traced run, from a synthetic RawTrace with known times."""

from __future__ import annotations

from unit.test_viz_trace import synthetic  # tests/ is on sys.path (conftest.py)

from gasync.cli.summary import profile_tables
from gasync.runtime.options import Result
from gasync.runtime.profile import TaskProfile, duration, profile


def test_profile_of_the_synthetic_trace() -> None:
    # boss: one poll of 300 ns; each worker: 4 polls of 700 ns, 1,300 ns apart (end to start),
    # suspended at s1 each time; 6 wakes between the workers, one by the host, one by a timer
    prof = profile(synthetic(rounds=4, executors=2))
    assert list(prof) == ["boss", "worker"]
    assert prof["boss"] == TaskProfile(instances=1, polls=1, busy_us=0.3, longest_poll_us=0.3)
    assert prof["worker"] == TaskProfile(
        instances=2,
        polls=8,
        busy_us=5.6,
        wait_us=7.8,
        wakes=8,
        longest_poll_us=0.7,
        waiting_on={"s1 line 3: yield_now()": 7.8},
    )


def test_the_json_of_a_traced_result_has_the_profile() -> None:
    traced = Result({}, {}, {}, {}, trace=synthetic())
    data = traced.to_json()
    assert data["profile"]["worker"] == {
        "instances": 2,
        "polls": 8,
        "busy_us": 5.6,
        "wait_us": 7.8,
        "wakes": 8,
        "longest_poll_us": 0.7,
        "waiting_on": {"s1 line 3: yield_now()": 7.8},
    }
    assert "profile" not in Result({}, {}, {}, {}).to_json()
    assert Result({}, {}, {}, {}).profile is None


def test_the_tables_have_a_row_per_task_and_per_await_point() -> None:
    table, waits = profile_tables(profile(synthetic()))
    assert table.row_count == 2 and waits.row_count == 1
    assert [c.header for c in table.columns] == [
        "task", "instances", "polls", "busy", "waiting", "wakes", "longest poll",
    ]  # fmt: skip
    assert list(table.columns[3].cells) == ["300 ns", "5.6 us"]


def test_no_waits_table_where_no_task_waited() -> None:
    prof = profile(synthetic())
    for p in prof.values():
        p.waiting_on.clear()
    assert [t.title for t in profile_tables(prof)] == ["profile (from the trace)"]


def test_durations_read_in_an_adapted_unit() -> None:
    assert [duration(us) for us in (0.85, 12.5, 250.0, 3200.0, 250_000.0, 1_500_000.0)] == [
        "850 ns", "12.5 us", "250 us", "3.2 ms", "250 ms", "1.5 s",
    ]  # fmt: skip
