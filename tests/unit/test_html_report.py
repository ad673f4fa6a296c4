"""The ``--report`` page from a synthetic trace: self-contained, and what a browser renders of it.

The browser test loads the page in headless Chromium (``--dump-dom`` runs its
scripts) and is skipped where no Chromium is installed (Debian: ``chromium``).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import re
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from unit.test_viz_trace import synthetic  # tests/ is on sys.path (conftest.py)

import gasync
from gasync.cli.traced import graph_svg
from gasync.runtime.options import Result
from gasync.runtime.trace import POLL, RawTrace
from gasync.viz.html_report import plain_task_svg, report_html

SOURCE = """buffer out: i32[2] = zeros;
task boss { out[0] = 1; }
task worker for i in 0..2 {
    yield_now().await;
    out[i] = 2;
}
"""


class _Tags(HTMLParser):
    """Every start tag with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


@pytest.fixture(scope="module")
def page() -> str:
    plan = gasync.compile_source(SOURCE, "two.gasync").plan
    result = Result(
        {"out": np.array([1, 2], np.int32)}, {}, {}, {"backend": "sim", "polls": 9}, trace=synthetic(rounds=4)
    )
    return report_html(plan, result, SOURCE, "two.gasync", graph_svg(plan))


def test_the_page_has_the_graph_the_profile_the_names_and_the_program(page: str) -> None:
    assert page.startswith("<!doctype html>")
    assert "<svg" in page and "<table" in page and "<canvas" in page
    assert "boss" in page and "worker x2" in page
    assert "task worker for i in 0..2 {" in page  # the program text, escaped as HTML needs
    tags = _Tags()
    tags.feed(page)
    tables = [t for t, _ in tags.tags if t == "table"]
    assert len(tables) == 4  # stats, profile, waiting on, buffers and shared scalars


def test_nothing_is_loaded_from_the_network(page: str) -> None:
    tags = _Tags()
    tags.feed(page)
    assert not [t for t, _ in tags.tags if t in ("link", "img", "iframe", "object", "embed")]
    assert all("src" not in attrs for t, attrs in tags.tags if t == "script")
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert "url(" not in page and "@import" not in page


def test_the_timeline_data_is_every_poll(page: str) -> None:
    m = re.search(r'<script type="application/json" id="gasync-data">(.*?)</script>', page, re.S)
    assert m is not None
    data = json.loads(m.group(1))
    assert [t["label"] for t in data["tasks"]] == ["boss", "worker x2"]
    assert len(data["polls"]) == 9
    assert data["polls"][0] == [0, 0, 0, 300, 0, -1, 1, 1]  # boss, start to done on executor 1, ready
    assert data["span"] == 8700


