"""Bulk job rows: how many ``bulk for`` loops one task instance can have posted at once.

A bulk loop posts a job (``JOB`` row) and its task waits for the job's chunks.
Awaited one after another, an instance has one job at a time, and its row is
the instance's own. A ``join`` (or a ``select``) polls several futures in one
poll, and each of them may post a job of its own and wait on it: they need
rows side by side, or the second post overwrites the first (issue 10).

``width`` counts the rows a future or a body needs at its widest moment: a
bulk loop needs one, a join or a select's arms the sum of their children,
anything awaited in sequence the most of its parts. A program whose widest
task needs one row keeps the plain layout (row = instance). Otherwise every
instance owns ``job_width`` rows and each poll function is given ``jb``, the
first row of its own: a join's k-th child starts after the rows of the
children before it. ``jb`` is a run-time argument, not a constant, because one
async fn may be awaited alone in one place and inside a join in another.
"""

from __future__ import annotations

from gasync.planner import ir
from gasync.planner.model import Plan


class JobWidths:
    """Rows of bulk jobs per function body, computed once per plan."""

    def __init__(self, plan: Plan, suspends: dict[str, bool]):
        self.plan = plan
        self.suspends = suspends
        self.fns: dict[str, int] = {}
        for fn in plan.functions:  # callees come before their callers
            self.fns[fn.name] = self.body(fn.body) if suspends.get(fn.name) else 0
        self.tasks = {t.name: self.body(t.body.body) for t in plan.tasks}

    @property
    def per_instance(self) -> int:
        """Rows each instance owns: the widest task's need (at least one)."""
        return max([1, *self.tasks.values()])

    def body(self, stmts: tuple[ir.Stmt, ...]) -> int:
        return max([0, *(self.stmt(s) for s in stmts)])

    def stmt(self, s: ir.Stmt) -> int:
        if isinstance(s, ir.For):
            return 1 if s.kind == "bulk" else self.body(s.body)
        if isinstance(s, ir.AwaitS):
            return self.future(s.future)
        if isinstance(s, ir.Select):
            arms = sum(self.future(a.future) for a in s.arms)
            return max([arms, *(self.body(a.body) for a in s.arms)])
        if isinstance(s, ir.If):
            return max(self.body(s.then), self.body(s.orelse))
        if isinstance(s, ir.Loop | ir.While | ir.ForAwait):
            return self.body(s.body)
        return 0

    def future(self, f: ir.Future) -> int:
        if isinstance(f, ir.AsyncCall):
            return self.fns.get(f.fn, 0)
        if isinstance(f, ir.Join):
            return sum(self.future(x) for x in f.futures)
        if isinstance(f, ir.AsyncBlock):
            return self.body(f.body)
        return 0

    def offsets(self, futures: tuple[ir.Future, ...]) -> list[int]:
        """The first row of each future polled side by side, from the parent's ``jb``."""
        out, at = [], 0
        for f in futures:
            out.append(at)
            at += self.future(f)
        return out
