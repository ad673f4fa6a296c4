"""Task graphs: random `after` graphs as .gasync text, channel and signal edges, DOT."""

from __future__ import annotations

import re

import networkx as nx
import pytest
from dottext import bare
from hypothesis import given, settings
from hypothesis import strategies as st

from gasync.dsl import parse
from gasync.dsl.diagnostics import ErrorGroup
from gasync.planner import plan
from gasync.planner.errors import AfterCycleError
from gasync.planner.model import Flow
from gasync.viz import task_graph_dot

MAX_TASKS = 7


@st.composite
def after_lists(draw: st.DrawFn) -> list[list[int]]:
    """For each task, the indices of the tasks it comes after (any graph, cycles allowed)."""
    n = draw(st.integers(1, MAX_TASKS))
    return [sorted(draw(st.sets(st.integers(0, n - 1).filter(lambda j, i=i: j != i), max_size=n))) for i in range(n)]


def program_text(afters: list[list[int]], counts: list[int]) -> str:
    lines = []
    for i, preds in enumerate(afters):
        over = f" for k in 0..{counts[i]}" if counts[i] != 1 else ""
        after = f" after {', '.join(f't{j}' for j in preds)}" if preds else ""
        lines.append(f"task t{i}{over}{after} {{ }}")
    return "\n".join(lines) + "\n"


def edges_of(afters: list[list[int]]) -> set[tuple[str, str]]:
    return {(f"t{j}", f"t{i}") for i, preds in enumerate(afters) for j in preds}


@settings(max_examples=150, deadline=None)
@given(after_lists(), st.lists(st.integers(0, 5), min_size=MAX_TASKS, max_size=MAX_TASKS))
def test_random_task_graphs(afters: list[list[int]], counts: list[int]) -> None:
    text = program_text(afters, counts)
    edges = edges_of(afters)
    g = nx.DiGraph(list(edges))
    if nx.is_directed_acyclic_graph(g):
        p = plan(parse(text, "g.gasync"))
        index = {t.name: t.index for t in p.tasks}
        assert sorted(index) == sorted(f"t{i}" for i in range(len(afters)))
        assert set(p.edges) == edges
        assert all(index[u] < index[v] for u, v in edges)
        first = 0
        for t in p.tasks:
            assert (t.first_instance, t.count) == (first, counts[int(t.name[1:])])
            first += t.count
        return
    with pytest.raises(ErrorGroup) as info:
        plan(parse(text, "g.gasync"))
    (err,) = info.value.errors
    assert isinstance(err, AfterCycleError)
    m = re.fullmatch(r"cycle in 'after' edges: (.*)", err.message)
    assert m is not None
    names = m.group(1).split(" -> ")
    assert len(names) >= 3 and names[0] == names[-1]
    assert len(set(names[:-1])) == len(names) - 1  # a simple cycle
    for u, v in zip(names, names[1:], strict=False):
        assert (u, v) in edges


FLOWS = """
channel jobs: i64[8];
signal go;
async fn push(k: i64) { jobs.send(k).await; }
task starter { go.set(); }
task producer for p in 0..2 {
    go.wait().await;
    push(p as i64).await;
    jobs.close();
}
task consumer {
    for await j in jobs { }
}
task watcher {
    if go.is_set() { yield_now().await; }
}
task report after consumer { }
"""


def test_channel_edges_go_from_every_sender_to_every_receiver_through_calls() -> None:
    p = plan(parse(FLOWS, "f.gasync"))
    assert p.flows == (
        Flow("channel", "jobs", "producer", "consumer"),
        Flow("signal", "go", "starter", "producer"),
        Flow("signal", "go", "starter", "watcher"),
    )
    assert p.edges == (("consumer", "report"),)


def test_dot_output() -> None:
    dot = bare(task_graph_dot(plan(parse(FLOWS, "f.gasync"))))
    drawing = dot[: dot.index("\tsubgraph cluster_legend")]  # the legend is tested with the samples' goldens
    use = '[arrowsize=0.7 color="#4a6fa5"]'
    task = 'fillcolor="#eef3fb" style="rounded,filled"'
    assert drawing == (
        "digraph tasks {\n"
        "\tgraph [fontname=Helvetica rankdir=LR]\n"
        "\tnode [fontname=Helvetica fontsize=11 shape=box]\n"
        "\tedge [fontname=Helvetica fontsize=9]\n"
        f'\t"task.starter" [label=starter {task}]\n'
        f'\t"task.producer" [label="producer x2" {task}]\n'
        f'\t"task.consumer" [label=consumer {task}]\n'
        f'\t"task.watcher" [label=watcher {task}]\n'
        f'\t"task.report" [label=report {task}]\n'
        '\t"signal.go" [label=go shape=diamond]\n'
        '\t"channel.jobs" [label="jobs: i64[8]" shape=parallelogram]\n'
        '\t"task.consumer" -> "task.report" [label=after penwidth=2]\n'
        f'\t"task.starter" -> "signal.go" {use}\n'
        f'\t"signal.go" -> "task.producer" {use}\n'
        f'\t"task.producer" -> "channel.jobs" {use}\n'
        f'\t"channel.jobs" -> "task.consumer" {use}\n'
        f'\t"signal.go" -> "task.watcher" {use}\n'
    )


def test_numbering_takes_the_first_ready_task_in_source_order() -> None:
    p = plan(parse("task c after a { }\ntask a { }\ntask b { }\n", "o.gasync"))
    assert [(t.name, t.index) for t in p.tasks] == [("a", 0), ("c", 1), ("b", 2)]
