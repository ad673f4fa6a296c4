"""Whole-program checks that need every body typed: channel use and concurrent writes.

Both work on tasks' *transitive* effects (:mod:`gasync.planner.effects`): a
channel sent on only inside an async fn that no task calls has no sender.

Concurrent writes: two different tasks may run at once when neither is
reachable from the other along ``after`` edges (channels and signals order
individual events, not whole tasks, so they do not count). If both write one
buffer outside atomics, that is a warning, or an error under ``--strict``.
Instances of one task are assumed to write disjoint parts, as the spec says.
"""

from __future__ import annotations

import itertools

import networkx as nx

from gasync.dsl.diagnostics import GasyncError, Note
from gasync.planner.effects import Effects
from gasync.planner.errors import ChannelUseError, ConcurrentWriteError, ConcurrentWriteWarning
from gasync.planner.model import TaskDef
from gasync.planner.symbols import Symbols


def program_checks(
    syms: Symbols, tasks: list[TaskDef], after: nx.DiGraph, effects: dict[str, Effects], strict: bool
) -> list[GasyncError]:
    """Diagnostics (errors and warnings) about the program as a whole, in source order."""
    return [*channel_checks(syms, tasks, effects), *concurrent_writes(tasks, after, effects, strict)]


def channel_checks(syms: Symbols, tasks: list[TaskDef], effects: dict[str, Effects]) -> list[GasyncError]:
    """A channel that no task sends on, or that no task receives from, is an error."""
    sends = set().union(*(effects[t.name].sends for t in tasks))
    recvs = set().union(*(effects[t.name].recvs for t in tasks))
    out: list[GasyncError] = []
    for ch in syms.channels.values():
        missing = [end for end, users in (("sender", sends), ("receiver", recvs)) if ch.name not in users]
        if missing:
            verbs = " or ".join({"sender": "sends on", "receiver": "receives from"}[m] for m in missing)
            out.append(
                ChannelUseError(
                    f"channel '{ch.name}' has no {' and no '.join(missing)}: no task {verbs} it",
                    ch.span,
                    (Note("a channel needs one task that sends and one that receives (directly or through calls)"),),
                )
            )
    return out


def concurrent_writes(
    tasks: list[TaskDef], after: nx.DiGraph, effects: dict[str, Effects], strict: bool
) -> list[GasyncError]:
    """One diagnostic per (pair of tasks that may run at once, buffer both write)."""
    cls = ConcurrentWriteError if strict else ConcurrentWriteWarning
    out: list[GasyncError] = []
    for a, b in itertools.combinations(tasks, 2):  # topological order: a before b
        if nx.has_path(after, a.name, b.name) or nx.has_path(after, b.name, a.name):
            continue
        both = effects[a.name].stores.keys() & effects[b.name].stores.keys()
        for buf in sorted(both):
            out.append(
                cls(
                    f"tasks '{a.name}' and '{b.name}' may run at once and both write buffer '{buf}'",
                    effects[b.name].stores[buf],
                    (
                        Note(f"'{a.name}' writes '{buf}' here", effects[a.name].stores[buf]),
                        Note(f"order them with 'after {a.name}', or write with atomic_add and friends"),
                    ),
                )
            )
    return out
