"""bench/report.py: docs/performance.md from a synthetic results document and summary (no GPU).

Everything is written under tmp_path: the real docs/performance.md and bench/results are only read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import report
from summary import build

SOURCE = "tests/bench/synthetic-results.json"


def _write(tmp_path: Path, doc: dict[str, Any], name: str = "run.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_the_page_opens_with_the_headline_table_from_summary_json(
    synthetic_doc: dict[str, Any], tmp_path: Path
) -> None:
    summary = _write(tmp_path, build(synthetic_doc, SOURCE), "summary.json")
    out = tmp_path / "performance.md"
    report.write_report([_write(tmp_path, synthetic_doc)], out, summary)
    page = out.read_text()
    assert page.index("## Headline") < page.index("## The run") < page.index("## Results")
    head = page[page.index("## Headline") : page.index("## The run")]
    assert "summary.json`: commit 0123456789" in head and "SYNTHETIC GPU" in head
    assert "| B1 | ns per task, 1M tasks (queue executor) | 1.5 ns/task | 600 ns/task" in head
    assert (
        "| B4 | " in head and "| 0.02 (50 GB/s) |" in head and "2,500 GB/s (numba per-warp contiguous kernel)" in head
    )
    assert "| B2 | us per hand-off across SMs | not measured: no cross-SM gasync figure yet" in head
    assert "| B5a | " in head and "| >= 0.9 | met |" in head


def test_without_summary_json_the_headline_says_so(synthetic_doc: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "performance.md"
    report.write_report([_write(tmp_path, synthetic_doc)], out, tmp_path / "absent.json")
    page = out.read_text()
    head = page[page.index("## Headline") : page.index("## The run")]
    assert "absent.json` yet: bench/run.py writes it" in head and "|" not in head


def test_the_results_table_compares_with_the_best_hand_written_kernel(synthetic_doc: dict[str, Any]) -> None:
    table, findings = report.summarize(synthetic_doc)
    b5a = next(line for line in table if line.startswith("| B5a | task array"))
    assert "3,000 GB/s (numba per-warp contiguous kernel)" in b5a and "| 0.967 |" in b5a and "| met |" in b5a
    same_sm = next(line for line in table if line.startswith("| B2 | hand-off, same SM"))
    assert "120x the limit" in same_sm  # 6.0 us against 0.05 us
    assert any("B6" in f and "failed: RuntimeError: synthetic failure" in f for f in findings)
    assert any(f.startswith("B2 (hand-off, cross SM) has no gasync figure yet") for f in findings)


def test_parts_of_a_run_merge_later_rows_replacing_earlier(synthetic_doc: dict[str, Any]) -> None:
    part2 = {
        **synthetic_doc,
        "benchmarks": ["B5"],
        "rows": [{**r, "value": 1.0} for r in synthetic_doc["rows"] if r["bench"] == "B5"],
        "errors": {},
        "machine": {**synthetic_doc["machine"], "commit": "fedcba9876543210"},
    }
    doc = report.merged([synthetic_doc, part2])
    assert {r["value"] for r in doc["rows"] if r["bench"] == "B5"} == {1.0}
    assert any(r["bench"] == "B1" for r in doc["rows"]) and "B6" in doc["errors"]
    assert doc["machine"]["commit"] == "0123456789, fedcba9876"


def test_rows_of_results_written_before_the_rename_still_find_their_lines() -> None:
    rows = [
        {"bench": "B2", "case": "gasync ping-pong hand-off", "value": 7.6, "unit": "us/hand-off"},
        {"bench": "B4", "case": "gasync loader + compute, N=67,108,864", "value": 70.0, "unit": "GB/s"},
    ]
    assert [r["case"] for r in report.modern(rows)] == [
        "gasync ping-pong hand-off, same SM",
        "gasync loader + compute, capacity 64, N=67,108,864",
    ]


def test_every_committed_results_file_still_renders(tmp_path: Path) -> None:
    files = sorted(p for p in report.RESULTS.glob("*.json") if not p.name.startswith(report.COMPILE_TIME))
    files = [p for p in files if p != report.SUMMARY]
    assert files
    for path in files:
        out = tmp_path / f"{path.stem}.md"
        report.write_report([path], out, tmp_path / "absent.json")
        assert "## Results" in out.read_text()


def test_b3s_lines_compare_each_variant_with_the_persistent_kernel(synthetic_doc: dict[str, Any]) -> None:
    table, findings = report.summarize(synthetic_doc)
    reduce = next(line for line in table if line.startswith("| B3 | parallel for reduce max |"))
    assert "| 5 us/step | 2 us/step | 2.5x the limit |" in reduce
    best = next(line for line in table if line.startswith("| B3 | best gasync / persistent kernel |"))
    assert "| 2.5 | <= 2.0 | **not met** |" in best
    cupy = next(line for line in table if line.startswith("| B3 | best gasync / CuPy host loop |"))
    assert "| 0.25 | < 1 | met |" in cupy
    assert any(f.startswith("B3 partly failed: CUDA graph WHILE loop (one fused kernel)") for f in findings)


def test_the_page_shows_each_figure_with_checks_on_and_off_and_their_cost(
    synthetic_doc: dict[str, Any], tmp_path: Path
) -> None:
    summary = _write(tmp_path, build(synthetic_doc, SOURCE), "summary.json")
    out = tmp_path / "performance.md"
    report.write_report([_write(tmp_path, synthetic_doc)], out, summary)
    page = out.read_text()
    table = page[page.index("## Bounds checks on and off") : page.index("## The run")]
    assert "| B1 | 1.5 ns/task | 1.45 ns/task | 1.03 | **not met** | none: the same code |" in table  # 1.5 / 1.45
    assert "| B5 | 0.857 (2,400 GB/s) | 0.879 (2,460 GB/s) | 1.02 | met | 3 access sites |" in table  # 2460 / 2400
    assert "| B2 | not measured" in table and "| not measured |  |" in table
    assert "| B5a | " in table and "| B4 | " in table and "| B2_same_sm | " in table
