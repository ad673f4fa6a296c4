"""Executing IR statements: one small executor per statement kind.

A body runs as a generator (see :mod:`gasync.reference.futures`): it yields
only at an await that cannot complete yet, and returns how it ended: None
(it ran off its end), :data:`BREAK`, :data:`CONTINUE` or a
:class:`~gasync.reference.futures.Returned`. ``parallel for`` and ``bulk
for`` run their iterations in order, in the task's own turn: their
iterations are unordered in the language (decision 26), and in order is one
of the orders allowed.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

from gasync.planner import ir
from gasync.planner.consteval import convert
from gasync.planner.reduces import combine, identity
from gasync.reference.exprs import Frame
from gasync.reference.futures import FutureEval, Poll, Returned, poll
from gasync.reference.values import Value, binary, from_element
from gasync.reference.world import Waiting

BREAK = "break"
CONTINUE = "continue"
Flow = None | str | Returned
Body = Generator[tuple[Waiting, ...], None, Flow]
COMPOUND = {"+=": "+", "-=": "-", "*=": "*", "/=": "/", "%=": "%", "&=": "&", "|=": "|", "^=": "^"}
COMPOUND |= {"<<=": "<<", ">>=": ">>"}


class StmtEval(FutureEval):
    """The statement half of the interpreter (mixed into :class:`~gasync.reference.machine.Machine`)."""

    def body(self, stmts: tuple[ir.Stmt, ...], frame: Frame) -> Body:
        for s in stmts:
            self.world.step()
            run = SIMPLE.get(type(s))
            flow = run(self, s, frame) if run is not None else (yield from COMPOUND_STMTS[type(s)](self, s, frame))
            if flow is not None:
                return flow
        return None

    def call_fn(self, name: str, args: list[Value]) -> Value:
        """Run a plain fn to completion (it has no awaits, so its generator never yields)."""
        done, value = poll(self.run_function(self.functions[name], args))
        assert done, f"plain fn '{name}' tried to suspend"
        return value

    def assign(self, name: str, op: str, value: Value, frame: Frame) -> None:
        if op != "=":
            value = binary(COMPOUND[op], frame[name], value, str(frame.types[name]))
        frame[name] = value

    # ---- simple statements ----
    def _let(self, s: ir.Let, frame: Frame) -> Flow:
        self.assign(s.var, s.op, self.expr(s.value, frame), frame)
        return None

    def _store(self, s: ir.Store, frame: Frame) -> Flow:
        ix = self.index(s.index, frame, s.buf)
        value = self.expr(s.value, frame)
        arr = self.world.buffers[s.buf]
        if s.op != "=":
            elem = self.world.buffer_types[s.buf]
            value = binary(COMPOUND[s.op], from_element(arr[ix], elem), value, elem)
        arr[ix] = value
        return None

    def _eval(self, s: ir.Eval, frame: Frame) -> Flow:
        self.expr(s.expr, frame)
        return None

    def _return(self, s: ir.Return, frame: Frame) -> Flow:
        return Returned(self.expr(s.value, frame) if s.value is not None else None)

    # ---- statements that may suspend ----
    def _await(self, s: ir.AwaitS, frame: Frame) -> Body:
        value = yield from self.start(s.future, frame)
        values = value if isinstance(s.future, ir.Join) else (value,)
        for target, v in zip(s.targets, values, strict=False):
            if target is not None:
                frame[target] = v
        return None

    def _if(self, s: ir.If, frame: Frame) -> Body:
        branch = s.then if self.expr(s.cond, frame) else s.orelse
        return (yield from self.body(branch, frame))

    def _loop(self, s: ir.Loop, frame: Frame) -> Body:
        while True:
            self.world.step()
            flow = yield from self.body(s.body, frame)
            if flow == BREAK or isinstance(flow, Returned):
                return None if flow == BREAK else flow

    def _while(self, s: ir.While, frame: Frame) -> Body:
        while self.expr(s.cond, frame):
            self.world.step()
            flow = yield from self.body(s.body, frame)
            if flow == BREAK or isinstance(flow, Returned):
                return None if flow == BREAK else flow
        return None

    def _for(self, s: ir.For, frame: Frame) -> Body:
        k = self.expr(s.start, frame)
        frame[s.stop_var] = self.expr(s.stop, frame)
        red = s.reduce
        acc = None  # no iteration's value yet
        while k < frame[s.stop_var]:
            self.world.step()
            frame[s.var] = k
            flow = yield from self.body(s.body, frame)
            if flow == BREAK or isinstance(flow, Returned):
                return None if flow == BREAK else flow
            if red is not None:  # iterations in order: one of the orders a parallel loop may take
                value = frame[red.value] if acc is None else combine(red.op, red.ty, acc, frame[red.value])
                acc = convert(value, str(red.ty))
            k += 1
        if red is not None:  # an empty range gives the identity
            frame[red.into] = identity(red.op, red.ty) if acc is None else acc
        return None

    def _for_await(self, s: ir.ForAwait, frame: Frame) -> Body:
        while True:
            ok, value = self.world.try_recv(s.chan)
            if not ok:
                if self.world.drained(s.chan):
                    return None
                yield (Waiting("recv", s.chan),)
                continue
            self.world.step()
            frame[s.var] = value
            flow = yield from self.body(s.body, frame)
            if flow == BREAK or isinstance(flow, Returned):
                return None if flow == BREAK else flow

    def _select(self, s: ir.Select, frame: Frame) -> Body:
        arms: list[Poll] = [self.start(arm.future, frame) for arm in s.arms]
        while True:
            waits: list[Waiting] = []
            for k, gen in enumerate(arms):
                done, value = poll(gen)
                if done:
                    for loser in arms[:k] + arms[k + 1 :]:
                        loser.close()  # cancelled: polled no more
                    return (yield from self._arm(s.arms[k], value, frame))
                waits += value
            yield tuple(waits)

    def _arm(self, arm: ir.SelectArm, value: Value, frame: Frame) -> Body:
        if arm.target is not None:
            frame[arm.target] = value
        return (yield from self.body(arm.body, frame))


SIMPLE: dict[type, Callable[[Any, Any, Frame], Flow]] = {
    ir.Let: StmtEval._let,
    ir.Store: StmtEval._store,
    ir.Eval: StmtEval._eval,
    ir.Return: StmtEval._return,
    ir.Break: lambda self, s, frame: BREAK,
    ir.Continue: lambda self, s, frame: CONTINUE,
}
COMPOUND_STMTS: dict[type, Callable[[Any, Any, Frame], Body]] = {
    ir.AwaitS: StmtEval._await,
    ir.If: StmtEval._if,
    ir.Loop: StmtEval._loop,
    ir.While: StmtEval._while,
    ir.For: StmtEval._for,
    ir.ForAwait: StmtEval._for_await,
    ir.Select: StmtEval._select,
}
