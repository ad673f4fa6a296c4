"""Poll functions: a suspending function cut into labelled blocks (see machine.py).

Labels 1..n are the function's await sites (the states a poll can resume
in); 0 is the start; labels above n are internal joins of ifs and loops.
Every block ends in ``lbl = X; continue`` or a ``return``. An async block
becomes a poll function of its own (``blk_<n>``) whose state word and child
frames live in its parent's child region (``cb_i``/``cb_f``) and whose locals
are the parent's, spilled before and restored after each poll of the block.
"""

from __future__ import annotations

from gasync.codegen import groups, reduce
from gasync.codegen.blocks import IND, BlockEmitter
from gasync.codegen.exprs import NP, literal, local
from gasync.codegen.futures import FutureRenderer
from gasync.codegen.machine import (
    ABORT,
    DONE_STATE,
    FORK,
    FRAME,
    PENDING,
    READY,
    Shared,
    contains_suspend,
    source_line,
    suspends_here,
)
from gasync.planner import ir
from gasync.planner.model import FrameLayout, Function, TaskDef
from gasync.planner.printer import source_name
from gasync.planner.walk import children, stmts_in


def _sites(body: tuple[ir.Stmt, ...]) -> list[int]:
    """Await sites of ``body``, not counting those inside async blocks."""
    out = []
    for s in body:
        if isinstance(s, ir.AwaitS | ir.Select | ir.ForAwait):
            out.append(s.site)
        if isinstance(s, ir.If):
            out += _sites(s.then) + _sites(s.orelse)
        elif isinstance(s, ir.Loop | ir.While | ir.For | ir.ForAwait):
            out += _sites(s.body)
        elif isinstance(s, ir.Select):
            for arm in s.arms:
                out += _sites(arm.body)
    return out


