"""The interpreter proper: expression, future and statement halves joined over one World."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gasync.planner.model import ExternDef, Plan, TaskDef
from gasync.reference.exprs import Frame
from gasync.reference.futures import Poll
from gasync.reference.groups import instance_values
from gasync.reference.stmts import StmtEval
from gasync.reference.values import scalar
from gasync.reference.world import World


class Machine(StmtEval):
    """Runs the Plan's functions and task bodies; the scheduler drives the task instances."""

    def __init__(self, plan: Plan, world: World):
        self.world = world
        self.plan = plan
        self.functions = {f.name: f for f in plan.functions}
        bodies = [*plan.functions, *(t.body for t in plan.tasks)]
        self.local_types = {f.name: dict(f.locals) for f in bodies}
        self.externs = {e.name: load_extern(e, plan.path) for e in plan.externs}

    def task(self, task: TaskDef, k: int) -> Poll:
        """The poll generator of instance ``k`` (0-based) of ``task``."""
        frame = Frame(self.local_types[task.body.name])
        for var, value, ty in instance_values(self.plan, task, k):
            frame[var] = scalar(value, ty)
        return self._task_body(task, frame)

    def _task_body(self, task: TaskDef, frame: Frame) -> Poll:
        yield from self.body(task.body.body, frame)
        return None


def load_extern(ext: ExternDef, program_path: str) -> Callable[..., Any]:
    """The Python function under an extern fn's ``@cuda.jit(device=True)`` decorator.

    The module is imported as the runtime imports it (from beside the program
    first); checking that it is a device function of the right arity is the
    runtime's job, and a program that fails it never gets here in the tests.
    """
    program_dir = str(Path(program_path).resolve().parent)
    if program_dir not in sys.path:
        sys.path.insert(0, program_dir)
    fn = getattr(importlib.import_module(ext.module), ext.attr)
    py_func: Callable[..., Any] = getattr(fn, "py_func", fn)
    return py_func
