"""What a suspended task instance waits on, read from its frame (runtime/exits.py words a
deadlock or a timeout with it).

A task's state word (its frame's first int word) names the await point where it is suspended.
Where that point awaits a suspending async fn, an async block or a join, the futures below it
are suspended in frames of their own inside the task's frame (planner/frames.py lays them out;
codegen/futures.py uses the same offsets): a callee's or a block's frame begins with its state
word, a join's and a select's children sit side by side after one word (a join's done mask,
which leaves out the futures already done). Walking down to the channels and signals at the
bottom gives every one the instance waits on (a select's every arm, in an async fn too), and
the innermost await point, where the instance waits inside a function it awaits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias

from gasync.dsl.ast import Span
from gasync.planner import ir
from gasync.planner.frames import future_size
from gasync.planner.model import Function, Plan
from gasync.runtime.trace import await_points

Leaf: TypeAlias = ir.Recv | ir.Send | ir.Wait | ir.Sleep
Point: TypeAlias = ir.AwaitS | ir.Select | ir.ForAwait


@dataclass(frozen=True)
class Waits:
    """The channel, signal and sleep futures an instance waits on (those of local channels too), and
    where it waits inside an async fn or block it awaits (``(fn name, span)``, or None where it
    waits at its own await point)."""

    leaves: tuple[Leaf, ...]
    inner: tuple[str, Span] | None


class FrameWalk:
    """Reads the frames' int words ``fi`` of one stopped run of ``plan``."""

    def __init__(self, plan: Plan, fi: Any) -> None:
        self.fi = fi
        self.frames = {fr.fn: fr for fr in plan.frames}
        self.suspends = {f.name: f.suspends and f.kind == "async" for f in plan.functions}
        self.fns = {f.name: f for f in plan.functions}
        self._points: dict[int, dict[int, Point]] = {}

    def task(self, body: Function, word: int) -> Waits | None:
        """What the task whose frame begins at int word ``word`` waits on; None where the
        frame does not say (its state is no await point of this walk's kinds)."""
        return self._frame(body.name, body.body, {site: ci for site, ci, _ in self.frames[body.name].children}, word)

    def _word(self, at: int) -> int | None:
        return int(self.fi[at]) if 0 <= at < len(self.fi) else None

    def _frame(self, name: str, body: tuple[ir.Stmt, ...], children: dict[int, int], word: int) -> Waits | None:
        points = self._points.setdefault(id(body), {p.site: p for p in await_points(body)})
        site = self._word(word)
        point = points.get(site) if site is not None else None
        if point is None or point.site not in children:
            return None
        at = word + children[point.site]
        if isinstance(point, ir.ForAwait):
            return Waits((ir.Recv(point.chan, ir.FutureT("unit")),), None)
        if isinstance(point, ir.Select):
            got = self._side_by_side(tuple(a.future for a in point.arms), at, masked=False)
        else:
            got = self._future(point.future, at)
        if got is None:
            return None
        inner = got.inner
        if inner is None and name in self.fns:
            inner = (name, point.span)  # the point of an async fn or block awaited by the task
        return Waits(got.leaves, inner)

    def _future(self, fut: ir.Future, at: int) -> Waits | None:
        if isinstance(fut, ir.Recv | ir.Send | ir.Wait | ir.Sleep):
            return Waits((fut,), None)
        if isinstance(fut, ir.Join):
            return self._side_by_side(fut.futures, at, masked=True)
        if isinstance(fut, ir.AsyncCall) and self.suspends.get(fut.fn, False):
            fn = self.fns[fut.fn]
            return self._frame(fn.name, fn.body, {s: ci for s, ci, _ in self.frames[fn.name].children}, at)
        if isinstance(fut, ir.AsyncBlock) and fut.suspends:
            return self._frame("", fut.body, {p.site: 1 for p in await_points(fut.body)}, at)
        return None  # a yield, a call that never suspends: nothing to name

    def _side_by_side(self, futures: tuple[ir.Future, ...], at: int, masked: bool) -> Waits | None:
        """A join's futures not done yet (its mask is word ``at``), or a select's every arm."""
        mask = self._word(at) if masked else 0
        if mask is None:
            return None
        leaves: list[Leaf] = []
        inner = None
        offset = at + 1
        for k, fut in enumerate(futures):
            if not (mask >> k) & 1:
                got = self._future(fut, offset)
                if got is None:
                    return None
                leaves += got.leaves
                inner = inner or got.inner
            offset += future_size(fut, self.frames, self.suspends)[0]
        return Waits(tuple(leaves), inner)
