"""Poll functions: a suspending function cut into labelled blocks (see machine.py).

Labels 1..n are the function's await sites (the states a poll can resume
in); 0 is the start; labels above n are internal joins of ifs and loops.
Every block ends in ``lbl = X; continue`` or a ``return``.
"""

from __future__ import annotations

from gasync.codegen.exprs import NP, local
from gasync.codegen.machine import (
    DONE_STATE,
    PENDING,
    READY,
    Emitter,
    Shared,
    UnsupportedError,
    contains_suspend,
    restore_lines,
    source_line,
    spill_lines,
)
from gasync.planner import ir
from gasync.planner.model import FrameLayout, Function, TaskDef

IND = "            "  # the indent inside `if lbl == k:` in the dispatch loop


class PollEmitter(Emitter):
    def __init__(self, shared: Shared, fn: Function, task: TaskDef | None):
        super().__init__(shared, fn)
        self.task = task
        self.frame = shared.frames[fn.name]
        self.children = {site: (ci, cf) for site, ci, cf in self.frame.children}
        self.blocks: dict[int, list[str]] = {}
        self.order: list[int] = []
        self.cur: list[str] = []
        self.n_labels = max([0, *self.children, *self._all_sites()])

    def _all_sites(self) -> list[int]:
        from gasync.planner.walk import stmts_in

        return [s.site for s in stmts_in(self.fn.body) if isinstance(s, ir.AwaitS | ir.Select | ir.ForAwait)]

    # -- blocks --
    def new_label(self) -> int:
        self.n_labels += 1
        return self.n_labels

    def start(self, label: int) -> None:
        self.cur = self.blocks.setdefault(label, [])
        self.order.append(label)

    def goto(self, label: int, ind: str = IND) -> None:
        self.cur += [ind + f"lbl = {label}", ind + "continue"]

    # -- emission --
    def emit(self) -> list[str]:
        self.start(0)
        self.cfg(self.fn.body)
        self.cur += self.finish(None, IND)
        return self.assemble()

    def cfg(self, stmts: tuple[ir.Stmt, ...]) -> None:
        for s in stmts:
            if not contains_suspend(s):
                self.comment(self.cur, IND, s.span)
                self.stmt(s, self.cur, IND)
                continue
            self.comment(self.cur, IND, s.span)
            method = getattr(self, "_cfg_" + type(s).__name__, None)
            if method is None:
                raise UnsupportedError(
                    f"'{type(s).__name__.lower()}' with awaits is not supported by this version's code generator",
                    s.span,
                )
            method(s)

    def return_lines(self, value: ir.Expr | None, ind: str) -> list[str]:
        return self.finish(value, ind)

    def finish(self, value: ir.Expr | None, ind: str) -> list[str]:
        out = []
        if value is not None and self.frame.result is not None:
            kind, off = self.frame.result
            arr, base, conv = ("FF", "fb_f", "float64") if kind == "float" else ("FI", "fb_i", "int64")
            out.append(ind + f"{arr}[{base} + {off}] = {conv}({NP[str(self.fn.ret)]}({self.r(value)}))")
        out.append(ind + f"FI[fb_i] = {DONE_STATE}")
        out.append(ind + f"return {READY}")
        return out

    def _cfg_If(self, s: ir.If) -> None:
        then_l, else_l, join_l = self.new_label(), self.new_label(), self.new_label()
        self.cur.append(IND + f"lbl = {then_l} if {self.r(s.cond)} else {else_l}")
        self.cur.append(IND + "continue")
        self.start(then_l)
        self.cfg(s.then)
        self.goto(join_l)
        self.start(else_l)
        self.cfg(s.orelse)
        self.goto(join_l)
        self.start(join_l)

    def _loop(self, head: int, exit_: int, cont: int, body: tuple[ir.Stmt, ...]) -> None:
        self.loops.append(("cfg", exit_, cont))
        try:
            self.cfg(body)
        finally:
            self.loops.pop()

    def _cfg_Loop(self, s: ir.Loop) -> None:
        head, exit_ = self.new_label(), self.new_label()
        self.goto(head)
        self.start(head)
        self._loop(head, exit_, head, s.body)
        self.goto(head)
        self.start(exit_)

    def _cfg_While(self, s: ir.While) -> None:
        head, exit_ = self.new_label(), self.new_label()
        self.goto(head)
        self.start(head)
        self.cur.append(IND + f"if not {self.r(s.cond)}:")
        self.goto(exit_, IND + "    ")
        self._loop(head, exit_, head, s.body)
        self.goto(head)
        self.start(exit_)

    def _cfg_For(self, s: ir.For) -> None:
        if s.kind != "seq":
            raise UnsupportedError(f"'{s.kind} for' cannot contain an await", s.span)
        head, step, exit_ = self.new_label(), self.new_label(), self.new_label()
        self.cur.append(IND + self.assign(s.stop_var, self.r(s.stop)))
        self.cur.append(IND + self.assign(s.var, self.r(s.start)))
        self.goto(head)
        self.start(head)
        self.cur.append(IND + f"if not {local(s.var)} < {local(s.stop_var)}:")
        self.goto(exit_, IND + "    ")
        self._loop(head, exit_, step, s.body)
        self.goto(step)
        self.start(step)
        ty = NP[str(self.types[s.var])]
        self.cur.append(IND + f"{local(s.var)} = {ty}({local(s.var)} + {ty}(1))")
        self.goto(head)
        self.start(exit_)

    def _cfg_AwaitS(self, s: ir.AwaitS) -> None:
        ci, cf = self.children[s.site]
        fut = s.future
        if isinstance(fut, ir.YieldNow):
            self.cur.append(IND + f"FI[fb_i + {ci}] = 0")
            self.goto(s.site)
            self.start(s.site)
            self.cur.append(IND + f"if FI[fb_i + {ci}] == 0:")
            self.cur.append(IND + f"    FI[fb_i + {ci}] = 1")
            self.cur.append(IND + "    dl.wake(ST, QSEQ, QDATA, QHT, CTL, QMASK, inst)")
            self.cur += self.suspend(s.site, IND + "    ")
            return
        if isinstance(fut, ir.AsyncCall):
            self._await_call(s, fut, ci, cf)
            return
        raise UnsupportedError(
            f"awaiting {type(fut).__name__.lower()} is not supported by this version's code generator", s.span
        )

    def _await_call(self, s: ir.AwaitS, fut: ir.AsyncCall, ci: int, cf: int) -> None:
        callee = self.shared.frames[fut.fn]
        fn = self.shared.plan.function(fut.fn)
        slots = dict(callee.int_slots) | dict(callee.float_slots)
        for (pname, pty), arg in zip(fn.params, fut.args, strict=True):
            arr, base, conv = ("FF", "fb_f", "float64") if pty in ir.FLOATS else ("FI", "fb_i", "int64")
            off = ci if arr == "FI" else cf
            self.cur.append(IND + f"{arr}[{base} + {off + slots[pname]}] = {conv}({NP[pty]}({self.r(arg)}))")
        self.cur.append(IND + f"FI[fb_i + {ci}] = 0")
        self.goto(s.site)
        self.start(s.site)
        self.cur.append(IND + f"if poll_{fut.fn}(inst, w, fb_i + {ci}, fb_f + {cf}, G) == {PENDING}:")
        self.cur += self.suspend(s.site, IND + "    ")
        if s.targets and s.targets[0] is not None and callee.result is not None:
            kind, off = callee.result
            src = f"FF[fb_f + {cf + off}]" if kind == "float" else f"FI[fb_i + {ci + off}]"
            if self.types[s.targets[0]] == "bool":
                src = f"{src} != 0"
            self.cur.append(IND + self.assign(s.targets[0], src))

    def suspend(self, site: int, ind: str) -> list[str]:
        return [ind + f"FI[fb_i] = {site}", *spill_lines(self.frame, ind), ind + f"return {PENDING}"]

    # -- the function --
    def assemble(self) -> list[str]:
        name = self.fn.name
        out = ["@cuda.jit(device=True)", f"def poll_{name}(inst, w, fb_i, fb_f, G):"]
        out.append(f"    {source_line(self.shared.plan, self.fn.span)}")
        out.append("    " + self.shared.unpack)
        out += restore_lines(self.frame, self.types, "    ")
        if self.task is not None and self.task.var is not None:
            ty = NP[self.task.var_ty]
            first, start = self.task.first_instance, self.task.start
            out.append(f"    {local(self.task.var)} = {ty}({start} + (inst - {first}))")
        out.append("    lbl = FI[fb_i]")
        out.append("    while True:")
        for label in self.order:
            out.append(f"        if lbl == {label}:")
            out += self.blocks[label]
        out.append(f"        return {READY}  # not reached: every block jumps or returns")
        return out


def emit_poll(shared: Shared, fn: Function, task: TaskDef | None) -> list[str]:
    return PollEmitter(shared, fn, task).emit()


def frame_of(shared: Shared, name: str) -> FrameLayout:
    return shared.frames[name]
