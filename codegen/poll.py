"""Poll functions: a suspending function cut into block IR (see machine.py, blockir.py).

States 1..n are the function's await sites (the states a poll can resume
in); 0 is the start; states above n are internal (a parallel or bulk for, a
select draining its losers). Each state resumes at a block of its own. A
poll restores only the locals live at its state (codegen/liveness.py) and
its one suspend exit, after the dispatch loop, spills for each state only
the locals live there. A suspending async fn takes ``first`` and its
parameters: a lone await passes its arguments so on the callee's first poll
(no frame round trip); a join, a select or a task passes ``first = False``
and the callee reads its state and arguments from its frame. An async block
becomes a poll function of its own (``blk_<n>``) whose state word and child
frames live in its parent's child region (``cb_i``/``cb_f``) and whose locals
are the parent's, all spilled before and restored after each poll of the
block.
"""

from __future__ import annotations

from gasync.codegen import blockir as bir
from gasync.codegen import ends, groups, warppoll
from gasync.codegen.awaits import AwaitBlocks
from gasync.codegen.blocks import expr_reads, owned
from gasync.codegen.bounds import TURN_LOOK
from gasync.codegen.chanpolls import SEND_VALUE_KEPT
from gasync.codegen.ends import deferred_frees, early_looks, kept_names, kept_sends, late_rings, recv_values
from gasync.codegen.exprs import NP, literal, local, typed, typed_local, wrap
from gasync.codegen.liveness import live_at_states
from gasync.codegen.machine import (
    ABORT,
    DONE_STATE,
    FRAME,
    READY,
    Shared,
    contains_suspend,
    source_line,
    source_text,
    suspends_here,
)
from gasync.codegen.render import Lines
from gasync.codegen.sendloops import SendLoops
from gasync.planner import ir
from gasync.planner.model import FrameLayout, Function, TaskDef
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


