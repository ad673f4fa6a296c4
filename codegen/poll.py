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
from gasync.codegen import groups
from gasync.codegen.awaits import AwaitBlocks
from gasync.codegen.blocks import expr_reads, owned
from gasync.codegen.chanpolls import SEND_VALUE_KEPT
from gasync.codegen.counted import Counted
from gasync.codegen.ends import early_looks, late_rings
from gasync.codegen.exprs import NP, literal, local, wrap
from gasync.codegen.liveness import live_at_states
from gasync.codegen.machine import (
    ABORT,
    DONE_STATE,
    FRAME,
    PENDING,
    READY,
    WAIT_ARGS,
    Shared,
    contains_suspend,
    source_line,
    source_text,
    suspends_here,
)
from gasync.codegen.render import Lines
from gasync.planner import ir
from gasync.planner.model import FrameLayout, Function, TaskDef
from gasync.planner.walk import children, stmts_in

# a for of sends on a crediting channel runs its sends below the credit in a row of their own
# (PollEmitter._send_run; False: each goes through the poll's general send, a stage)
SEND_RUNS = True
ROW_NOTE = "# a row of sends below the credit"


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


class PollEmitter(AwaitBlocks):
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
            out += spill_lines(self.frame, self.domain)
        if not self.takes_args:
            out.append(f"FI[{self.sw}] = {DONE_STATE}")
        return out

    def internal_state(self, label: int, what: str) -> None:
        """Name a state of a task's own word that is no await site (traces and ``--states`` show it)."""
        self.state_notes[label] = what
        if self.task is not None and self.block is None:
            self.shared.internal_states.append((self.task.name, label, f"s{label} {what}"))

    def guard(self, ind: str) -> list[str]:
        return [
            ind + "turns += 1",
            ind + "if turns % dl.STOP_EVERY == 0 and dl.overdue(G.sched.CTL):",
            ind + f"    return {self.returned(str(ABORT))}  # the run's deadline passed in this loop",
        ]

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
        return spill_lines(self.frame, self.domain)

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

    def _counted_sends(self, s: ir.For) -> Counted | None:
        """The counted channel whose sender's loop ``s`` is (codegen/counted.py), or None."""
        if self.task is None or self.block is not None or s.kind != "seq" or len(s.body) != 1:
            return None
        st = s.body[0]
        if not isinstance(st, ir.AwaitS) or not isinstance(st.future, ir.Send):
            return None
        k = self.shared.counted(st.future.chan)
        return k if k is not None and k.task == self.task.name else None

    def _counted_for(self, s: ir.For, k: Counted) -> None:
        """A counted channel's sender's loop: no sends (the receivers compute each value from
        their tickets); it completes once they have taken ``NEED`` tickets, as its last send
        would, waiting in the channel's line of senders at its send's await point until then."""
        st = s.body[0]
        assert isinstance(st, ir.AwaitS)
        c, flag = k.chan, f"FI[fb_i + {self.children[st.site][0]}]"
        room = f"dsync.counted_room(G.chan, CH_{c}, NEED_{c})"
        note = f"# its {k.count} sends: the receivers compute each value from their tickets (a counted channel)"
        tail = f"G.chan.CHHT[CH_{c}, dl.TAIL] = COUNT_{c}  # every value is there to take (a trace's occupancy)"
        self.add([note, tail, f"{flag} = 0"])
        self.resume_at(st.site)
        self.current_site = st.site
        register = f"dsync.register({WAIT_ARGS}, RES_SEND_{c}, inst, G.sched.CTL)"
        self.add([f"rdy = {room}", "if not rdy:", f"    {flag} = 1", f"    {register}", f"    rdy = {room}"])
        self.suspend_if("not rdy", st.site, PENDING)
        leave = f"    dsync.deregister(G.wait.WREG, N_INST, RES_SEND_{c}, inst)"
        self.add([f"if {flag} != 0:  # it leaves the line (no one else waits in it)", leave])

    def _send_run(self, s: ir.For) -> ir.Send | None:
        """The send of a ``for`` whose body is one send to a crediting, deferring channel whose
        cursor this poll holds (and whose receiver is no bell end): such a send below its
        credit only stores, and the loop may run a row of them on its own (SEND_RUNS)."""
        if not SEND_RUNS or s.kind != "seq" or len(s.body) != 1:
            return None
        st = s.body[0]
        if not isinstance(st, ir.AwaitS) or not isinstance(st.future, ir.Send) or st.targets:
            return None
        c = st.future.chan
        if c not in self.r.cursors or not self.shared.defers(c) or self.shared.is_bell("RECV", c):
            return None
        return st.future

    def _send_run_for(self, s: ir.For, send: ir.Send) -> None:
        """A ``for`` of sends (``_send_run``): at each turn, first the sends below the credit
        in a row (the value, its slot's stores, the tail: no state word, frame word or
        dispatch), then the send as any other for the one that reads credits, waits or finds
        the channel closed (runtime/devicecredit.py, put_credited)."""
        c = send.chan
        head, body, step, exit_ = self.new_label(), self.new_label(), self.new_label(), self.new_label()
        self.add([self.assign(s.stop_var, self.r(s.stop))], expr_reads(s.stop), frozenset([s.stop_var]))
        self.add([self.assign(s.var, self.r(s.start))], expr_reads(s.start), frozenset([s.var]))
        self.start(head)
        v, stop, ty = local(s.var), local(s.stop_var), NP[str(self.types[s.var])]
        value = f"int64({NP[self.shared.plan.channel(c).elem]}({self.r(send.value)}))"
        run = [
            f"while {v} < {stop} and cur_{c}[0] >= 0 and cur_{c}[0] < cur_{c}[1]:  {ROW_NOTE}",
            f"    dsync.put_credited(G.chan, CH_{c}, CAP_{c}, {value}, TICKETS_{c}, HOW_{c}, cur_{c})",
            f"    {v} = {ty}({v} + {ty}(1))",
        ]
        uses = frozenset([s.var, s.stop_var]) | expr_reads(send.value)
        self.add(run, uses, frozenset([s.var]))
        self.branch(f"not {v} < {stop}", exit_, body, frozenset([s.var, s.stop_var]))
        self.start(body)
        self._loop_body(exit_, step, s.body)
        self._close(step)
        self.start(step)
        self.add([f"{v} = {ty}({v} + {ty}(1))"], frozenset([s.var]), frozenset([s.var]))
        self.goto(head)
        self.start(exit_)

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
            if SEND_VALUE_KEPT:
                em.line(f"sv_{c} = int64(0)  # the value of its send started in this poll")
                em.line(f"svok_{c} = False")
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
            body = restore_lines(self.frame, self.types, live[state])
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
            em.lines(spill_lines(self.frame, self.domain))
        else:
            word = "if"
            for state in sorted(suspended_states(m)):
                if live[state]:
                    with em.block(f"{word} st == {state}:"):
                        em.lines(spill_lines(self.frame, live[state]))
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
        if name not in names:
            continue
        ty = types[name]
        if ty == "bool":
            out.append(f"{local(name)} = FI[fb_i + {off}] != 0")
        else:
            out.append(f"{local(name)} = {NP[str(ty)]}(FI[fb_i + {off}])")
    out += [
        f"{local(name)} = {NP[str(types[name])]}(FF[fb_f + {off}])" for name, off in frame.float_slots if name in names
    ]
    return out


def spill_lines(frame: FrameLayout, names: frozenset[str]) -> list[str]:
    """The locals ``names`` into the frame, in the frame's order."""
    out = [f"FI[fb_i + {off}] = int64({local(name)})" for name, off in frame.int_slots if name in names]
    out += [f"FF[fb_f + {off}] = float64({local(name)})" for name, off in frame.float_slots if name in names]
    return out
