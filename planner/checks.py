"""Whole-program checks that need every body typed: channel use and concurrent writes.

Both work on tasks' *transitive* effects (:mod:`gasync.planner.effects`): a
channel sent on only inside an async fn that no task calls has no sender.

Concurrent writes (:mod:`gasync.planner.races`): tasks that may run at once
and write overlapping parts of one buffer outside atomics give one warning
per buffer, or an error under ``--strict``.
"""

from __future__ import annotations

from collections.abc import Collection

from gasync.dsl.diagnostics import GasyncError, Note
from gasync.planner.effects import Effects
from gasync.planner.errors import ChannelUseError
from gasync.planner.model import TaskDef
from gasync.planner.races import concurrent_writes
from gasync.planner.symbols import Symbols


def program_checks(syms: Symbols, tasks: list[TaskDef], effects: dict[str, Effects], strict: bool) -> list[GasyncError]:
    """Diagnostics (errors and warnings) about the program as a whole."""
    return [*channel_checks(syms, tasks, effects), *concurrent_writes(syms, tasks, effects, strict)]


def channel_checks(
    syms: Symbols, tasks: list[TaskDef], effects: dict[str, Effects], unsure: Collection[str] = ()
) -> list[GasyncError]:
    """A channel that no task sends on, or that no task receives from, is an error; those
    in ``unsure`` are not judged (a body that names them was not checked)."""
    sends = set().union(*(effects[t.name].sends for t in tasks))
    recvs = set().union(*(effects[t.name].recvs for t in tasks))
    out: list[GasyncError] = []
    for ch in syms.channels.values():
        if ch.name in unsure:
            continue
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