class PollEmitter(SendLoops, AwaitBlocks):
    def __init__(self, shared: Shared, fn: Function, task: TaskDef | None, block: ir.AsyncBlock | None = None):
        body = block.body if block else fn.body
        first_state = max([0, *(s for s in stmts_in_sites(fn.body))])
        super().__init__(shared, fn, body, 0)
        self.n_states = first_state
        self._cut: dict[int, bool] = {}
        self.task = task
        self.block = block
        if task is not None and block is None:
            self.r.cursors = frozenset(shared.cursors(task.name))
            self.warp = task.group is not None and task.group in shared.warp
        self.frame = shared.frames[fn.name]
        self.sw = "cb_i" if block else "fb_i"  # where this machine's state word is
        if block is None:
            self.children = {site: (str(ci), str(cf)) for site, ci, cf in self.frame.children}
        else:
            self.children = {site: ("cbo_i + 1", "cbo_f") for site in _sites(block.body)}
        self.current_site = 0  # the await being emitted: where a FORK from a child resumes
        # an instance's variables are computed from its id at every poll: never restored, never spilled
        task_var = {task.var} if task is not None and task.var is not None else set()
        group = shared.plan.group_of(task) if task is not None and task.group is not None else None
        if group is not None and group.var is not None:
            task_var.add(group.var)
        slots = (*self.frame.int_slots, *self.frame.float_slots)
        # what its own code names; an async fn's parameters too, which only its blocks may read
        own = owned(body) | ({block.result} if block is not None and block.result is not None else set())
        own |= {p for p, _ in fn.params} if block is None else set()
        self.domain = frozenset(name for name, _ in slots if name in own) - task_var
        self.temps = []
        self.first_calls = {}
        self.state_notes: dict[int, str] = {}  # internal state -> what it waits for
        self.takes_args = task is None and block is None  # an async fn: first poll's arguments
        self.rings = late_rings(shared, body)
        self.looks = early_looks(shared, body)
        self.kept = kept_sends(shared, body, self.r.cursors, SEND_VALUE_KEPT, self.warp)
        local = tuple(c for c in self.kept if groups.is_local(c)) if self.warp and block is None else ()
        self.restored = ends.restored_sends(local, body, self.children) if local else {}
        self.values = recv_values(shared, body)
        self.frees, self.riders = deferred_frees(shared, body)

    def new_state(self) -> int:
        self.n_states += 1
        return self.n_states

    # -- emission --
    def emit(self) -> list[str]:
        self.start(0)
        self.cfg(self.body)
        if self.label is not None:
            self.finish_stmt(None)
        return self.assemble(self.machine())

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

    @property
    def gives_value(self) -> bool:
        """Whether this is an async fn with a value, which it returns beside its code, in
        registers, not through its frame (its caller reads it when the code is READY)."""
        return self.takes_args and self.frame.result is not None

    def returned(self, code: str, value: str | None = None) -> str:
        """What a ``return`` gives: the code, and an async fn's value (a zero when not READY)."""
        if not self.gives_value:
            return code
        return f"{code}, {value if value is not None else literal(0, self.fn.ret)}"

    def value_of(self, value: ir.Expr | None) -> str | None:
        return wrap(NP[str(self.fn.ret)], self.r(value)) if value is not None and self.gives_value else None

    def return_lines(self, value: ir.Expr | None, ind: str) -> list[str]:
        """A ``return`` inside structured statements: it finishes the poll from there."""
        done = f"return {self.returned(str(READY), self.value_of(value))}"
        return [ind + x for x in [*self.finish_lines(value), done]]

    def finish_stmt(self, value: ir.Expr | None) -> None:
        uses = expr_reads(value) if value is not None else frozenset()
        self.add(self.finish_lines(value), self.domain if self.block is not None else uses)
        self.end(bir.Finish(self.returned(str(READY), self.value_of(value)), uses))

    def finish_lines(self, value: ir.Expr | None) -> list[str]:
        """A block stores its value and spills its locals (its parent's); a task or a block
        marks its state word done (an async fn's caller knows from what it returns)."""
        out = self.ring_flush()  # before it returns: nothing after it would wake them
        if self.block is not None:
            if value is not None and self.block.result is not None:
                out.append(self.assign(self.block.result, self.r(value)))
            out += spill_lines(self.frame, self.types, self.domain)
        if not self.takes_args:
            out.append(f"FI[{self.sw}] = {DONE_STATE}")
        return out

    def stmt(self, s: ir.Stmt, out: list[str], ind: str) -> None:
        """A statement; in a poll on all 32 lanes, one that must happen once (a store, an atomic:
        warppoll.once) is lane 0's, then the lanes meet, each with its value (`out[g] += 1` adds
        once, and every lane's later load sees it)."""
        if not (self.warp and warppoll.once(s)):
            super().stmt(s, out, ind)
            return
        out.append(ind + "if lane == 0:  # once (codegen/warppoll.py)")
        super().stmt(s, out, ind + "    ")
        if isinstance(s, ir.Let):
            out.append(ind + f"{local(s.var)} = {warppoll.shuffled(local(s.var), NP[str(self.types[s.var])])}")
        else:
            out.append(ind + warppoll.MEET)

    def internal_state(self, label: int, what: str) -> None:
        """Name a state of a task's own word that is no await site (traces and ``--states`` show it)."""
        self.state_notes[label] = what
        if self.task is not None and self.block is None:
            self.shared.internal_states.append((self.task.name, label, f"s{label} {what}"))

    def guard(self, ind: str) -> list[str]:
        return [ind + "turns += 1", *self.gives_up(ind, TURN_LOOK)]

    def gives_up(self, ind: str, when: str) -> list[str]:
        """Where ``when`` holds, a look at the deadline (every lane's in a poll on all lanes:
        lane 0's look, shuffled, so that all give up or none: codegen/warppoll.py)."""
        overdue = warppoll.OVERDUE_WARP if self.warp else "dl.overdue(G.sched.CTL)"
        return [
            ind + f"if {when} and {overdue}:",
            ind + f"    return {self.returned(str(ABORT))}  # the run's deadline passed in this loop",
        ]

    chunks_loops = True  # (a poll's long range loops look between chunks: it returns ABORT from any)

    def forked(self) -> list[str]:
        """After polling a child: if it handed its warp a parallel loop, pass the FORK up
        (through the suspend exit, at the await being polled)."""
        self.exits.append(self.current_site)
        return [
            f"if code == {ABORT}:",
            f"    return {self.returned(str(ABORT))}",
            "if code == 2:",
            f"    st = {self.current_site}",
            "    rc = 2  # FORK",
            "    break",
        ]

    def call_args(self, fut: ir.AsyncCall) -> str:
        """The trailing arguments of a poll of async fn ``fut.fn``: a lone await's first-poll
        registers, or ``False`` and zeros (the callee reads its frame)."""
        if id(fut) in self.first_calls:
            return self.first_calls[id(fut)]
        params = self.shared.plan.function(fut.fn).params
        return ", ".join(["False", *(literal(0, ty) for _, ty in params)])

    def spill_all(self) -> list[str]:
        return spill_lines(self.frame, self.types, self.domain)

    def restore_all(self) -> list[str]:
        return restore_lines(self.frame, self.types, self.domain)

    def block_name(self, fut: ir.AsyncBlock) -> str:
        for k, (blk, _) in enumerate(self.shared.blocks):
            if blk is fut:
                return f"blk_{k + 1}"
        self.shared.blocks.append((fut, self.fn.name))
        return f"blk_{len(self.shared.blocks)}"

    def _cfg_For(self, s: ir.For) -> None:
        if s.kind == "bulk":
            self._bulk(s)
        elif s.kind == "parallel":
            self._fork(s)
        elif (counted := self._counted_sends(s)) is not None:
            self._counted_for(s, counted)
        elif (send := self._send_run(s)) is not None:
            self._send_run_for(s, send)
        else:
            super()._cfg_For(s)

    # -- the function --
    def head(self) -> list[str]:
        jb = self.shared.jb_arg("jb")
        if self.block is not None:
            name = self.block_name(self.block)
            lp = groups.locals_param(self.shared.plan, self.fn.name)
            out = ["@cuda.jit(device=True)", f"def {name}(inst, w, fb_i, fb_f, cb_i, cb_f, {jb}G{lp}):"]
            out.append(f"    # async block {source_text(self.shared.plan, self.block.span)}")
            return [*out, "    cbo_i = cb_i - fb_i", "    cbo_f = cb_f - fb_f"]
        params = "".join(f", p_{p}" for p, _ in self.fn.params) if self.takes_args else ""
        first = ", first" if self.takes_args else ""
        lp = groups.locals_param(self.shared.plan, self.fn.name)
        out = ["@cuda.jit(device=True)", f"def poll_{self.fn.name}(inst, w, fb_i, fb_f, {jb}G{lp}{first}{params}):"]
        return [*out, f"    {source_line(self.shared.plan, self.fn.span)}"]

    def assemble(self, m: bir.Machine) -> list[str]:
        em = Lines(1)
        em.out = self.head()
        em.line(FRAME)
        if self.warp:
            em.line(warppoll.LANE)
        never_suspends = self.block is None and not any(contains_suspend(x) for x in self.body)
        live = {s: frozenset() for s, _ in m.resume}
        if self.block is not None:  # its parent's locals, all of them, in and out
            em.lines(restore_lines(self.frame, self.types, self.domain))
        else:
            live = live_at_states(m, self.domain)
            em.lines(f"{local(n)} = {literal(0, ty)}" for n, ty in self.fn.locals)
        em.lines(f"{name} = {zero}" for name, zero in self.temps)
        if self.task is not None and self.task.group is not None:
            em.lines(x.strip() for x in groups.instance_vars(self.shared.plan, self.task, NP))
        elif self.task is not None and self.task.var is not None:
            ty = NP[self.task.var_ty]
            first, start = self.task.first_instance, self.task.start
            em.line(f"{local(self.task.var)} = {groups.offset(ty, start, f'(inst - {first})')}")
        em.lines(self.end_locals())
        for c in self.r.cursors:  # two int64 (registers, once inlined): runtime/devicecredit.py, credited_send
            em.line(f"cur_{c} = cuda.local.array(2, int64)  # channel {c}'s tail and credit, read at its first send")
            em.line(f"cur_{c}[0] = -1")
        for c in self.kept:  # (registers): codegen/ends.py, kept_sends
            sv, ok = kept_names(c)
            em.line(f"{sv} = int64(0)  # the value of its send started in this poll")
            if c not in self.restored:  # (a restored one's register always holds its value)
                em.line(f"{ok} = False")
        em.line("turns = 0")
        em.line("lbl = 0")
        # one that never suspends starts at 0 without reading its state word (a load
        # from DRAM per instance)
        if not never_suspends:
            self.entry(em, m, live)
        em.out += self.dispatch()
        if suspended_states(m):
            self.suspend_exit(em, m, live)
        return em.out

    def entry(self, em: Lines, m: bir.Machine, live: dict[int, frozenset[str]]) -> None:
        """Where a poll starts: its state, and the locals live there, from the frame (an async
        fn's first poll: from its arguments)."""
        if self.takes_args:
            with em.block("if first:  # the caller's first poll: the arguments come as arguments"):
                params = [p for p, _ in self.fn.params if p in live[0]]
                em.lines([f"{local(p)} = p_{p}" for p in params] or ["pass"])
            em.line("else:")
            em.level += 1
        em.line(f"st = FI[{self.sw}]")
        word = "if"
        for state, label in m.resume:
            body = restore_lines(self.frame, self.types, live[state]) + ends.kept_words(self.restored, state, True)
            body += [f"lbl = {label}"] if label != 0 else []
            if body:
                what = f"  # resume: {self.state_name(state)}" if state else ""
                with em.block(f"{word} st == {state}:{what}"):
                    em.lines(body)
                word = "elif"
        if not self.takes_args:  # a task's or block's word says done: a late wake polls it again
            with em.block(f"{word} st == {DONE_STATE}:  # done already: a wake that came after the end"):
                em.line(f"return {READY}")
        if self.takes_args:
            em.level -= 1

    def state_name(self, state: int) -> str:
        return self.state_notes.get(state, f"await {state}")

    def suspend_exit(self, em: Lines, m: bir.Machine, live: dict[int, frozenset[str]]) -> None:
        """The one way out of a suspending poll: save the state and the locals live there
        (a block: all of them), and return ``rc`` (PENDING, or FORK)."""
        em.line("# the suspend exit: the state, and the locals live there, into the frame")
        em.lines(self.ring_flush())  # (a late ring: nothing in this poll would wake them after it)
        em.line(f"FI[{self.sw}] = st")
        if self.block is not None:
            em.lines(spill_lines(self.frame, self.types, self.domain))
        else:
            word = "if"
            for state in sorted(suspended_states(m)):
                kept = ends.kept_words(self.restored, state, False)
                if lines := spill_lines(self.frame, self.types, live[state]) + kept:
                    with em.block(f"{word} st == {state}:"):
                        em.lines(lines)
                    word = "elif"
        em.line(f"return {self.returned('rc')}")


