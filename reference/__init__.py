"""A reference interpreter of the Plan: the language's meaning in plain, sequential Python.

It is a test oracle, not a backend: ``run(plan, inputs)`` executes the typed
IR that the planner produced (never the generated code) and gives the same
buffers, shared scalars and signals as ``gasync.compile(...).run()``, for
every program whose result does not depend on timing. The differential tests
check the simulator (and, from scripts/differential.py, the GPU) against it.

Algorithm. Every task instance, async fn call, async block and future is a
Python generator: polling is ``next``, a pending poll yields what it waits
on, completion returns the value (:mod:`~gasync.reference.futures`).
Statements and expressions are executed by one small function per IR node
kind (:mod:`~gasync.reference.stmts`, :mod:`~gasync.reference.exprs`) with
the exact numeric rules of the Decisions (:mod:`~gasync.reference.values`).
The scheduler (:mod:`~gasync.reference.scheduler`) polls one instance at a
time from a FIFO ready queue and honours ``after``.

Data. One :class:`~gasync.reference.world.World` holds the buffers (NumPy
arrays made by the runtime's own initialisers), shared scalars, signals,
channels (bounded FIFO queues with a closed flag), the virtual clock and
the step counter; each activation has a frame of its locals.

Policy. Everything is deterministic: one poll costs ``poll_ns`` of virtual
time, ``sleep`` waits on that clock, host signals arrive at their virtual
time, ``parallel for`` and ``bulk for`` run their iterations in order within
their task's turn, and a wake wakes every waiter (in the order they began to
wait). A run that cannot go on raises the runtime's DeadlockError, naming
what each task waits on; one that runs more than ``max_steps`` statements
raises StepLimitError.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gasync.planner.model import Plan
from gasync.reference.errors import DeadlockError, StepLimitError
from gasync.reference.scheduler import Scheduler
from gasync.reference.values import host
from gasync.reference.world import World
from gasync.runtime.buffers import check_inputs

DEFAULT_MAX_STEPS = 5_000_000
DEFAULT_POLL_NS = 1_000


@dataclass(frozen=True)
class Outcome:
    """What a run leaves, shaped and typed as the runtime's Result: buffers as NumPy arrays of
    the declared dtype, shared scalars as Python values, signals as bools; and counters."""

    buffers: dict[str, np.ndarray[Any, Any]]
    shared: dict[str, Any]
    signals: dict[str, bool]
    stats: dict[str, int]


def run(
    plan: Plan,
    inputs: dict[str, np.ndarray[Any, Any]] | None = None,
    signals: dict[str, float] | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    poll_ns: int = DEFAULT_POLL_NS,
) -> Outcome:
    """Interpret ``plan``; ``signals`` sets signals from the host that many (virtual) seconds in."""
    inputs = dict(inputs or {})
    check_inputs(plan, inputs)
    world = World(plan, inputs, max_steps)
    host_signals = {name: int(seconds * 1e9) for name, seconds in (signals or {}).items()}
    scheduler = Scheduler(plan, world, host_signals, poll_ns)
    with np.errstate(all="ignore"):  # wrapping and IEEE specials are the semantics, not mistakes
        scheduler.run()
    return Outcome(
        buffers=dict(world.buffers),
        shared={name: host(v) for name, v in world.shared.items()},
        signals=dict(world.signals),
        stats={
            "polls": scheduler.polls,
            "steps": world.steps,
            "virtual_ns": world.now,
            "closed_sends": world.closed_sends,
        },
    )


__all__ = ["DeadlockError", "Outcome", "StepLimitError", "run"]
