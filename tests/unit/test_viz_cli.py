"""``gasync graph --states`` and ``gasync schedule`` as a user runs them (a subprocess)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from unit.test_viz_trace import synthetic  # tests/ is on sys.path (conftest.py)

from gasync.viz.perfetto import to_chrome_trace

SAMPLE = Path(__file__).parents[2] / "samples" / "join_select.gasync"
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's 'dot' is not installed (run 'make dot')")


def gasync(
    *args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    res = subprocess.run(
        [sys.executable, "-m", "gasync", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env=env,
    )
    assert "Traceback" not in res.stderr
    return res


@pytest.fixture
def trace_json(tmp_path: Path) -> Path:
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(to_chrome_trace(synthetic())))
    return path


def test_graph_states_prints_dot() -> None:
    res = gasync("graph", SAMPLE, "--states")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("digraph states {")
    assert "subgraph cluster_consumer" in res.stdout


def test_graph_states_dot_file_by_suffix(tmp_path: Path) -> None:
    res = gasync("graph", SAMPLE, "--states", "-o", tmp_path / "m.dot")
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "m.dot").read_text().startswith("digraph states {")


@needs_dot
def test_graph_states_svg(tmp_path: Path) -> None:
    res = gasync("graph", SAMPLE, "--states", "-o", tmp_path / "m.svg")
    assert res.returncode == 0, res.stderr
    svg = (tmp_path / "m.svg").read_text()
    ET.fromstring(svg)
    assert "consumer" in svg


def test_graph_of_a_bad_program_exits_1(tmp_path: Path) -> None:
    bad = tmp_path / "bad.gasync"
    bad.write_text("task main {\n    let x = 5\n}\n")
    res = gasync("graph", bad, "--states")
    assert res.returncode == 1
    assert "error[E0102]: expected ';'" in res.stderr


def test_graph_image_without_dot_is_a_usage_error(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": str(tmp_path)}  # no Graphviz on this PATH
    res = gasync("graph", SAMPLE, "--states", "-o", tmp_path / "m.png", env=env)
    assert res.returncode == 2
    assert "Graphviz's 'dot' program is not installed" in res.stderr
    assert "make dot" in res.stderr


def test_graph_image_to_stdout_is_a_usage_error() -> None:
    res = gasync("graph", SAMPLE, "--states", "--format", "svg")
    assert res.returncode == 2
    assert "give -o FILE" in res.stderr


def test_schedule_prints_dot(trace_json: Path) -> None:
    res = gasync("schedule", trace_json)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("digraph schedule {")
    assert "layout=neato" in res.stdout


@needs_dot
def test_schedule_svg(trace_json: Path, tmp_path: Path) -> None:
    res = gasync("schedule", trace_json, "-o", tmp_path / "s.svg")
    assert res.returncode == 0, res.stderr
    svg = (tmp_path / "s.svg").read_text()
    ET.fromstring(svg)
    assert "executor 1" in svg and "worker" in svg


def test_schedule_of_a_missing_file_exits_2(tmp_path: Path) -> None:
    res = gasync("schedule", tmp_path / "nope.json")
    assert res.returncode == 2
    assert res.stderr == f"gasync: error: no such file: {tmp_path / 'nope.json'}\ntry 'gasync schedule --help'\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [("not json", "not JSON"), ('{"traceEvents": []}', "not a trace written by 'gasync run --trace'")],
)
def test_schedule_of_a_foreign_file_exits_1(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "t.json"
    path.write_text(text)
    res = gasync("schedule", path)
    assert res.returncode == 1
    assert message in res.stderr


def test_run_help_lists_trace_and_schedule() -> None:
    res = gasync("run", "--help")
    assert res.returncode == 0
    assert "--trace" in res.stdout and "--schedule" in res.stdout


@pytest.mark.parametrize("name", ["g.jpg", "g", "g.svgz"])
def test_an_unknown_output_suffix_is_a_usage_error(tmp_path: Path, name: str) -> None:
    res = gasync("graph", SAMPLE, "-o", tmp_path / name)
    assert res.returncode == 2
    assert res.stderr.splitlines()[0].startswith(f"gasync: error: -o {tmp_path / name}: ")
    assert "use .dot, .svg, .png, .pdf or .html, or give --format" in res.stderr
    assert res.stderr.splitlines()[1] == "try 'gasync graph --help'"
    assert not (tmp_path / name).exists()


def test_a_schedule_with_an_unknown_suffix_fails_before_the_run(tmp_path: Path) -> None:
    res = gasync("run", SAMPLE, "--backend", "sim", "--schedule", tmp_path / "s.gif")
    assert res.returncode == 2
    assert "--schedule" in res.stderr and "suffix '.gif'" in res.stderr
    assert "running" not in res.stderr  # nothing compiled or ran


@needs_dot
def test_graph_pdf_is_a_pdf_and_html_holds_the_svg(tmp_path: Path) -> None:
    assert gasync("graph", SAMPLE, "-o", tmp_path / "g.pdf").returncode == 0
    assert (tmp_path / "g.pdf").read_bytes().startswith(b"%PDF-")
    assert gasync("graph", SAMPLE, "-o", tmp_path / "g.html").returncode == 0
    page = (tmp_path / "g.html").read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and "<svg" in page and "consumer" in page
    assert "<?xml" not in page


def test_graph_and_schedule_help_say_what_the_drawings_show() -> None:
    def words(*args: str) -> str:  # the help's text, without Rich's boxes and line breaks
        return " ".join(gasync(*args).stdout.replace("│", " ").split())

    graph = words("graph", "--help")
    assert "channels dashed" not in graph and "signals dotted" not in graph  # neither is drawn so
    assert "Draw the task graph (tasks, the data they use, 'after' edges, groups)" in graph
    assert "a lane per task, then a row per executor" in words("schedule", "--help")
    assert "draw its schedule (.svg, .png, .pdf, .html or .dot)" in words("run", "--help")
