"""The task graph and the state machines of every sample: golden DOT text, and real
SVG from Graphviz's ``dot`` where it is installed (CI installs it: ``make dot``).

Refresh the goldens with ``GASYNC_UPDATE_GOLDEN=1 pytest tests/unit/test_viz_graphs.py``,
then review the diff.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from dottext import bare

import gasync
from gasync import pipeline
from gasync.codegen import generate
from gasync.runtime.trace import state_labels
from gasync.viz.states import states_graph_dot
from gasync.viz.taskgraph import task_graph_dot

SAMPLES = sorted((Path(__file__).parents[2] / "samples").glob("*.gasync"))
GOLDEN = Path(__file__).parent / "golden" / "viz"
DRAWINGS = {"tasks": task_graph_dot, "states": lambda plan: states_graph_dot(plan, generate(plan).internal_states)}
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's 'dot' is not installed (run 'make dot')")


def _dot(sample: Path, kind: str) -> str:
    return DRAWINGS[kind](pipeline.check(sample))


@pytest.mark.parametrize("kind", sorted(DRAWINGS))
@pytest.mark.parametrize("sample", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_dot_matches_the_golden_file(sample: Path, kind: str) -> None:
    text = _dot(sample, kind)
    golden = GOLDEN / f"{sample.stem}.{kind}.dot"
    if os.environ.get("GASYNC_UPDATE_GOLDEN") == "1":
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text)
    assert golden.exists(), f"no golden file {golden}: run with GASYNC_UPDATE_GOLDEN=1"
    assert text == golden.read_text()


@pytest.mark.parametrize("kind", sorted(DRAWINGS))
def test_dot_is_deterministic(kind: str) -> None:
    sample = next(p for p in SAMPLES if p.stem == "join_select")
    assert _dot(sample, kind) == _dot(sample, kind)


@needs_dot
@pytest.mark.parametrize("kind", sorted(DRAWINGS))
@pytest.mark.parametrize("sample", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_dot_renders_to_svg_naming_every_task(sample: Path, kind: str) -> None:
    plan = pipeline.check(sample)
    svg = subprocess.run(["dot", "-Tsvg"], input=_dot(sample, kind), capture_output=True, text=True, timeout=60)
    assert svg.returncode == 0, svg.stderr
    root = ET.fromstring(svg.stdout)  # well-formed XML
    for t in plan.tasks:
        assert t.name in svg.stdout
    # what a hover shows: every node, edge and cluster says what it is, not its internal id
    svg_ns, xlink = "{http://www.w3.org/2000/svg}", "{http://www.w3.org/1999/xlink}title"
    for g in root.iter(f"{svg_ns}g"):
        if g.get("class") in ("node", "edge", "cluster"):
            ident = g.findtext(f"{svg_ns}title")
            tips = [a.get(xlink) for a in g.iter(f"{svg_ns}a") if a.get(xlink)]
            assert tips and tips[0] != ident, (g.get("class"), ident)


def test_states_graph_shows_sites_loops_selects_and_embedded_frames() -> None:
    dot = bare(_dot(next(p for p in SAMPLES if p.stem == "join_select"), "states"))
    assert "subgraph cluster_square" in dot
    assert '"main.s1" [label="s1 line 31: square(...)"' in dot
    assert '"consumer.s1" -> "consumer.s1" [color=gray50 style=dotted]' in dot  # pending: no label
    # one edge, one label: both arms go round the loop again
    assert '"consumer.s1" -> "consumer.s1" [label="work.recv(); loop / sleep(...); loop"]' in dot
    assert dot.count('"consumer.s1" -> "consumer.s1"') == 2
    assert '"producer.s1" -> "producer.s1" [label=loop]' in dot
    assert '"main.s2" -> "square.start" [label="embeds 2 frames (32 bytes each)" lhead=cluster_square' in dot
    assert "async block at line 34" in dot


def test_a_function_that_never_suspends_is_a_note() -> None:
    dot = bare(_dot(next(p for p in SAMPLES if p.stem == "async_double"), "states"))
    assert '"async_double.inline" [label="async fn async_double\\ninline: never suspends" shape=note]' in dot
    assert "cluster" not in dot


def test_break_leaves_the_loop_from_every_await_in_it() -> None:
    dot = bare(_dot(next(p for p in SAMPLES if p.stem == "counter"), "states"))
    assert '"ticker.start" -> "ticker.done"' in dot  # break before the first await
    assert '"ticker.s1" -> "ticker.done" [label=loop]' in dot  # the same break, a round later


FOR_AWAIT = """channel jobs: i64[4];
shared got: u64 = 0;
task producer { for k in 0..8 { jobs.send(k).await; } jobs.close(); }
task consumer {
    for await j in jobs {
        if j > 3 { yield_now().await; }
        got.fetch_add(1);
    }
}
task counter { for await j in jobs { got.fetch_add(1); } }
"""


def test_a_for_await_goes_round_with_an_item_where_its_body_does_not_suspend() -> None:
    plan = gasync.compile_source(FOR_AWAIT, "for_await.gasync").plan
    dot = bare(states_graph_dot(plan, generate(plan).internal_states))
    # the body never suspends: every item takes the head back to itself
    assert '"counter.s1" -> "counter.s1" [label="item; loop"]' in dot
    assert '"counter.s1" -> "counter.done" [label=closed]' in dot
    # on one path it does: round through the yield, and straight round from the head
    assert '"consumer.s1" -> "consumer.s2" [label=item]' in dot
    assert '"consumer.s2" -> "consumer.s1" [label=loop]' in dot
    assert '"consumer.s1" -> "consumer.s1" [label="item; loop"]' in dot


def test_state_numbers_are_the_traces_and_names_are_the_programs() -> None:
    plan = pipeline.check(next(p for p in SAMPLES if p.stem == "jacobi"))
    labels = state_labels(plan, generate(plan).internal_states)
    dot = bare(_dot(next(p for p in SAMPLES if p.stem == "jacobi"), "states"))
    # internal states follow the await sites in their own order (codegen/poll.py): solve has none
    assert labels["solve"][2] == "s2 line 48: bulk for i (waits for its chunks)"  # not i_1
    assert f'"solve.bulk2" [label="{labels["solve"][2]}"' in dot
    assert f'"verify.parallel1" [label="{labels["verify"][1]}"' in dot
    assert "i_1" not in dot


def test_the_task_graph_draws_objects_and_who_reads_and_writes_them() -> None:
    dot = bare(_dot(next(p for p in SAMPLES if p.stem == "counter"), "tasks"))
    assert '"task.ticker" [label="ticker x3"' in dot
    assert '"shared.counter" [label="counter: u64" shape=ellipse]' in dot
    assert '"signal.stop" [label="stop\\nset by the host" peripheries=2 shape=diamond]' in dot
    assert '"signal.stop" -> "task.ticker"' in dot  # is_set reads it
    assert '"task.ticker" -> "shared.counter"' in dot  # fetch_add writes it
    assert "subgraph cluster_legend" in dot
    jacobi = bare(_dot(next(p for p in SAMPLES if p.stem == "jacobi"), "tasks"))
    assert '"task.solve" -> "buffer.x" [arrowsize=0.7 color="#4a6fa5" dir=both]' in jacobi  # reads and writes
    assert '"task.boundary" -> "task.solve" [label=after penwidth=2]' in jacobi
    assert '"signal.converged" [label=converged shape=diamond]' in jacobi  # set on the device


def test_a_group_cluster_counts_its_warps_and_says_each_only_for_an_array() -> None:
    src = (
        "buffer o: f32[2] = zeros;\ngroup one {\n    local buffer s: f32[8];\n"
        "    task t { s[0] = 1.0; o[0] = s[0]; }\n}\n"
        "group many for g in 0..2 {\n    local channel c: i32[1];\n"
        "    task a { c.send(1).await; c.close(); }\n    task b { for await v in c { o[1] = v as f32; } }\n}\n"
    )
    dot = bare(task_graph_dot(gasync.compile_source(src, "g.gasync").plan))
    assert 'label="group one: 1 warp, 32 bytes of shared memory" style=rounded\n' in dot
    assert re.search(r'label="group many x2: 2 warps, \d+ bytes of shared memory each"', dot)


def _many_tasks(n: int) -> str:
    """``n`` tasks, every third awaiting ``both``, which awaits ``square``: a wide program."""
    head = "buffer out: i64[64] = zeros;\n"
    head += "async fn square(x: i32) -> i32 { yield_now().await; return x * x; }\n"
    head += "async fn both(x: i32) -> i32 { let (p, q) = join(square(x), square(1)).await; return p + q; }\n"
    bodies = ["out[{k}] = both({k}).await as i64;", "sleep(10).await; out[{k}] = 1;", "out[{k}] = 2;"]
    return head + "".join(f"task t{k:02d} {{ {bodies[k % 3].format(k=k)} }}\n" for k in range(n))


def _rows(dot: str) -> list[list[str]]:
    """The units' first nodes, a row each (the ``rank=same`` groups of the layout)."""
    return [re.findall(r'"?([\w.]+)"?\n', block) for block in re.findall(r"rank=same\n((?:\t\t[^\n]*\n)+)", dot)]