class PollEmitter(BlockEmitter, FutureRenderer):
    @property
    def own_body(self) -> bool:
        """Whether this is a task's own body, whose awaits are awaited alone: an async fn or
        block may be one of a join's or a select's futures, which must not wait for one of
        them in place (the others would not be polled meanwhile)."""
        return self.task is not None and self.block is None

    def __init__(self, shared: Shared, fn: Function, task: TaskDef | None, block: ir.AsyncBlock | None = None):
        body = block.body if block else fn.body
        super().__init__(shared, fn, body, max([0, *(s for s in stmts_in_sites(fn.body))]))
        self._cut: dict[int, bool] = {}
        self.task = task
        self.block = block
        self.frame = shared.frames[fn.name]
        self.sw = "cb_i" if block else "fb_i"  # where this machine's state word is
        if block is None:
            self.children = {site: (str(ci), str(cf)) for site, ci, cf in self.frame.children}
        else:
            self.children = {site: ("cbo_i + 1", "cbo_f") for site in _sites(block.body)}
        self.current_site = 0  # the await being emitted: where a FORK from a child resumes

    # -- emission --
    def emit(self) -> list[str]:
        self.start(0)
        self.cfg(self.body)
        self.cur += self.finish(None, IND)
        return self.assemble()

    def must_cut(self, s: ir.Stmt) -> bool:
        bulk = isinstance(s, ir.For) and s.kind == "bulk"
        return bulk or self.suspends_in(s) or super().must_cut(s)

    def suspends_in(self, s: ir.Stmt) -> bool:
        """``contains_suspend``, remembered per statement: cfg asks at every level."""
        key = id(s)
        if key not in self._cut:
            inner = (self.suspends_in(x) for body in children(s) for x in body)
            self._cut[key] = suspends_here(s) or any(inner)
        return self._cut[key]

    def return_lines(self, value: ir.Expr | None, ind: str) -> list[str]:
        return self.finish(value, ind)

    def finish(self, value: ir.Expr | None, ind: str) -> list[str]:
        out = []
        if self.block is not None:
            if value is not None and self.block.result is not None:
                out.append(ind + self.assign(self.block.result, self.r(value)))
            out += spill_lines(self.frame, ind)
        elif value is not None and self.frame.result is not None:
            kind, off = self.frame.result
            arr, base, conv = ("FF", "fb_f", "float64") if kind == "float" else ("FI", "fb_i", "int64")
            out.append(ind + f"{arr}[{base} + {off}] = {conv}({NP[str(self.fn.ret)]}({self.r(value)}))")
        out.append(ind + f"FI[{self.sw}] = {DONE_STATE}")
        out.append(ind + f"return {READY}")
        return out

    def internal_state(self, label: int, what: str) -> None:
        """Name a state of a task's own word that is no await site (traces and ``--states`` show it)."""
        if self.task is not None and self.block is None:
            self.shared.internal_states.append((self.task.name, label, f"s{label} {what}"))

    def suspend(self, site: int, ind: str, code: str | int = PENDING) -> list[str]:
        """Save the state and every local, and return ``code`` (PENDING, or FORK from a child)."""
        return [ind + f"FI[{self.sw}] = {site}", *spill_lines(self.frame, ind), ind + f"return {code}"]

    def guard(self, ind: str) -> list[str]:
        return [
            ind + "turns += 1",
            ind + "if turns % 4096 == 0 and dl.overdue(G.sched.CTL):",
            ind + f"    return {ABORT}  # the run's deadline passed in this loop",
        ]

    def forked(self) -> list[str]:
        """After polling a child: if it handed its warp a parallel loop, pass the FORK up."""
        return [
            f"if code == {ABORT}:",
            f"    return {ABORT}",
            "if code == 2:",
            *self.suspend(self.current_site, "    ", FORK),
        ]

    def spill_all(self) -> list[str]:
        return spill_lines(self.frame, "")

    def restore_all(self) -> list[str]:
        return restore_lines(self.frame, self.types, "")

    def block_name(self, fut: ir.AsyncBlock) -> str:
        for k, (blk, _) in enumerate(self.shared.blocks):
            if blk is fut:
                return f"blk_{k + 1}"
        self.shared.blocks.append((fut, self.fn.name))
        return f"blk_{len(self.shared.blocks)}"

    # -- control flow with awaits inside --
    def _cfg_For(self, s: ir.For) -> None:
        if s.kind == "bulk":
            self._bulk(s)
        elif s.kind == "parallel":
            self._fork(s)
        else:
            super()._cfg_For(s)

    def _cfg_AwaitS(self, s: ir.AwaitS) -> None:
        if not s.suspends:
            self.stmt(s, self.cur, IND)
            return
        ci, cf = self.children[s.site]
        self.add(self.init(s.future, ci, cf))
        self.goto(s.site)
        self.start(s.site)
        self.current_site = s.site
        if isinstance(s.future, ir.Join):
            self.add(self.poll_join(s.future, ci, cf, "rdy", s.targets))
        else:
            target = s.targets[0] if s.targets else None
            self.add(self.poll(s.future, ci, cf, "rdy", target, alone=self.own_body))
        self.add(["if not rdy:"])
        self.cur += self.suspend(s.site, IND + "    ")

    def _cfg_Select(self, s: ir.Select) -> None:
        ci, cf = self.children[s.site]
        arms = ir.Join(tuple(a.future for a in s.arms), ir.FutureT("unit"))
        offsets = self.join_offsets(arms, ci, cf)
        for arm, (ai, af) in zip(s.arms, offsets, strict=True):
            self.add(self.init(arm.future, ai, af))
        self.goto(s.site)
        self.start(s.site)
        self.current_site = s.site
        self.add(["won = -1"])
        jobs = self.job_offsets(arms.futures)
        for k, (arm, (ai, af)) in enumerate(zip(s.arms, offsets, strict=True)):
            self.add(["if won < 0:"])
            with self.jobs_from(jobs[k]):
                self.add(self.poll(arm.future, ai, af, f"rdy_{k}", arm.target), IND + "    ")
            self.add([f"    if rdy_{k}:", f"        won = {k}"])
        self.add(["if won < 0:"])
        self.cur += self.suspend(s.site, IND + "    ")
        for k, (arm, (ai, _)) in enumerate(zip(s.arms, offsets, strict=True)):  # a losing channel arm
            if isinstance(arm.future, ir.Send | ir.Recv) and not groups.is_local(arm.future.chan):  # lets go
                side = "SEND" if isinstance(arm.future, ir.Send) else "RECV"
                done = self.shared.chan_done(side, arm.future.chan, f"FI[fb_i + {ai}]")
                if done:
                    self.add([f"if won != {k}:", *("    " + x for x in done)])
        self._drain_losers(s, ci, jobs)
        labels = [self.new_label() for _ in s.arms]
        join_l = self.new_label()
        for k, lab in enumerate(labels):
            self.add([f"if won == {k}:"])
            self.goto(lab, IND + "    ")
        for arm, lab in zip(s.arms, labels, strict=True):
            self.start(lab)
            self.cfg(arm.body)
            self.goto(join_l)
        self.start(join_l)

    def _drain_losers(self, s: ir.Select, ci: str, jobs: list[str]) -> None:
        """A losing arm may have posted bulk jobs, whose chunks run on regardless: the
        select ends once they have, so that nothing later reuses their rows while
        they run. Word ``ci`` keeps the winner meanwhile."""
        sh = self.shared
        widths = [sh.jobs.future(a.future) if sh.jobs is not None else 0 for a in s.arms]
        if not any(widths):
            return
        drain = self.new_label()
        self.internal_state(drain, f"line {s.span.line}: select (its losing arms' bulk chunks finish)")
        self.add([f"FI[fb_i + {ci}] = won"])
        self.goto(drain)
        self.start(drain)
        self.add([f"won = FI[fb_i + {ci}]"])
        for k, (n, jb) in enumerate(zip(widths, jobs, strict=True)):
            if n:
                self.add([f"if won != {k} and not dsync.bulk_rows_done(G.jobs.JOB, {sh.job_row(jb)}, {n}):"])
                self.cur += self.suspend(drain, IND + "    ")

    def _cfg_ForAwait(self, s: ir.ForAwait) -> None:
        ci, _ = self.children[s.site]
        head, exit_ = self.new_label(), self.new_label()
        self.goto(head)
        self.start(head)
        self.add([f"FI[fb_i + {ci}] = 0"])
        self.goto(s.site)
        self.start(s.site)
        self.add(self.recv_lines(s.chan, ci, "rdy", s.var, ended="ended", alone=self.own_body))
        self.add(["if ended:"])
        self.goto(exit_, IND + "    ")
        self.add(["if not rdy:"])
        self.cur += self.suspend(s.site, IND + "    ")
        self._loop_body(exit_, head, s.body)
        self.goto(head)
        self.start(exit_)

    def _fork(self, s: ir.For) -> None:
        """``parallel for``: hand the loop to the whole warp (FORK), then carry on after it."""
        loop = self.register_parallel(s)
        after = self.new_label()
        self.internal_state(after, f"line {s.span.line}: parallel for {source_name(self.fn, s.var)}")
        self.add(
            [f"# parallel for {s.var} -> par_{loop.gid}: the executor runs it on all {32} lanes, then polls again"]
        )
        self.add([f"G.exec.PARGS_I[w, 0] = int64({self.r(s.start)})"])
        self.add([f"G.exec.PARGS_I[w, 1] = int64({self.r(s.stop)})"])
        self.add(self.pack_args(loop, "G.exec.PARGS_I[w", "G.exec.PARGS_F[w"))
        self.add([f"G.exec.CMD[w, dl.CMD_COMMAND] = {loop.gid}"])
        self.cur += self.suspend(after, IND, FORK)
        self.start(after)
        if s.reduce is not None and loop.result is not None:  # lane 0 left the warp's value there
            kind, k = loop.result
            self.add([self.assign(s.reduce.into, reduce.read_value(s.reduce, f"G.exec.PARGS_{kind}[w, {k}]"))])

    def _bulk(self, s: ir.For) -> None:
        """``bulk for``: post a job that idle warps anywhere run in chunks; wait for it."""
        label = self.new_label()
        self.internal_state(label, f"line {s.span.line}: bulk for {source_name(self.fn, s.var)} (waits for its chunks)")
        loop = self.register_parallel(s, bulk=True)
        job = self.shared.job_row()
        self.add([f"# bulk for {s.var} -> par_{loop.gid}, in chunks run by idle warps across the GPU"])
        self.add([f"lo = int64({self.r(s.start)})", f"hi = int64({self.r(s.stop)})"])
        self.add(self.pack_args(loop, f"G.jobs.JOBARGS_I[{job}", f"G.jobs.JOBARGS_F[{job}"))
        executors = "G.sched.CTL[dsync.CTL_EXECUTORS]"
        post = f"dsync.bulk_post(G.jobs, G.sched.CTL, {job}, inst, {loop.gid}, lo, hi, {executors})"
        self.add([f"if not {post}:"])
        self.add(
            [
                "    # every job slot is taken: this warp runs the whole range itself",
                "    G.exec.PARGS_I[w, 0] = lo",
                "    G.exec.PARGS_I[w, 1] = hi",
                f"    G.exec.CMD[w, dl.CMD_JOB] = {job}",
                f"    G.exec.CMD[w, dl.CMD_COMMAND] = {loop.gid}",
                f"    G.jobs.JOB[{job}, dsync.JOB_DONE] = G.jobs.JOB[{job}, dsync.JOB_CHUNKS]",
            ]
        )
        self.cur += self.suspend(label, IND + "    ", FORK)
        self.add([f"FI[{self.sw}] = {label}"])
        self.goto(label)
        self.start(label)
        self.add([f"if not dsync.bulk_done(G.jobs.JOB, {job}):"])
        self.cur += self.suspend(label, IND + "    ")
        if s.reduce is not None and loop.result is not None:  # every chunk has combined into it
            kind, k = loop.result
            word = f"dl.ld(G.jobs.JOBARGS_{kind}, ({job}, {k}))"
            self.add([self.assign(s.reduce.into, reduce.read_value(s.reduce, word))])

    # -- the function --
    def assemble(self) -> list[str]:
        if self.block is not None:
            name = self.block_name(self.block)
            jb = self.shared.jb_arg("jb")
            lp = groups.locals_param(self.shared.plan, self.fn.name)
            out = ["@cuda.jit(device=True)", f"def {name}(inst, w, fb_i, fb_f, cb_i, cb_f, {jb}G{lp}):"]
            out.append(f"    # async block {source_line(self.shared.plan, self.block.span).removeprefix('# ')}")
            out.append("    cbo_i = cb_i - fb_i")
            out.append("    cbo_f = cb_f - fb_f")
        else:
            jb = self.shared.jb_arg("jb")
            lp = groups.locals_param(self.shared.plan, self.fn.name)
            out = ["@cuda.jit(device=True)", f"def poll_{self.fn.name}(inst, w, fb_i, fb_f, {jb}G{lp}):"]
            out.append(f"    {source_line(self.shared.plan, self.fn.span)}")
        out.append("    " + FRAME)
        never_suspends = self.block is None and not any(contains_suspend(x) for x in self.body)
        if never_suspends:
            # every poll is its first: locals start at zero, not from the frame
            out += [f"    {local(n)} = {literal(0, ty)}" for n, ty in self.fn.locals]
        else:
            out += restore_lines(self.frame, self.types, "    ")
        if self.task is not None and self.task.group is not None:
            out += groups.instance_vars(self.shared.plan, self.task, NP)
        elif self.task is not None and self.task.var is not None:
            ty = NP[self.task.var_ty]
            first, start = self.task.first_instance, self.task.start
            out.append(f"    {local(self.task.var)} = {ty}({start} + (inst - {first}))")
        out.append("    turns = 0")
        # one that never suspends starts at 0 without reading its state word (a load
        # from DRAM per instance)
        out.append("    lbl = 0" if never_suspends else f"    lbl = FI[{self.sw}]")
        out += self.dispatch()
        out.append(f"        return {READY}  # not reached: every block jumps or returns")
        return out


