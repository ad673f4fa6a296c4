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
    _verify_groups(plan)


def _verify_groups(plan: Plan) -> None:
    """Each group's tasks name it, run one copy per group instance, share its ``after``, fit
    one block; its locals carry its name and appear in no other field of the plan."""
    by_name = {t.name: t for t in plan.tasks}
    globals_ = {b.name for b in plan.buffers} | {c.name for c in plan.channels}
    for g in plan.groups:
        _require(g.warps <= 32, f"group {g.name} has {g.warps} warps per instance")
        for name, warps in zip(g.tasks, g.task_warps, strict=True):
            t = by_name[name]
            _require(t.group == g.name, f"task {name} of group {g.name} names group {t.group}")
            _require(t.copies == g.count and t.per_copy == warps, f"task {name}: {t.count} instances for {g.name}")
            _require(t.after == g.after, f"task {name} has after {t.after}, its group {g.after}")
        for local in [b.name for b in g.buffers] + [c.name for c in g.channels]:
            _require(local.startswith(g.name + "."), f"local {local} of group {g.name}")
            _require(local not in globals_, f"local {local} is also a global")
    grouped = {n for g in plan.groups for n in g.tasks}
    for t in plan.tasks:
        _require((t.group is None) == (t.name not in grouped), f"task {t.name}: group {t.group}")