def test_the_plain_graph_is_svg_with_every_task() -> None:
    plan = gasync.compile_source(SOURCE, "two.gasync").plan
    svg = ET.fromstring(plain_task_svg(plan))
    assert [t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")][:2] == ["boss", "worker x2"]


def test_headless_chromium_draws_the_timeline(page: str, tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("browser", Path(__file__).parents[2] / "scripts" / "browser.py")
    assert spec is not None and spec.loader is not None
    browser = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(browser)
    exe = browser.find_chromium()
    if exe is None:
        pytest.skip("no Chromium installed (Debian: apt-get install chromium)")
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    res = subprocess.run(
        [exe, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", path.as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    status = re.search(r'<span id="timeline-status">(.*?)</span>', res.stdout)
    assert status is not None and status.group(1) == "9 polls of 2 tasks over 8.7 us"
    canvas = re.search(r'<canvas id="timeline"[^>]*>', res.stdout)
    assert canvas is not None and re.search(r' height="82"', canvas.group(0))  # 2 lanes of 26 + 30


LONG = "a_really_quite_extraordinarily_long_task_name_for_the_column"
FORK_SOURCE = (
    f"shared n: i32 = 0;\ntask {LONG} {{ n.store(1); }}\n" + "task t { parallel for i in 0..32 { n.store(2); } }\n"
)
# the long task's one poll, all of a 1.85 s run; t's FORK poll (code 2: its warp runs the
# parallel for), then a 1 ms READY poll, far under a pixel wide
FORK_EVENTS = [
    (POLL, 0, 0, 0, -1, 0, 1_850_000_000, 1),
    (POLL, 0, 1, 0, 2, 0, 400_000_000, 2),
    (POLL, 0, 1, 2, -1, 1_200_000_000, 1_201_000_000, 1),
]


@pytest.fixture(scope="module")
def fork_page() -> str:
    plan = gasync.compile_source(FORK_SOURCE, "fork.gasync").plan
    raw = RawTrace(FORK_EVENTS, 0, 1 << 10, [(LONG, 0, 1), ("t", 1, 1)], {}, 1, "sim")
    result = Result({}, {"n": 2}, {}, {"backend": "sim"}, trace=raw)
    return report_html(plan, result, FORK_SOURCE, "fork.gasync", "<svg></svg>")


def test_only_a_ready_poll_is_marked_ready(fork_page: str) -> None:
    m = re.search(r'<script type="application/json" id="gasync-data">(.*?)</script>', fork_page, re.S)
    assert m is not None
    assert [p[7] for p in json.loads(m.group(1))["polls"]] == [1, 0, 1]  # the FORK poll (code 2) is not ready


# what the canvas drew: its data attributes, and the colours of a few pixels (r, g, b)
PIXELS_JS = """(() => {
  const c = document.getElementById('timeline'), ctx = c.getContext('2d');
  const left = Number(c.dataset.left), w = c.width - left - 10, span = 1850000000;
  const at = (t, lane) => Array.from(ctx.getImageData(Math.ceil(left + t / span * w), 26 + 26 * lane + 13, 1, 1).data);
  const thin = [-1, 0, 1, 2].map((d) => Array.from(ctx.getImageData(
    Math.floor(left + 1200500000 / span * w) + d, 26 + 26 + 13, 1, 1).data));
  return {left: left, ticks: c.dataset.ticks, forkEdge: at(0, 1), thin: thin};
})()"""


def test_the_timeline_as_drawn(fork_page: str, tmp_path: Path) -> None:
    with _timeline(fork_page, tmp_path) as b:
        drawn = b.eval(PIXELS_JS)
    assert drawn["ticks"] == "0 s | 0.5 s | 1 s | 1.5 s"  # one unit, not 0 ns | 500 ms | 1 s | 1.5 s
    assert drawn["left"] > 170  # the lanes start after the long task's name, not over it
    assert drawn["forkEdge"][:3] == [0xFD, 0xB4, 0x62]  # t's colour: the FORK poll has no bold border
    # a sliver keeps its colour (or the lane's, where it covers part of a pixel): no dark border
    assert all(px[3] == 255 and sum(px[:3]) >= 0xFD + 0xB4 + 0x62 for px in drawn["thin"]), drawn["thin"]


def _script(name: str) -> Any:
    """A module of scripts/ (report_view.py puts scripts/ on sys.path for its own imports)."""
    spec = importlib.util.spec_from_file_location(name, Path(__file__).parents[2] / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def _timeline(page: str, tmp_path: Path) -> Iterator[Any]:
    """The report ``page`` open in headless Chromium, its timeline drawn."""
    browser = _browser()
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    with browser.Browser(1400, 900, 60) as b:
        b.goto(path.as_uri())
        b.wait_for("document.getElementById('timeline-status')?.textContent.includes('polls')", 30)
        yield b


def _browser() -> Any:
    browser = _script("browser")
    if browser.find_chromium() is None:
        pytest.skip("no Chromium installed (Debian: apt-get install chromium)")
    return browser


GROUP_SOURCE = (
    "buffer y: i32[4] = zeros;\ngroup pipe for g in 0..2 { task t for k in 0..2 { y[g * 2 + k] = 1; } }\n"
    "group solo { task u { y[0] = 2; } }\n"
)
# t's instance 3 (t[1] in pipe[1]) polls first, then u's one instance
GROUP_EVENTS = [(POLL, 0, 3, 0, -1, 0, 1_000, 1), (POLL, 1, 4, 0, -1, 2_000, 3_000, 1)]


@pytest.fixture(scope="module")
def group_page() -> str:
    plan = gasync.compile_source(GROUP_SOURCE, "g.gasync").plan
    tasks = [(t.name, t.first_instance, t.count) for t in plan.tasks]
    raw = RawTrace(GROUP_EVENTS, 0, 1 << 10, tasks, {}, 2, "sim", groups=[("t", "pipe", 2, 0), ("u", "solo", 1, 0)],
                   unranged=["solo"])  # fmt: skip
    return report_html(plan, Result({}, {}, {}, {"backend": "sim"}, trace=raw), GROUP_SOURCE, "g.gasync", "<svg></svg>")


def test_a_groups_instances_are_named_as_traces_name_them(group_page: str, tmp_path: Path) -> None:
    m = re.search(r'<script type="application/json" id="gasync-data">(.*?)</script>', group_page, re.S)
    assert m is not None
    tasks = json.loads(m.group(1))["tasks"]
    assert [(t["label"], t.get("names")) for t in tasks] == [
        ("t x4", ["t[0] in pipe[0]", "t[1] in pipe[0]", "t[0] in pipe[1]", "t[1] in pipe[1]"]), ("u", ["u in solo"]),
    ]  # fmt: skip
    with _timeline(group_page, tmp_path) as b:
        x, y = b.eval(_script("report_view").POINT_JS % json.dumps("t"))  # the first poll of t's lane
        b.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        b.wait_for("document.getElementById('timeline-tip').textContent", 10)
        tip = b.eval("document.getElementById('timeline-tip').textContent")
    assert tip.split(": ")[0] == "t[1] in pipe[1]"  # not t[3], its place among all of t's
