"""Labelled blocks: a function body cut into blocks run by a dispatch loop.

A poll function must be cut wherever it can suspend (poll.py); any function
must be cut where its statements nest deeper than Python allows (100
indentation levels, 20 nested loops), so ``DEEP`` and ``DEEP_LOOPS`` bound the
nesting emitted as structured Python and statements nested deeper become
blocks here. Every block ends in
``lbl = X; continue`` or a ``return``; the dispatch loop is
``while True: if lbl == k: ...``.
"""

from __future__ import annotations

from gasync.codegen.exprs import NP, literal, local
from gasync.codegen.machine import Emitter, Shared, UnsupportedError, source_line
from gasync.planner import ir
from gasync.planner.model import Function
from gasync.planner.walk import children

IND = "            "  # the indent inside `if lbl == k:` in the dispatch loop
DEEP = 24  # statements nested deeper than this are cut into blocks (Python stops at 100 indents)
DEEP_LOOPS = 12  # and loops (Python allows 20 nested loops in a function, the dispatch loop among them)


class BlockEmitter(Emitter):
    """The block machinery shared by poll functions and deeply nested plain functions."""

    def __init__(self, shared: Shared, fn: Function, body: tuple[ir.Stmt, ...], first_free_label: int):
        super().__init__(shared, fn)
        self.body = body
        self.blocks: dict[int, list[str]] = {}
        self.order: list[int] = []
        self.cur: list[str] = []
        self.n_labels = first_free_label
        self._depth: dict[int, tuple[int, int]] = {}

    # -- blocks --
    def new_label(self) -> int:
        self.n_labels += 1
        return self.n_labels

    def start(self, label: int) -> None:
        self.cur = self.blocks.setdefault(label, [])
        self.order.append(label)

    def goto(self, label: int, ind: str = IND) -> None:
        self.cur += [ind + f"lbl = {label}", ind + "continue"]

    def add(self, lines: list[str], ind: str = IND) -> None:
        self.cur += [ind + x for x in lines]

    def dispatch(self) -> list[str]:
        self.shared.dispatch_sizes.append((self.fn.name, len(self.order)))
        out = ["    while True:"]
        for label in self.order:
            out.append(f"        if lbl == {label}:")
            out += self.blocks[label] or [IND + "pass"]
        return out

    # -- which statements become blocks --
    def depth(self, s: ir.Stmt) -> tuple[int, int]:
        """How deep statements nest inside ``s``, and loops among them (``s`` counts)."""
        key = id(s)
        if key not in self._depth:
            inner = [self.depth(x) for body in children(s) for x in body]
            loop = isinstance(s, ir.Loop | ir.While | ir.For | ir.ForAwait)
            self._depth[key] = (
                1 + max((d for d, _ in inner), default=0),
                int(loop) + max((n for _, n in inner), default=0),
            )
        return self._depth[key]

    def must_cut(self, s: ir.Stmt) -> bool:
        nest, loops = self.depth(s)
        return nest > DEEP or loops > DEEP_LOOPS

    def cfg(self, stmts: tuple[ir.Stmt, ...]) -> None:
        for s in stmts:
            self.comment(self.cur, IND, s.span)
            if not self.must_cut(s):
                self.stmt(s, self.cur, IND)
                continue
            method = getattr(self, "_cfg_" + type(s).__name__, None)
            if method is None:
                raise UnsupportedError(f"'{type(s).__name__.lower()}' with awaits cannot be compiled", s.span)
            method(s)

    # -- control flow, as blocks --
    def _cfg_If(self, s: ir.If) -> None:
        then_l, else_l, join_l = self.new_label(), self.new_label(), self.new_label()
        self.add([f"lbl = {then_l} if {self.r(s.cond)} else {else_l}", "continue"])
        self.start(then_l)
        self.cfg(s.then)
        self.goto(join_l)
        self.start(else_l)
        self.cfg(s.orelse)
        self.goto(join_l)
        self.start(join_l)

    def _loop_body(self, exit_: int, cont: int, body: tuple[ir.Stmt, ...]) -> None:
        self.loops.append(("cfg", exit_, cont))
        try:
            self.cfg(body)
        finally:
            self.loops.pop()

    def _cfg_Loop(self, s: ir.Loop) -> None:
        head, exit_ = self.new_label(), self.new_label()
        self.goto(head)
        self.start(head)
        self.cur += self.guard(IND)
        self._loop_body(exit_, head, s.body)
        self.goto(head)
        self.start(exit_)

    def _cfg_While(self, s: ir.While) -> None:
        head, exit_ = self.new_label(), self.new_label()
        self.goto(head)
        self.start(head)
        self.cur += self.guard(IND)
        self.add([f"if not {self.r(s.cond)}:"])
        self.goto(exit_, IND + "    ")
        self._loop_body(exit_, head, s.body)
        self.goto(head)
        self.start(exit_)

    def _cfg_For(self, s: ir.For) -> None:
        if s.kind != "seq":
            raise UnsupportedError(f"a {s.kind} for cannot be compiled here", s.span)
        head, step, exit_ = self.new_label(), self.new_label(), self.new_label()
        self.add([self.assign(s.stop_var, self.r(s.stop)), self.assign(s.var, self.r(s.start))])
        self.goto(head)
        self.start(head)
        self.add([f"if not {local(s.var)} < {local(s.stop_var)}:"])
        self.goto(exit_, IND + "    ")
        self._loop_body(exit_, step, s.body)
        self.goto(step)
        self.start(step)
        ty = NP[str(self.types[s.var])]
        self.add([f"{local(s.var)} = {ty}({local(s.var)} + {ty}(1))"])
        self.goto(head)
        self.start(exit_)


