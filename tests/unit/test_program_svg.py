"""`Program._repr_svg_`: the task graph a notebook shows for a compiled program."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import gasync

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "join_select.gasync"


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed (make dot)")
def test_the_svg_is_the_task_graph() -> None:
    prog = gasync.compile(SAMPLE)
    svg = prog._repr_svg_()
    assert svg is not None
    root = ET.fromstring(svg.encode())
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    titles = {t.text for t in root.iter("{http://www.w3.org/2000/svg}title")}
    assert {f"task.{t.name}" for t in prog.plan.tasks} <= titles


def test_without_dot_the_repr_is_short(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    prog = gasync.compile_source("task a { }\ntask b after a { }\n", "ab.gasync")
    assert prog._repr_svg_() is None
    assert repr(prog) == "<gasync.Program 'ab.gasync': tasks a, b>"
