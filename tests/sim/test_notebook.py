"""The notebook magic, through IPython's own test shell: `%load_ext gasync`, then `%%gasync` cells."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from typing import Any

import numpy as np
import pytest

pytest.importorskip("IPython", reason="IPython is the optional 'notebook' extra")
from IPython.testing.globalipapp import get_ipython  # noqa: E402
from IPython.utils.capture import capture_output  # noqa: E402

from gasync.runtime.options import Result  # noqa: E402

pytestmark = [pytest.mark.sim, pytest.mark.timeout(180)]
CELL = (
    "buffer x: f32[4] = input;\nbuffer y: f32[4] = zeros;\nshared n: i32 = 0;\n"
    "task main { for i in 0..4 { y[i] = x[i] * 2.0; } n.store(3); }\n"
)
SVG = "image/svg+xml"


@pytest.fixture(scope="module")
def ip() -> Any:
    shell = get_ipython()
    shell.display_formatter.active_types = ["text/plain", SVG, "text/html"]  # what a notebook asks for
    shell.run_line_magic("load_ext", "gasync")
    return shell


def test_a_cell_compiles_runs_and_shows_the_graph_and_the_result(ip: Any) -> None:
    ip.user_ns["xs"] = np.arange(4, dtype=np.float32)
    with capture_output() as cap:
        res = ip.run_cell_magic("gasync", "--backend sim --timeout 60s --input x=xs --as r", CELL)
    assert isinstance(res, Result) and ip.user_ns["r"] is res
    assert res.buffers["y"].tolist() == [0.0, 2.0, 4.0, 6.0] and res.shared["n"] == 3
    assert cap.stdout == ""
    if shutil.which("dot"):
        [shown] = cap.outputs
        svg = ET.fromstring(shown.data[SVG].encode())
        assert svg.tag == "{http://www.w3.org/2000/svg}svg"
        assert "main" in shown.data[SVG]
    table = ET.fromstring(f"<div>{res._repr_html_()}</div>")
    captions = [c.text for c in table.iter("caption")]
    assert captions == ["buffers", "shared scalars and signals", "stats"]
    rows = [[td.text for td in tr.iter("td")] for tr in table.find("table").iter("tr")][1:]
    assert rows == [["x", "[4]", "float32", "0, 1, 2, 3"], ["y", "[4]", "float32", "0, 2, 4, 6"]]


def test_check_only_stores_the_program(ip: Any) -> None:
    with capture_output() as cap:
        res = ip.run_cell_magic("gasync", "--check --no-graph --as prog", CELL)
    assert res is None and cap.outputs == [] and cap.stdout == ""
    assert repr(ip.user_ns["prog"]) == "<gasync.Program '<cell>': tasks main>"


def test_mistakes_print_a_diagnostic_and_no_traceback(ip: Any) -> None:
    cases = [
        ("--backend sim", "task main {\n    let x = 5\n}\n",
         "<cell>:2:14: error[E0102]: expected ';', found '}'\n   |\n 2 |     let x = 5\n   |              ^\n"),
        ("--backend gpu", "task main { }",
         "%%gasync: error: Invalid value for '--backend': 'gpu' is not one of 'auto', 'cuda', 'sim'.\n"),
        ("--input x=nothing", "task main { }",
         "%%gasync: error: --input x=nothing: the notebook has no variable named 'nothing'\n"),
        ("--backend sim --no-graph", "buffer x: f32[4] = input;\ntask main { }\n",
         "<cell>:1:8: warning[W0218]: buffer 'x' is never read or written\n   |\n 1 | buffer x: f32[4] = input;\n"
         "   |        ^\n"  # the warnings come first, as `gasync run` prints them
         "<cell>:1:1: error[E0301]: buffer 'x' is declared '= input' but inputs has no 'x'\n   |\n"
         " 1 | buffer x: f32[4] = input;\n   | ^^^^^^^^^^^^^^^^^^^^^^^^^\n"),
    ]  # fmt: skip
    for line, cell, printed in cases:
        with capture_output() as cap:
            assert ip.run_cell_magic("gasync", line, cell) is None
        assert cap.stdout == printed


RACE = (
    "buffer o: i32[4] = zeros;\ngroup g for k in 0..2 {\n  local buffer l: i32[4];\n"
    "  task a { l[0] = 1; o[0] = l[0]; }\n  task b { l[0] = 2; }\n}\n"
)


def test_a_cell_prints_the_programs_warnings_as_check_does(ip: Any) -> None:
    with capture_output() as cap:
        assert ip.run_cell_magic("gasync", "--check --no-graph --as raced", RACE) is None
    assert cap.stdout == (
        "<cell>:5:12: warning[W0217]: tasks 'a' and 'b' may run at once and both write buffer 'l' (in group 'g')\n"
        "   |\n 5 |   task b { l[0] = 2; }\n   |            ^^^^^^^^^\n"
        "<cell>:4:12: note: 'a' writes 'l' (in group 'g') here\n"
        "   |\n 4 |   task a { l[0] = 1; o[0] = l[0]; }\n   |            ^^^^^^^^^\n"
        "  = note: a group's tasks start together and have no 'after': let one of them write it (the other sends"
        " it what to write through a local channel), or write with atomic_add and friends\n"
    )
    assert repr(ip.user_ns["raced"]) == "<gasync.Program '<cell>': tasks a, b>"


GROUPED = (
    "buffer x: f32[64] = iota;\nbuffer out: f32[2] = zeros;\nchannel done: f32[2];\n"
    "group pipe for g in 0..2 {\n  local buffer stage: f32[32];\n  local channel full: i32[2];\n"
    "  task loader {\n    parallel for i in 0..32 { stage[i] = x[(g as i64) * 32 + i]; }\n"
    "    full.send(1).await;\n    full.close();\n  }\n"
    "  task sum {\n    for await _s in full {\n"
    "      let s: f32 = parallel for i in 0..32 reduce sum { stage[i] };\n      done.send(s).await;\n    }\n  }\n}\n"
    "task collect {\n  for k in 0..2 { out[k] = done.recv().await; }\n}\n"
)


def test_a_cell_runs_a_group_with_local_items_and_a_reduction(ip: Any) -> None:
    with capture_output() as cap:
        res = ip.run_cell_magic("gasync", "--backend sim --timeout 120s --no-graph", GROUPED)
    assert cap.stdout == ""
    assert isinstance(res, Result) and sorted(res.buffers["out"].tolist()) == [496.0, 1520.0]
