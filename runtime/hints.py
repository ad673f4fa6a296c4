"""Why a run ran into its timeout, as hints beside the report (runtime/exits.py).

A run past ``--timeout`` lists its unfinished tasks and their states; these notes
then say what most likely kept them: a signal they wait on (``wait()`` or
``is_set()``, their callees' included) that nothing sets (no task does, and the
host was not asked to with ``--signal``), that the host sets only after the
timeout, or that the host set but no executor delivered (a gasync bug, said so);
and a task still running, queued or woken at the end, which loops (over a
signal if it reads one); and, in a program with groups, an instance never
started though its predecessors were done: a block runs one group instance at
a time and keeps its warps until the instance ends (decision 54), so a group
instance waits for a block, and an ungrouped task for a spare warp. Each note
names the signal or the task, and the way out (the ``--signal`` to give, a
longer ``--timeout``, more ``--executors``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gasync.codegen import Generated
from gasync.dsl.diagnostics import Note
from gasync.planner.effects import host_set_signals, task_effects
from gasync.planner.model import Plan
from gasync.runtime.options import GROUPS_DEADLINE_S, RunOptions
from gasync.runtime.state import Sched

BUSY = (Sched.QUEUED, Sched.RUNNING, Sched.NOTIFIED)


def timeout_notes(
    gen: Generated, st: np.ndarray[Any, Any], sig: np.ndarray[Any, Any], options: RunOptions, blocks: int = 0
) -> tuple[Note, ...]:
    """The hints of a run that stopped at its deadline: ``st`` each instance's state, ``sig``
    each signal's word at the end, ``blocks`` the launch's blocks (0: not known)."""
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
    for note in _unstarted_notes(plan, st, blocks):
        notes[note] = None
    return tuple(Note(n) for n in notes)


def _unstarted_notes(plan: Plan, st: np.ndarray[Any, Any], blocks: int) -> list[str]:
    """Why a program with groups left instances never polled whose predecessors were all done
    (the run's report says only "not started"): no block, or no warp, was free to start them."""
    states = {t.name: {int(st[t.first_instance + k]) for k in range(t.count)} for t in plan.tasks}
    # (a block is held only while an instance of a group has started and not ended)
    held = any(states[t.name] - {Sched.DONE, Sched.FRESH} for t in plan.tasks if t.group is not None)
    if not held:
        return []
    done = {name for name, s in states.items() if s <= {Sched.DONE}}
    notes: list[str] = []
    for t in plan.tasks:
        if Sched.FRESH not in states[t.name] or not set(t.after) <= done:
            continue
        if t.group is not None:
            note = (
                f"group {t.group} had instances not started: a block runs one instance of a group at a time and "
                f"keeps it until it ends, and every block held one{_blocks(blocks)}; an instance "
                "that waits on a later instance of its group (through a global channel, signal or shared "
                "scalar) never ends"
            )
        else:
            note = (
                f"task {t.name} had not started: a group instance keeps its block's warps until it ends, and "
                "only a block's spare warps run ungrouped tasks meanwhile (more --executors give more)"
            )
        if note not in notes:
            notes.append(note)
    return notes


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


def _blocks(n: int) -> str:
    return "" if n <= 0 else f" (the run had {n} block{'s' if n != 1 else ''})"
