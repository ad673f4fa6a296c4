"""Whole-program checks that need every body typed: channel use and concurrency."""

from __future__ import annotations

import networkx as nx
from gasync.dsl.diagnostics import GasyncError, Note
from gasync.planner import ir
from gasync.planner.errors import ChannelUseError
from gasync.planner.model import Function, TaskDef
from gasync.planner.symbols import Symbols
from gasync.planner.walk import stmts_in


def channel_ends(fn: Function) -> tuple[set[str], set[str]]:
    """Channels that ``fn`` sends on and receives from, directly."""
    sends: set[str] = set()
    recvs: set[str] = set()
    for s in stmts_in(fn.body):
        futs: list[ir.Future] = []
        if isinstance(s, ir.AwaitS):
            futs.append(s.future)
        elif isinstance(s, ir.Select):
            futs.extend(arm.future for arm in s.arms)
        elif isinstance(s, ir.ForAwait):
            recvs.add(s.chan)
        while futs:
            f = futs.pop()
            if isinstance(f, ir.Send):
                sends.add(f.chan)
            elif isinstance(f, ir.Recv):
                recvs.add(f.chan)
            elif isinstance(f, ir.Join):
                futs.extend(f.futures)
    return sends, recvs


def program_checks(
    syms: Symbols, functions: list[Function], tasks: list[TaskDef], tg: nx.DiGraph, strict: bool
) -> list[GasyncError]:
    """Diagnostics (errors and warnings) about the program as a whole."""
    out: list[GasyncError] = []
    sends: set[str] = set()
    recvs: set[str] = set()
    for fn in [*functions, *(t.body for t in tasks)]:
        s, r = channel_ends(fn)
        sends |= s
        recvs |= r
    for ch in syms.channels.values():
        missing = [w for w, used in (("sends on", ch.name in sends), ("receives from", ch.name in recvs)) if not used]
        if missing:
            out.append(
                ChannelUseError(
                    f"channel '{ch.name}' is never used: nothing {' or '.join(missing)} it",
                    ch.span,
                    (Note("a channel needs at least one sender and one receiver"),),
                )
            )
    return out