def test_many_tasks_are_laid_out_in_rows_callees_below_their_callers() -> None:
    plan = gasync.compile_source(_many_tasks(24), "many.gasync").plan
    rows = _rows(states_graph_dot(plan, generate(plan).internal_states))
    assert 3 <= len(rows) <= 6, rows
    assert rows[0][-1] == "legend"  # it ends the first row
    # the tasks in order, then the async fns, callers first, each in a row below every caller's
    units = [n.split(".")[0] for row in rows for n in row if n != "legend"]
    assert units == [f"t{k:02d}" for k in range(24)] + ["both", "square"]
    row_of = {unit: k for k, row in enumerate(rows) for unit in (n.split(".")[0] for n in row)}
    assert row_of["both"] > max(row_of[f"t{k:02d}"] for k in range(0, 24, 3)) and row_of["square"] > row_of["both"]
    small = gasync.compile_source(_many_tasks(2), "small.gasync").plan
    assert len(_rows(states_graph_dot(small, generate(small).internal_states))) == 3  # t00, t01; both; square


@needs_dot
def test_many_tasks_make_a_drawing_near_a_page_s_shape() -> None:
    plan = gasync.compile_source(_many_tasks(24), "many.gasync").plan
    svg = subprocess.run(
        ["dot", "-Tsvg"], input=states_graph_dot(plan, generate(plan).internal_states),
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert svg.returncode == 0, svg.stderr
    root = ET.fromstring(svg.stdout)
    wide, tall = (float(root.get(k, "0").removesuffix("pt")) for k in ("width", "height"))
    assert 0.8 < wide / tall < 2.5, (wide, tall)  # in one row it was about 10 to 1
