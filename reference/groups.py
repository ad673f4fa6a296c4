"""Groups in the reference: a group's local buffers and channels, one copy per group instance.

The World's ``buffers`` and ``channels`` are :class:`Scoped` maps: a global
name finds the global item, and a local one (``GROUP.NAME``, planner/groups.py)
the copy of the group instance that the running poll belongs to, made (zeroed,
or empty) when first used. The scheduler says which instance that is before
each poll (:func:`enter`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gasync.planner.model import Plan, TaskDef


class Scoped(dict[str, Any]):
    def __init__(self, items: dict[str, Any], make: Callable[[str], Any]):
        super().__init__(items)
        self.copy = 0  # the running poll's group instance
        self._make = make
        self._locals: dict[tuple[str, int], Any] = {}

    def __missing__(self, name: str) -> Any:
        if "." not in name:
            raise KeyError(name)
        key = (name, self.copy)
        if key not in self._locals:
            self._locals[key] = self._make(name)
        return self._locals[key]


def copy_of(task: TaskDef, k: int) -> int:
    """The group instance that instance ``k`` of a group's task belongs to."""
    return k // task.per_copy if task.group is not None and task.per_copy else 0


def enter(buffers: Any, channels: Any, task: TaskDef, k: int) -> None:
    for scoped in (buffers, channels):
        if isinstance(scoped, Scoped):
            scoped.copy = copy_of(task, k)


def instance_values(plan: Plan, task: TaskDef, k: int) -> list[tuple[str, int, str]]:
    """(variable, value, type) of instance ``k``: the group's variable, then the task's own."""
    g = plan.group_of(task)
    if g is None:
        return [(task.var, task.start + k, task.var_ty)] if task.var is not None else []
    out = [(g.var, g.start + copy_of(task, k), g.var_ty)] if g.var is not None else []
    if task.var is not None:
        out.append((task.var, task.start + k % task.per_copy, task.var_ty))
    return out
