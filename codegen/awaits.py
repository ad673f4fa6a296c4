"""The statements of a poll function that can suspend, as block IR (poll.py builds the rest).

Each await point resumes at a block of its own (``resume_at(site)``): the
block polls the future and suspends where it is not ready. A lone await of a
suspending async fn passes the callee's arguments on its first poll as
arguments of the call (``first_<site>``, ``a<site>_<k>``), not through the
callee's frame, and reads its value after the branch, so liveness sees the
target written there (codegen/liveness.py).
"""

from __future__ import annotations

from gasync.codegen import groups, reduce
from gasync.codegen.blocks import BlockEmitter, expr_reads, reads
from gasync.codegen.exprs import NP, literal, local, wrap
from gasync.codegen.futures import FutureRenderer
from gasync.codegen.machine import FORK, PENDING, ParallelLoop
from gasync.planner import ir
from gasync.planner.model import TaskDef
from gasync.planner.printer import loop_text


class AwaitBlocks(BlockEmitter, FutureRenderer):
    """The await statements of the poll emitter (poll.py, which sets what is declared here)."""

    children: dict[int, tuple[str, str]]  # await site -> its future's frame words (int, float)
    temps: list[tuple[str, str]]  # (name, zero) of the first polls' argument registers
    first_calls: dict[int, str]  # id of a lone await's call -> its first-poll arguments
    current_site: int
    sw: str  # where this machine's state word is
    task: TaskDef | None
    block: ir.AsyncBlock | None

    @property
    def own_body(self) -> bool:
        """Whether this is a task's own body, whose awaits are awaited alone: an async fn or
        block may be one of a join's or a select's futures, which must not wait for one of
        them in place (the others would not be polled meanwhile)."""
        return self.task is not None and self.block is None

    def new_state(self) -> int:
        raise NotImplementedError

    def internal_state(self, label: int, what: str) -> None:
        raise NotImplementedError

    def first_poll_args(self, fut: ir.AsyncCall, site: int) -> list[str]:
        """The arguments of a lone await's callee, into registers for its first poll."""
        fn = self.shared.plan.function(fut.fn)
        lines, names = [f"first_{site} = True"], []
        self.temps.append((f"first_{site}", "False"))
        for k, ((_, pty), arg) in enumerate(zip(fn.params, fut.args, strict=True)):
            name = f"a{site}_{k}"
            self.temps.append((name, literal(0, pty)))
            lines.append(f"{name} = {wrap(NP[pty], self.r(arg))}")
            names.append(name)
        self.first_calls[id(fut)] = ", ".join([f"first_{site}", *names])
        return lines

    def _cfg_AwaitS(self, s: ir.AwaitS) -> None:
        if not s.suspends:
            lines: list[str] = []
            self.stmt(s, lines, "")
            self.add(lines, reads((s,)))
            return
        ci, cf = self.children[s.site]
        fut = s.future
        sh = self.shared
        lone_call = isinstance(fut, ir.AsyncCall) and sh.suspends[fut.fn]
        target = s.targets[0] if s.targets else None
        after = isinstance(fut, ir.AsyncCall | ir.AsyncBlock) and target is not None
        if lone_call:
            self.add(self.first_poll_args(fut, s.site), reads((s,)))
        else:  # a join's values are all written before it is ready: the old ones are dead here
            joined = frozenset(t for t in s.targets if t is not None) if isinstance(fut, ir.Join) else frozenset()
            self.add(self.init(fut, ci, cf), reads((s,)), joined)
        self.resume_at(s.site)
        self.current_site = s.site
        if isinstance(fut, ir.Join):
            lines = self.poll_join(fut, ci, cf, "rdy", s.targets)
        else:
            alone = self.own_body
            lines = self.poll(fut, ci, cf, "rdy", None if after else target, alone=alone)
        self.add(lines, frozenset() if lone_call else reads((s,)))
        self.suspend_if("not rdy", s.site, PENDING)
        if after and target is not None:
            value = self.future_value(fut, "rdy", target)
            self.add(value, frozenset(), frozenset([target]))

    def _cfg_Select(self, s: ir.Select) -> None:
        ci, cf = self.children[s.site]
        arms = ir.Join(tuple(a.future for a in s.arms), ir.FutureT("unit"))
        offsets = self.join_offsets(arms, ci, cf)
        init = [x for arm, (ai, af) in zip(s.arms, offsets, strict=True) for x in self.init(arm.future, ai, af)]
        self.add(init, reads((s,)))
        self.resume_at(s.site)
        self.current_site = s.site
        lines = ["won = -1"]
        jobs = self.job_offsets(arms.futures)
        for k, (arm, (ai, af)) in enumerate(zip(s.arms, offsets, strict=True)):
            lines.append("if won < 0:")
            with self.jobs_from(jobs[k]):
                lines += ["    " + x for x in self.poll(arm.future, ai, af, f"rdy_{k}", arm.target)]
            lines += [f"    if rdy_{k}:", f"        won = {k}"]
        self.add(lines, reads((s,)))
        self.suspend_if("won < 0", s.site, PENDING)
        for k, (arm, (ai, _)) in enumerate(zip(s.arms, offsets, strict=True)):  # a losing channel arm
            if isinstance(arm.future, ir.Send | ir.Recv) and not groups.is_local(arm.future.chan):  # lets go
                side = "SEND" if isinstance(arm.future, ir.Send) else "RECV"
                done = self.shared.chan_done(side, arm.future.chan, f"FI[fb_i + {ai}]")
                if done:
                    self.add([f"if won != {k}:", *("    " + x for x in done)])
        self._drain_losers(s, ci, jobs)
        labels = [self.new_label() for _ in s.arms]
        join_l = self.new_label()
        for k, lab in enumerate(labels[:-1]):
            self.goto_if(f"won == {k}", lab)
        self.goto(labels[-1])
        for arm, lab in zip(s.arms, labels, strict=True):
            self.start(lab)
            self.cfg(arm.body)
            self._close(join_l)
        self.start(join_l)

    def _drain_losers(self, s: ir.Select, ci: str, jobs: list[str]) -> None:
        """A losing arm may have posted bulk jobs, whose chunks run on regardless: the
        select ends once they have, so that nothing later reuses their rows while
        they run. Word ``ci`` keeps the winner meanwhile."""
        sh = self.shared
        widths = [sh.jobs.future(a.future) if sh.jobs is not None else 0 for a in s.arms]
        if not any(widths):
            return
        drain = self.new_state()
        self.internal_state(drain, f"line {s.span.line}: select (its losing arms' bulk chunks finish)")
        self.add([f"FI[fb_i + {ci}] = won"])
        self.resume_at(drain)
        self.add([f"won = FI[fb_i + {ci}]"])
        for k, (n, jb) in enumerate(zip(widths, jobs, strict=True)):
            if n:
                cond = f"won != {k} and not dsync.bulk_rows_done(G.jobs.JOB, {sh.job_row(jb)}, {n})"
                self.suspend_if(cond, drain, PENDING)

    def _cfg_ForAwait(self, s: ir.ForAwait) -> None:
        ci, _ = self.children[s.site]
        head, exit_ = self.new_label(), self.new_label()
        self.start(head)
        self.add([f"FI[fb_i + {ci}] = 0"])
        self.add(self.turn_flush((*s.body, s)))  # each turn (its own receive: recv_lines)
        self.resume_at(s.site)
        self.current_site = s.site
        alone = self.own_body
        self.add(self.recv_lines(s.chan, ci, "rdy", s.var, ended="ended", alone=alone))
        self.goto_if("ended", exit_)
        self.suspend_if("not rdy", s.site, PENDING)
        self._loop_body(exit_, head, s.body)
        self._close(head)
        self.start(exit_)

    def _fork(self, s: ir.For) -> None:
        """``parallel for``: hand the loop to the whole warp (FORK), then carry on after it."""
        loop = self.register_parallel(s)
        if self.warp:
            self._inline_map(s, loop)
            return
        after = self.new_state()
        self.internal_state(after, loop_text(self.fn, s))
        lines = [f"# parallel for {s.var} -> par_{loop.gid}: the executor runs it on all {32} lanes, then polls again"]
        lines.append(f"G.exec.PARGS_I[w, 0] = {self._word(s, s.start)}")
        lines.append(f"G.exec.PARGS_I[w, 1] = {self._word(s, s.stop)}")
        lines += self.pack_args(loop, "G.exec.PARGS_I[w", "G.exec.PARGS_F[w")
        lines.append(f"G.exec.CMD[w, dl.CMD_COMMAND] = {loop.gid}")
        self.add(lines, loop_reads(s, loop))
        self.suspend(after, FORK)
        self.resume_at(after)
        if s.reduce is not None and loop.result is not None:  # lane 0 left the warp's value in its frame word
            kind, off = self.frame_slot(s.reduce.into)
            value = reduce.read_value(s.reduce, f"{kind}[{'fb_i' if kind == 'FI' else 'fb_f'} + {off}]")
            self.add([self.assign(s.reduce.into, value)], frozenset(), frozenset([s.reduce.into]))

    def _inline_map(self, s: ir.For, loop: ParallelLoop) -> None:
        """``parallel for`` in a poll on all 32 lanes (codegen/warppoll.py): its function right
        here, each lane its share, then the lanes meet (their stores, before the poll goes
        on to publish them): no FORK, no argument row, no suspend."""
        loop.inline = True
        args = [self._word(s, s.start), self._word(s, s.stop), *(local(name) for name, _ in loop.captured)]
        checks = self.shared.checks
        if checks is not None and checks.needs_inst(s.body):  # a fault names its instance
            loop.inst_word = -1  # (a parameter, not a word of a row)
            args.append("inst")
        lines = [
            f"# parallel for {s.var} -> par_{loop.gid}, on this warp's 32 lanes here",
            f"par_{loop.gid}(w, lane, {', '.join(args)}, G, L)",
            "dl.warp_sync(G.exec.CMD, w)  # the lanes' stores, before what follows publishes them",
        ]
        self.add(lines, loop_reads(s, loop))

    def _word(self, s: ir.For, bound: ir.Expr) -> str:
        """A parallel or bulk loop's bound as the int64 word its lanes count in: a u64
        range's shifted by 2^63, which keeps its order (dl.u64_word; codegen/parallel.py)."""
        if s.start.ty == "u64":
            return f"dl.u64_word(uint64({self.r(bound)}))"
        return wrap("int64", self.r(bound))

    def _bulk(self, s: ir.For) -> None:
        """``bulk for``: post a job that idle warps anywhere run in chunks; wait for it."""
        label = self.new_state()
        self.internal_state(label, loop_text(self.fn, s))
        loop = self.register_parallel(s, bulk=True)
        job = self.shared.job_row()
        lines = [f"# bulk for {s.var} -> par_{loop.gid}, in chunks run by idle warps across the GPU"]
        lines += [f"lo = {self._word(s, s.start)}", f"hi = {self._word(s, s.stop)}"]
        lines += self.pack_args(loop, f"G.jobs.JOBARGS_I[{job}", f"G.jobs.JOBARGS_F[{job}")
        self.add(lines, loop_reads(s, loop))
        executors = "G.sched.CTL[dsync.CTL_EXECUTORS]"
        post = f"dsync.bulk_post(G.jobs, G.sched.CTL, {job}, inst, {loop.gid}, lo, hi, {executors})"
        itself = (
            "# every job slot is taken: this warp runs the whole range itself",
            "G.exec.PARGS_I[w, 0] = lo",
            "G.exec.PARGS_I[w, 1] = hi",
            f"G.exec.CMD[w, dl.CMD_JOB] = {job}",
            f"G.exec.CMD[w, dl.CMD_COMMAND] = {loop.gid}",
            f"G.jobs.JOB[{job}, dsync.JOB_DONE] = G.jobs.JOB[{job}, dsync.JOB_CHUNKS]",
        )
        self.suspend_if(f"not {post}", label, FORK, itself)
        self.add([f"FI[{self.sw}] = {label}"])
        self.resume_at(label)
        self.suspend_if(f"not dsync.bulk_done(G.jobs.JOB, {job})", label, PENDING)
        if s.reduce is not None and loop.result is not None:  # every chunk has combined into it
            kind, k = loop.result
            word = f"dl.ld(G.jobs.JOBARGS_{kind}, ({job}, {k}))"
            value = reduce.read_value(s.reduce, word)
            self.add([self.assign(s.reduce.into, value)], frozenset(), frozenset([s.reduce.into]))


def loop_reads(s: ir.For, loop: ParallelLoop) -> frozenset[str]:
    """The locals a poll reads to hand parallel or bulk loop ``s`` out: its bounds and the
    locals it captures (packed into its argument row). Its body's own locals are not read
    by the poll (the lanes' function has them, and they die with the loop, whose body writes
    no task local), so they are neither restored nor spilled around it (codegen/liveness.py)."""
    return expr_reads(s.start, s.stop) | frozenset(name for name, _ in loop.captured)