def stmts_in_sites(body: tuple[ir.Stmt, ...]) -> list[int]:
    return [s.site for s in stmts_in(body) if isinstance(s, ir.AwaitS | ir.Select | ir.ForAwait)]


def emit_poll(shared: Shared, fn: Function, task: TaskDef | None) -> list[str]:
    return PollEmitter(shared, fn, task).emit()


def emit_block(shared: Shared, block: ir.AsyncBlock, fn_name: str) -> list[str]:
    fn = shared.plan.function(fn_name)
    task = next((t for t in shared.plan.tasks if t.name == fn_name), None)
    return PollEmitter(shared, fn, task, block).emit()


def restore_lines(frame: FrameLayout, types: dict[str, ir.Ty], ind: str) -> list[str]:
    out = []
    for name, off in frame.int_slots:
        ty = types[name]
        if ty == "bool":
            out.append(f"{ind}{local(name)} = FI[fb_i + {off}] != 0")
        else:
            out.append(f"{ind}{local(name)} = {NP[str(ty)]}(FI[fb_i + {off}])")
    for name, off in frame.float_slots:
        out.append(f"{ind}{local(name)} = {NP[str(types[name])]}(FF[fb_f + {off}])")
    return out


def spill_lines(frame: FrameLayout, ind: str) -> list[str]:
    out = [f"{ind}FI[fb_i + {off}] = int64({local(name)})" for name, off in frame.int_slots]
    out += [f"{ind}FF[fb_f + {off}] = float64({local(name)})" for name, off in frame.float_slots]
    return out