def suspended_states(m: bir.Machine) -> set[int]:
    """The states ``m`` suspends to (a Suspend, or a child's FORK from inside an op)."""
    out = {b.term.state for b in m.blocks if isinstance(b.term, bir.Suspend)}
    return out | {s for b in m.blocks for op in b.ops for s in op.exits}


def stmts_in_sites(body: tuple[ir.Stmt, ...]) -> list[int]:
    return [s.site for s in stmts_in(body) if isinstance(s, ir.AwaitS | ir.Select | ir.ForAwait)]


def emit_poll(shared: Shared, fn: Function, task: TaskDef | None) -> list[str]:
    return PollEmitter(shared, fn, task).emit()


def emit_block(shared: Shared, block: ir.AsyncBlock, fn_name: str) -> list[str]:
    fn = shared.plan.function(fn_name)
    task = next((t for t in shared.plan.tasks if t.name == fn_name), None)
    return PollEmitter(shared, fn, task, block).emit()


def restore_lines(frame: FrameLayout, types: dict[str, ir.Ty], names: frozenset[str]) -> list[str]:
    """The locals ``names`` from the frame, in the frame's order."""
    out = []
    for name, off in frame.int_slots:
        if name in names:
            word = f"FI[fb_i + {off}]"
            out.append(
                f"{local(name)} = {word} != 0"
                if types[name] == "bool"
                else f"{local(name)} = {wrap(NP[str(types[name])], typed(word, 'int64'))}"
            )
    out += [
        f"{local(name)} = {wrap(NP[str(types[name])], typed(f'FF[fb_f + {off}]', 'float64'))}"
        for name, off in frame.float_slots
        if name in names
    ]
    return out


def spill_lines(frame: FrameLayout, types: dict[str, ir.Ty], names: frozenset[str]) -> list[str]:
    """The locals ``names`` into the frame, in the frame's order."""
    out = [
        f"FI[fb_i + {off}] = {wrap('int64', typed_local(name, types))}"
        for name, off in frame.int_slots
        if name in names
    ]
    out += [
        f"FF[fb_f + {off}] = {wrap('float64', typed_local(name, types))}"
        for name, off in frame.float_slots
        if name in names
    ]
    return out
