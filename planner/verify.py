"""``verify(plan)``: the planner's own invariants, checked before codegen sees a Plan.

A failure here is a bug in gasync, not in the user's program, so it raises
AssertionError-like PlanInvariantError rather than a diagnostic.
"""

from __future__ import annotations

from gasync.planner.model import Plan


class PlanInvariantError(Exception):
    """The planner produced an inconsistent Plan (a gasync bug)."""


def _require(cond: bool, message: str) -> None:
    if not cond:
        raise PlanInvariantError(message)


def verify(plan: Plan) -> None:
    """Check topological numbering, instance ranges and frame layouts."""
    index = {t.name: t.index for t in plan.tasks}
    first = 0
    for k, t in enumerate(plan.tasks):
        _require(t.index == k, f"task {t.name} numbered {t.index} at position {k}")
        _require(t.first_instance == first, f"task {t.name} instances start at {t.first_instance}, not {first}")
        first += t.count
        for pred in t.after:
            _require(index[pred] < t.index, f"after edge {pred} -> {t.name} goes backwards")
    for u, v in plan.edges:
        _require(index[u] < index[v], f"edge {u} -> {v} goes backwards")
    for fr in plan.frames:
        words = [off for _, off in fr.int_slots]
        _require(len(set(words)) == len(words), f"{fr.fn}: two int locals share a word")
        _require(all(0 < w < fr.n_int for w in words), f"{fr.fn}: int slot outside the frame")
        fwords = [off for _, off in fr.float_slots]
        _require(len(set(fwords)) == len(fwords), f"{fr.fn}: two float locals share a word")
        _require(all(0 <= w < fr.n_float for w in fwords), f"{fr.fn}: float slot outside the frame")