class PlainBlocks(BlockEmitter):
    """A plain device function whose statements nest too deep for structured Python."""

    def emit(self, params: list[str]) -> list[str]:
        out = plain_head(self, params)
        # every local is defined on every path into every block
        params_set = {p for p, _ in self.fn.params}
        out += [f"    {local(n)} = {literal(0, ty)}" for n, ty in self.fn.locals if n not in params_set]
        out.append("    lbl = 0")
        self.start(0)
        self.cfg(self.body)
        # after the last statement: a unit fn returns; one with a value has returned on
        # every path already, and the zero only gives Numba one return type
        self.add(["return" if self.fn.ret == "unit" else f"return {literal(0, self.fn.ret)}"])
        return out + self.dispatch()


def emit_plain(shared: Shared, fn: Function) -> list[str]:
    """A function that never suspends, as a device function."""
    params = [local(p) for p, _ in fn.params]
    blocks = PlainBlocks(shared, fn, fn.body, 0)
    if any(blocks.must_cut(s) for s in fn.body):
        return blocks.emit(params)
    em = Emitter(shared, fn)
    out = plain_head(em, params)
    em.structured(fn.body, out, "    ")
    if fn.ret == "unit":
        out.append("    return")
    return out


def plain_head(em: Emitter, params: list[str]) -> list[str]:
    """A plain device function's first lines: its ``def`` (with ``inst`` where it has bounds
    checks, codegen/bounds.py), the source line, and what its loops' guards start from."""
    fn, checks = em.fn, em.shared.checks
    inst = ["inst"] if checks is not None and fn.name in checks.inst_fns else []
    if not inst:  # a signal it sets or a channel it closes names no waker (only traces read it)
        em.r.self_inst = "int64(-1)"
    out = ["@cuda.jit(device=True)", f"def fn_{fn.name}({', '.join([*params, 'w', *inst, 'G'])}):"]
    out.append(f"    {source_line(em.shared.plan, fn.span)}")
    zero = "" if fn.ret == "unit" else f" {literal(0, fn.ret)}"
    return out + ["    " + line for line in em.guard_setup(fn.body, zero)]
