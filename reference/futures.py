"""Futures as Python generators: polling is ``next``, pending is a ``yield``, ready is ``return``.

``start(future, frame)`` does what happens when a future is made: an async
fn's arguments, a send's value and a sleep's deadline are evaluated then,
once (so in ``join(a(x), async { x = 1; })`` the call sees the old ``x``).
Each poll of the generator it returns runs until the future completes
(``StopIteration`` carries the value) or cannot go on, when it yields a
tuple of :class:`~gasync.reference.world.Waiting`: what would make it worth
polling again. ``join`` polls every unfinished child on each of its polls;
``select`` polls its arms in order, and the first one that completes wins:
the others are closed (cancelled) without being polled again, so a losing
``recv`` has taken nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

from gasync.planner import ir
from gasync.planner.model import Function
from gasync.reference.exprs import ExprEval, Frame
from gasync.reference.values import Value
from gasync.reference.world import Waiting

Poll = Generator[tuple[Waiting, ...], None, Value]  # yields what it waits on, returns its value
YIELD = (Waiting("yield"),)


class Returned:
    """A ``return`` leaving a body, with its value."""

    def __init__(self, value: Value):
        self.value = value


class FutureEval(ExprEval):
    """The future half of the interpreter (mixed into :class:`~gasync.reference.machine.Machine`)."""

    functions: dict[str, Function]
    local_types: dict[str, dict[str, ir.Ty]]  # function name -> its locals' types

    def body(self, stmts: tuple[ir.Stmt, ...], frame: Frame) -> Generator[tuple[Waiting, ...], None, Any]:
        raise NotImplementedError  # provided by the statement half

    def start(self, f: ir.Future, frame: Frame) -> Poll:
        """Make the future ``f`` (evaluating what it captures now) and return its poll generator."""
        starter: Callable[[FutureEval, Any, Frame], Poll] = STARTERS[type(f)]
        return starter(self, f, frame)

    def _start_call(self, f: ir.AsyncCall, frame: Frame) -> Poll:
        args = [self.expr(a, frame) for a in f.args]
        return self.run_function(self.functions[f.fn], args)

    def run_function(self, fn: Function, args: list[Value]) -> Poll:
        callee = Frame(self.local_types[fn.name])
        callee.update((name, value) for (name, _), value in zip(fn.params, args, strict=True))
        flow = yield from self.body(fn.body, callee)
        return flow.value if isinstance(flow, Returned) else None

    def _start_yield(self, f: ir.YieldNow, frame: Frame) -> Poll:
        yield YIELD  # pending once: every other ready task runs before this one again
        return None

    def _start_sleep(self, f: ir.Sleep, frame: Frame) -> Poll:
        return self._sleep(self.world.now + int(self.expr(f.ns, frame)))

    def _sleep(self, until: int) -> Poll:
        if self.world.now >= until:  # due already: it still suspends once, behind the ready tasks
            yield YIELD  # (decision 65, as the executor does: a loop of due sleeps lets others run)
            return None
        while self.world.now < until:
            yield (Waiting("sleep", until=until),)
        return None

    def _start_send(self, f: ir.Send, frame: Frame) -> Poll:
        return self._send(f.chan, self.expr(f.value, frame))

    def _send(self, chan: str, value: Value) -> Poll:
        while not self.world.try_send(chan, value):
            yield (Waiting("send", chan),)
        return None

    def _start_recv(self, f: ir.Recv, frame: Frame) -> Poll:
        while True:  # a closed, drained channel never completes a recv (decision 16)
            ok, value = self.world.try_recv(f.chan)
            if ok:
                return value
            yield (Waiting("recv", f.chan),)

    def _start_wait(self, f: ir.Wait, frame: Frame) -> Poll:
        while not self.world.signals[f.signal]:
            yield (Waiting("signal", f.signal),)
        return None

    def _start_join(self, f: ir.Join, frame: Frame) -> Poll:
        return self._join([self.start(sub, frame) for sub in f.futures])

    def _join(self, children: list[Poll]) -> Poll:
        results: list[Value] = [None] * len(children)
        pending = list(range(len(children)))
        while True:
            waits: list[Waiting] = []
            for k in list(pending):
                done, value = poll(children[k])
                if done:
                    results[k] = value
                    pending.remove(k)
                else:
                    waits += value
            if not pending:
                return tuple(results)
            yield tuple(waits)

    def _start_block(self, f: ir.AsyncBlock, frame: Frame) -> Poll:
        flow = yield from self.body(f.body, frame)  # the block shares its function's frame
        if isinstance(flow, Returned):  # a `return` leaves the block only
            return flow.value
        return frame[f.result] if f.result is not None else None


def poll(gen: Poll) -> tuple[bool, Any]:
    """Poll once: (True, value) when the future completed, else (False, what it waits on)."""
    try:
        return False, next(gen)
    except StopIteration as stop:
        return True, stop.value


STARTERS: dict[type, Callable[[Any, Any, Frame], Poll]] = {
    ir.AsyncCall: FutureEval._start_call,
    ir.YieldNow: FutureEval._start_yield,
    ir.Sleep: FutureEval._start_sleep,
    ir.Send: FutureEval._start_send,
    ir.Recv: FutureEval._start_recv,
    ir.Wait: FutureEval._start_wait,
    ir.Join: FutureEval._start_join,
    ir.AsyncBlock: FutureEval._start_block,
}
