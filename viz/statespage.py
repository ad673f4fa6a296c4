"""Where the state machines' clusters go on the page (``viz/states.py`` draws them).

A program's units (a task's or async fn's cluster, or the note of one that
never suspends) are laid out in rows, read across each row and then down,
tasks first in topological order and then the async fns, callers first. A
unit that a unit of the current row embeds starts the next row, so every
``embeds frame`` edge points down. The rows are as wide as bring the
drawing nearest a landscape page (``ASPECT``), or one row while that is no
wider than a screen (``ONE_ROW_IN``); the legend ends the first row.

Sizes are guessed from the labels, before Graphviz runs (the DOT text needs
no ``dot`` program), with factors measured on the samples' drawings. The
rows are made with invisible edges and ranks: each row's first nodes on one
rank (``newrank`` lets a rank run across clusters), each unit over the one
in its place in the next row, from the nodes it ends at lowest. Within a
row dot keeps the order only as far as it likes: it may swap clusters to
uncross the embed edges.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import graphviz


@dataclass
class Unit:
    """A function's or task's drawing as the page layout sees it: the node it starts at, the
    nodes it ends at lowest (its own machine's and its async blocks'), every label in it (for
    its size) and the embed edges to add once every cluster is drawn."""

    name: str  # the function's
    top: str
    title: str
    bottoms: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    embeds: list[tuple[str, str, int]] = field(default_factory=list)  # (await node, callee, frames)


# Sizes in inches (dot gives an edge label a rank of its own, so a node and the space below it take 1.2 in)
ASPECT, ONE_ROW_IN = 1.4, 15.0  # width / height; the widest drawing left in one row (a screen)
NODE_IN, TITLE_CHAR_IN, LABEL_CHAR_IN, GAP_IN, LEGEND_IN = 1.2, 0.105, 0.075, 0.3, 3.4


def _rows(units: list[Unit]) -> list[list[Unit]]:
    """``units`` in order in as few rows as fit ``ONE_ROW_IN``, or in the rows whose drawing comes
    nearest ``ASPECT``."""
    best: tuple[float, list[list[Unit]]] | None = None
    for k in range(len(units), 0, -1):
        rows = _fill(units, k * sum(_width(u) for u in units) / len(units))
        wide = max(sum(_width(u) for u in row) + (LEGEND_IN if row is rows[0] else 0) for row in rows)
        if k == len(units) and wide <= ONE_ROW_IN:
            return rows
        score = abs(math.log(wide / sum(max(_height(u) for u in row) for row in rows) / ASPECT))
        if best is None or score < best[0]:
            best = (score, rows)
    return best[1] if best else []


def _fill(units: list[Unit], width: float) -> list[list[Unit]]:
    """``units`` in order in rows about ``width`` wide; a unit starts a row below any that embeds it."""
    rows: list[list[Unit]] = [[]]
    for u in units:
        callees = {c for other in rows[-1] for _, c, _ in other.embeds}
        if rows[-1] and (u.name in callees or sum(_width(x) for x in rows[-1]) + _width(u) / 2 > width):
            rows.append([])
        rows[-1].append(u)
    return rows


def _width(unit: Unit) -> float:
    """Its title's width, or a node's: its label, padding and the self-loop beside it."""
    title = max(len(line) for line in unit.title.split("\\n")) * TITLE_CHAR_IN
    return GAP_IN + max([title] + [len(x) * LABEL_CHAR_IN + 0.8 for x in unit.labels])


def _height(unit: Unit) -> float:
    return GAP_IN + NODE_IN * max(1, len(unit.labels))  # a note is one node


def lay_out(g: graphviz.Digraph, units: list[Unit], legend: str) -> None:
    """Put each row's first nodes on one rank (``newrank`` lets a rank run across clusters), in
    order as far as dot keeps it (it may swap clusters to uncross the embed edges), and below
    the nodes that the units above them end at, with invisible edges."""
    rows = _rows(units)
    for k, row in enumerate(rows):
        tops = [u.top for u in row] + ([legend] if k == 0 else [])
        with g.subgraph() as same:
            same.attr(rank="same")
            for node in tops:
                same.node(node)
            for left, right in itertools.pairwise(tops):  # in order, and held together against the embed edges
                same.edge(left, right, style="invis", weight="10", tooltip="layout only")
    # each unit over the one in its place in the next row; weighing nothing, the edges pull no node down
    for above, below in itertools.pairwise(rows):
        for k, u in enumerate(above):
            for bottom in u.bottoms:
                g.edge(bottom, below[min(k, len(below) - 1)].top, style="invis", weight="0", tooltip="layout only")
