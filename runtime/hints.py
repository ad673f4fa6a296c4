"""Why a run ran into its timeout, as hints beside the report (runtime/exits.py).

A run past ``--timeout`` lists its unfinished tasks and their states; these notes
then say what most likely kept them: a signal they wait on (``wait()`` or
``is_set()``, their callees' included) that nothing sets (no task does, and the
host was not asked to with ``--signal``), that the host sets only after the
timeout, or that the host set but no executor delivered (a gasync bug, said so);
and a task still running, queued or woken at the end, which loops (over a
signal if it reads one). Each note names the signal or the task, and the way
out (the ``--signal`` to give, a longer ``--timeout``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gasync.codegen import Generated
from gasync.dsl.diagnostics import Note
from gasync.planner.effects import host_set_signals, task_effects
from gasync.runtime.options import GROUPS_DEADLINE_S, RunOptions
from gasync.runtime.state import Sched

BUSY = (Sched.QUEUED, Sched.RUNNING, Sched.NOTIFIED)


def timeout_notes(
    gen: Generated, st: np.ndarray[Any, Any], sig: np.ndarray[Any, Any], options: RunOptions
) -> tuple[Note, ...]:
    """The hints of a run that stopped at its deadline: ``st`` each instance's state, ``sig``
    each signal's word at the end."""
    plan = gen.plan
    effects = task_effects(plan)
    nobody = host_set_signals(plan, effects) - set(options.signals)
    index = {s.name: k for k, s in enumerate(plan.signals)}
    notes: dict[str, None] = {}
    for t in plan.tasks:
        states = {int(st[t.first_instance + k]) for k in range(t.count)} - {int(Sched.DONE)}
        if not states:
            continue
        unset = [s for s in sorted(effects[t.name].waits) if int(sig[index[s]]) == 0]
        for s in unset:
            notes[_signal_hint(s, nobody, options)] = None
        if states & {int(b) for b in BUSY} and options.executor != "spin" and t.group is not None:
            notes[  # (a pinned warp's task stays RUNNING while it waits: decision 53)
                f"task {t.name} of group {t.group} was still waiting or running at the timeout: a group's task "
                "waiting on a global channel, a signal or a sleep that nothing will give is stopped only by the "
                f"deadline (without --timeout, {GROUPS_DEADLINE_S:g} s), or it loops, or needs a longer --timeout"
            ] = None
        elif states & {int(b) for b in BUSY} and options.executor != "spin":  # (spin's polled ones stay RUNNING)
            over = f" until signal '{unset[0]}' is set" if unset else ""
            notes[f"task {t.name} was still running at the timeout: it loops{over}, or needs a longer --timeout"] = None
    return tuple(Note(n) for n in notes)


def _signal_hint(name: str, nobody: set[str], options: RunOptions) -> str:
    delay = options.signals.get(name)
    if name in nobody:
        return f"nothing sets signal '{name}': no task does, and the host does not (--signal {name}=DELAY would)"
    if delay is None:
        return f"signal '{name}' was not set before the timeout (by the tasks that set it)"
    if delay >= options.timeout_s:
        return f"the host sets signal '{name}' only {delay:g}s after launch, past --timeout {options.timeout_s:g}s"
    return (
        f"the host set signal '{name}' {delay:g}s after launch, but no executor took it up: every one was busy "
        "in a loop that never yields, or the signal was lost (please report it)"
    )
