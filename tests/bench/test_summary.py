"""bench/summary.py: summary.json's entries from a synthetic results document (no GPU)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from summary import HEADLINES, build, merge, met, session, write_summary
from summary_page import headline

SOURCE = "tests/bench/synthetic-results.json"


def test_time_entries_are_gasyncs_figure_beside_the_best_baseline(synthetic_doc: dict[str, Any]) -> None:
    b = build(synthetic_doc, SOURCE)["benchmarks"]
    assert b["B1"]["value"] == 1.5 and b["B1"]["unit"] == "ns/task" and b["B1"]["goal"] == "<= 1"
    assert b["B1"]["baseline"] == 600.0 and b["B1"]["met"] is False
    same = b["B2_same_sm"]
    assert same["value"] == 6.0 and same["baseline"] == 0.05  # the faster of the two same-SM waits
    assert same["baseline_case"] == "hand-written ping-pong, same SM, load poll + exch"
    group = b["B2_group"]  # the group's row (suite2.GROUP's prefix), beside the same limit
    assert (group["value"], group["baseline"], group["goal"], group["met"]) == (1.2, 0.05, "< 0.3", False)


def test_the_group_entry_reads_the_row_suite2_writes() -> None:
    import suite2

    (h,) = [h for h in HEADLINES if h.key == "B2_group"]
    assert h.gasync.startswith(suite2.GROUP)


def test_b2_has_no_cross_sm_gasync_figure_but_keeps_the_cross_sm_limit(synthetic_doc: dict[str, Any]) -> None:
    b2 = build(synthetic_doc, SOURCE)["benchmarks"]["B2"]
    assert b2["value"] is None and b2["met"] is None and "cross-SM" in b2["note"]
    assert b2["baseline"] == 0.1 and b2["goal"] == "<= 0.3"


def test_ratios_divide_by_the_best_hand_written_kernel_of_the_run(synthetic_doc: dict[str, Any]) -> None:
    b = build(synthetic_doc, SOURCE)["benchmarks"]
    assert b["B4"]["value"] == pytest.approx(50 / 2500) and b["B4"]["baseline"] == 2500.0
    assert b["B4"]["baseline_case"] == "numba per-warp contiguous kernel" and b["B4"]["gasync"] == 50.0
    assert b["B4_cap64"]["value"] == pytest.approx(100 / 2500) and b["B4_cap64"]["met"] is None
    assert b["B5"]["value"] == pytest.approx(2400 / 2800) and b["B5"]["met"] is False
    assert b["B5a"]["value"] == pytest.approx(2900 / 3000) and b["B5a"]["met"] is True
    assert {k: e["unit"] for k, e in b.items() if k in ("B5", "B5a")} == {"B5": "ratio", "B5a": "ratio"}


def test_the_top_level_names_the_run(synthetic_doc: dict[str, Any]) -> None:
    s = build(synthetic_doc, SOURCE)
    assert s["commit"].startswith("0123456789") and s["gpu"].startswith("SYNTHETIC") and s["date"].startswith("2000")
    assert set(s["benchmarks"]) == {h.key for h in HEADLINES}
    assert all(e["source"] == SOURCE for e in s["benchmarks"].values())


def test_a_missing_row_is_null_with_a_note_never_a_guess(synthetic_doc: dict[str, Any]) -> None:
    synthetic_doc["rows"] = [r for r in synthetic_doc["rows"] if r["bench"] != "B5"]
    b5 = build(synthetic_doc, SOURCE)["benchmarks"]["B5"]
    assert b5["value"] is None and b5["baseline"] is None and b5["note"]


@pytest.mark.parametrize(
    "value, goal, want",
    [(1.0, "<= 1", True), (1.01, "<= 1", False), (0.3, "< 0.3", False), (0.9, ">= 0.9", True), (None, "<= 1", None)],
)
def test_met_reads_the_goal(value: float | None, goal: str, want: bool | None) -> None:
    assert met(value, goal) is want


def test_a_quick_run_writes_no_summary(synthetic_doc: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "summary.json"
    assert write_summary({**synthetic_doc, "quick": True}, SOURCE, path) is None
    assert not path.exists()


def test_parts_of_one_commit_merge_and_another_commit_replaces(synthetic_doc: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "summary.json"
    write_summary(synthetic_doc, "part1.json", path)
    part2 = {**synthetic_doc, "benchmarks": ["B5"], "rows": [r for r in synthetic_doc["rows"] if r["bench"] == "B5"]}
    part2["rows"][0] = {**part2["rows"][0], "value": 2660.0}
    write_summary(part2, "part2.json", path)
    b = json.loads(path.read_text())["benchmarks"]
    assert b["B5"]["value"] == pytest.approx(2660 / 2800) and b["B5"]["source"] == "part2.json"
    assert b["B1"]["value"] == 1.5 and b["B1"]["source"] == "part1.json"  # not run in part 2: kept
    other = {**part2, "machine": {**part2["machine"], "commit": "fedcba9876"}}
    assert merge(json.loads(path.read_text()), build(other, "x.json"), ["B5"])["benchmarks"]["B1"]["value"] is None


def test_a_failed_benchmark_says_so(synthetic_doc: dict[str, Any]) -> None:
    synthetic_doc["rows"] = [r for r in synthetic_doc["rows"] if r["bench"] != "B1"]
    synthetic_doc["errors"]["B1"] = "AssertionError: B1: out[i] != i at 3"
    b1 = build(synthetic_doc, SOURCE)["benchmarks"]["B1"]
    assert b1["value"] is None and b1["note"] == "failed: AssertionError: B1: out[i] != i at 3"


def test_b3_is_the_best_gasync_time_per_step_over_the_persistent_kernels(synthetic_doc: dict[str, Any]) -> None:
    b3 = build(synthetic_doc, SOURCE)["benchmarks"]["B3"]
    assert b3["value"] == pytest.approx(5.0 / 2.0) and b3["unit"] == "ratio" and b3["goal"] == "<= 2.0"
    assert b3["gasync"] == 5.0 and b3["gasync_unit"] == "us/step" and b3["case"].startswith("gasync best (")
    assert b3["baseline"] == 2.0 and b3["baseline_case"] == "hand-written persistent kernel"
    assert b3["met"] is False  # lower is better: 2.5 is over the goal
    synthetic_doc["rows"] = [r for r in synthetic_doc["rows"] if r["case"] != "hand-written persistent kernel"]
    alone = build(synthetic_doc, SOURCE)["benchmarks"]["B3"]
    assert alone["value"] is None and "partly failed" in alone["note"]  # the run's error is named, no guess


def test_b2b_and_b6_are_gasyncs_own_figures_without_a_baseline(synthetic_doc: dict[str, Any]) -> None:
    b = build(synthetic_doc, SOURCE)["benchmarks"]
    assert b["B2b"]["value"] == 70.0 and b["B2b"]["unit"] == "ns/await" and b["B2b"]["met"] is False
    assert b["B2b"]["baseline"] is None and b["B2b"]["baseline_note"].startswith("none")
    assert b["B6"]["value"] is None and b["B6"]["note"] == "failed: RuntimeError: synthetic failure"
    synthetic_doc["rows"].append({"bench": "B6", "case": "stencil2d cold: compile_s", "value": 9.0, "unit": "s"})
    synthetic_doc["rows"].append({"bench": "B6", "case": "stencil2d cached: compile_s", "value": 0.6, "unit": "s"})
    del synthetic_doc["errors"]["B6"]
    b = build(synthetic_doc, SOURCE)["benchmarks"]
    assert (b["B6"]["value"], b["B6_cached"]["value"]) == (9.0, 0.6)
    # issue 12's goals: <= 2 s cold, <= 0.3 s cached
    assert (b["B6"]["goal"], b["B6"]["met"], b["B6_cached"]["goal"]) == ("<= 2", False, "<= 0.3")
    synthetic_doc["rows"][-1]["value"] = 0.004
    assert build(synthetic_doc, SOURCE)["benchmarks"]["B6_cached"]["met"] is True


def test_checked_and_unchecked_entries_sit_beside_the_headline_keys(synthetic_doc: dict[str, Any]) -> None:
    b = build(synthetic_doc, SOURCE)["benchmarks"]
    assert list(b)[: len(b) - 16] == [
        "B1",
        "B2",
        "B2_same_sm",
        "B2_group",
        "B2b",
        "B3",
        "B4",
        "B4_cap64",
        "B5",
        "B5a",
        "B7",
        "B8",
        "B6",
        "B6_cached",
    ]
    assert b["B5_checked"]["value"] == b["B5"]["value"] and b["B5_checked"]["goal"] == ">= 0.95"
    assert b["B5_unchecked"]["value"] == pytest.approx(2460 / 2800) and b["B5_unchecked"]["goal"] == ""
    assert b["B5_unchecked"]["case"] == "unchecked: gasync bulk for, N=268,435,456"
    assert b["B1_unchecked"]["value"] == 1.45 and b["B1_checked"]["value"] == 1.5
    assert b["B2_same_sm_unchecked"]["value"] == 5.94
    assert b["B4_unchecked"]["gasync"] == pytest.approx(50.5) and b["B5a_unchecked"]["gasync"] == pytest.approx(2958)
    assert b["B2_unchecked"]["value"] is None  # no cross-SM gasync row in this run, checked or not


def test_a_sessions_summary_takes_each_benchmark_from_the_newest_run_that_ran_it(
    synthetic_doc: dict[str, Any],
) -> None:
    older = json.loads(json.dumps(synthetic_doc))
    older["machine"]["commit"] = "0123456789abcdef"
    newer = json.loads(json.dumps(synthetic_doc))
    newer["rows"] = [r for r in newer["rows"] if r["bench"] == "B1"]
    newer["benchmarks"], newer["errors"] = ["B1"], {}
    for r in newer["rows"]:
        r["value"] = 2.0 * r["value"]
    got = session([(older, "old.json"), (newer, "new.json")])
    b = got["benchmarks"]
    assert got["commit"] == newer["machine"]["commit"] and b["B1"]["value"] == 3.0 and "commit" not in b["B1"]
    assert b["B5"]["value"] == build(older, "old.json")["benchmarks"]["B5"]["value"]
    assert b["B5"]["commit"] == "0123456789abcdef" and b["B5"]["source"] == "old.json"
    page = "\n".join(headline(got, "summary.json"))
    assert "| B5 | " in page and ", at 0123456789 |" in page and 'marked "at" a commit' in page
