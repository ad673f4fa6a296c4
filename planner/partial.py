"""The program-wide checks that still run when other checks failed.

A program with an error is never planned, but its other mistakes are worth
reporting at once (docs/diagnostics.md: every item is checked even after an
earlier one failed). Some program-wide checks give the same answer whatever the
failed parts would have said, if asked only about what those parts cannot touch:

- a channel no checked task sends on (or receives from) is unused (E0215) when
  no fn, async fn or task left unchecked names it: such a body could have used
  it, directly or for a checked task that calls it;
- a group's warps and shared memory (E0221) counted over its checked tasks and
  its defined locals can only grow with the rest, so too many already is an
  error; a group whose range failed is left out;
- a group's task that runs a ``bulk for`` (E0222) is found in the source, whether its
  body or its group's range was checked or not.
"""

from __future__ import annotations

import networkx as nx

from gasync.dsl import ast
from gasync.dsl.diagnostics import GasyncError
from gasync.planner import graphs, groups
from gasync.planner.checks import channel_checks
from gasync.planner.deferred import names_in
from gasync.planner.effects import transitive_effects
from gasync.planner.model import Function, TaskDef
from gasync.planner.symbols import Symbols


def independent_errors(
    program: ast.Program,
    syms: Symbols,
    cg: nx.DiGraph,
    functions: list[Function],
    bodies: dict[str, TaskDef],
    group_asts: tuple[groups.GroupAst, ...],
    ranges: dict[str, tuple[str, int, int]],
    bulk: dict[str, tuple[ast.Span, str | None]],
) -> list[GasyncError]:
    """The errors of these checks that do not depend on the parts that failed."""
    return [
        *unused_channels(program, syms, cg, functions, bodies),
        *group_errors(syms, bodies, group_asts, ranges, bulk),
    ]


def unused_channels(
    program: ast.Program, syms: Symbols, cg: nx.DiGraph, functions: list[Function], bodies: dict[str, TaskDef]
) -> list[GasyncError]:
    """E0215 for the channels that no unchecked body names (see the module's text)."""
    recursive = graphs.recursive_names(cg)  # (their effects would never finish adding up)
    fns = [f for f in functions if f.name not in recursive]
    checked = {f.name for f in fns} | set(bodies)
    unsure: set[str] = set()
    for item in program.items:
        if isinstance(item, ast.FnDef | ast.Task) and item.name not in checked:
            unsure |= names_in(item)
    tasks = list(bodies.values())
    effects = transitive_effects([*fns, *(t.body for t in tasks)], {})
    return channel_checks(syms, tasks, effects, unsure)


def group_errors(
    syms: Symbols,
    bodies: dict[str, TaskDef],
    group_asts: tuple[groups.GroupAst, ...],
    ranges: dict[str, tuple[str, int, int]],
    bulk: dict[str, tuple[ast.Span, str | None]],
) -> list[GasyncError]:
    """E0221 of the groups whose range is known, over their checked tasks; E0222 of every group."""
    known = tuple(g for g in group_asts if g.item.name in ranges)
    out: list[GasyncError] = []
    by_name = {a.item.name: a for a in known}
    for g in groups.group_defs(known, list(bodies.values()), syms.buffers, syms.channels, ranges):
        out += groups.fit_errors(g, defines=groups.size_defines(syms, by_name[g.name]))
    for a in group_asts:
        out += groups.bulk_errors(a, bulk)
    return out
