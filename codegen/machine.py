"""Functions as code: plain device functions and poll state machines.

A function that can never suspend (a ``fn``, or an ``async fn`` with no
suspending await) becomes a plain device function; awaiting it is a call.

A function that can suspend becomes ``poll_<name>(inst, w, fb_i, fb_f, G)``
over its frame (``FI[fb_i:]``, ``FF[fb_f:]``, laid out by the planner). It
restores its locals from the frame, then runs a dispatch loop over labelled
blocks starting at the saved state. Statements that contain no suspending
await are emitted as ordinary structured Python inside a block; a statement
that does is cut into blocks (the CFG of an if, a loop or a for). Each await
point's block is labelled with its site number, which is the state saved in
word 0 of the frame when the poll returns PENDING (after spilling every
local); -1 means done.

Every generated function takes ``G``, the device state in runtime/state.py's
named groups. A poll function binds its frame's arrays once (:data:`FRAME`);
everything else is read where it is used (``G.sched.CTL``, ``G.B_out``), and
the device helpers take the group they work on (``dl.wake(G.sched, ...)``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gasync.codegen.bounds import Checks, guarded_loops, stop_lines, value_first
from gasync.codegen.exprs import NP, ExprRenderer, buffer_ref, fn_call, literal, local, wrap
from gasync.codegen.jobs import JobWidths
from gasync.codegen.shapes import ChannelShapes
from gasync.planner import ir
from gasync.planner.model import FrameLayout, Function, Plan
from gasync.planner.walk import stmts_in

READY, PENDING, DONE_STATE = 1, 0, -1
WAIT_ARGS = "G.wait, N_INST, WMASK"  # the wait lists, for dsync.register
FRAME = "FI, FF = G.frames.FI, G.frames.FF  # this instance's frame words: FI[fb_i:], FF[fb_f:]"
ABORT = 3  # a poll returns this when the run's deadline passed inside one of its loops
FORK = 2  # a poll returns this to have its warp run a parallel loop with all lanes, then polls again
COMPOUND = {"+=": "+", "-=": "-", "*=": "*", "/=": "/", "%=": "%", "&=": "&", "|=": "|", "^=": "^", "<<=": "<<"}
COMPOUND[">>="] = ">>"


class UnsupportedError(Exception):
    """A construct this code generator does not handle yet (reported with its span)."""

    def __init__(self, what: str, span: object):
        super().__init__(what)
        self.what = what
        self.span = span


@dataclass
class ParallelLoop:
    """A ``parallel for`` body, emitted as its own device function."""

    gid: int
    fn: str
    loop: ir.For
    captured: tuple[tuple[str, ir.Ty], ...]  # (local, type), in argument-row order
    n_int: int = 0
    n_float: int = 0
    bulk: bool = False  # a bulk for: arguments in JOBARGS[job], chunks of it run by any warp
    result: tuple[str, int] | None = None  # a reducing loop's value: ('I' or 'F', its argument word)
    inst_word: int | None = None  # where a body with bounds checks finds its task instance (AI)


@dataclass
class Shared:
    """What every function emitter shares: the plan and what emitting found."""

    plan: Plan
    suspends: dict[str, bool]
    frames: dict[str, FrameLayout]
    parallel: list[ParallelLoop] = field(default_factory=list)
    blocks: list[tuple[ir.AsyncBlock, str]] = field(default_factory=list)  # (block, enclosing function)
    has_sleep: bool = False
    trace: bool = False  # record polls and wakes into TRACE
    trace_channels: tuple[tuple[int, ...], ...] = ()  # per task, the channels its traced polls sample
    # a channel's send or receive wakes one waiter, not all: see channel_wakes_one()
    wake_one_ok: bool = True
    jobs: JobWidths | None = None  # bulk job rows (codegen/jobs.py)
    shapes: ChannelShapes | None = None  # lone and bell channel ends (codegen/shapes.py)
    checks: Checks | None = None  # run-time bounds checks (codegen/bounds.py; None: off)
    dispatch_sizes: list[tuple[str, int]] = field(default_factory=list)  # (function, blocks) per dispatch loop
    # (task, state, what) for the states of a task's own word that are no await site: a
    # parallel or bulk for, a select waiting for its losing arms' bulk chunks
    internal_states: list[tuple[str, int, str]] = field(default_factory=list)

    @property
    def wait_in_place(self) -> bool:
        """Whether a channel await may wait in place (runtime/state.py, Waiting in place):
        in a program with channels, when untraced (a trace shows each suspension)."""
        return bool(self.plan.channels) and not self.trace

    def spin(self, side: str, c: str) -> str:
        """A call that waits in place until channel ``c``'s ``side`` ("RECV" or "SEND") is
        ready, while the executor has nothing else to run (codegen/services.py says what it
        returns)."""
        return f"await_in_place({0 if side == 'RECV' else 1}, CH_{c}, CAP_{c}, LONE_{side}_{c}, -1, w, G)"

    @property
    def job_width(self) -> int:
        return self.jobs.per_instance if self.jobs is not None else 1

    def jb_arg(self, jb: str) -> str:
        """``jb``, the first bulk job row, as an argument of a poll call ('' where every
        instance has one row and the row is the instance)."""
        return f"{jb}, " if self.job_width > 1 else ""

    def job_row(self, jb: str = "jb") -> str:
        """The bulk job row that starts at ``jb`` (the poll function's own by default)."""
        return "inst" if self.job_width == 1 else f"inst * {self.job_width} + {jb}"

    def wake(self, inst: str, waker: str) -> str:
        """A call that makes ``inst`` runnable (recording it when tracing)."""
        if self.trace:
            return f"dsync.wake_traced(G.sched, QMASK, G.TRACE, w, {waker}, {inst})"
        return f"dl.wake(G.sched, QMASK, {inst})"

    def wake_all(self, resource: str, waker: str = "inst") -> str:
        """A call that wakes every waiter of ``resource``."""
        return self._wake_waiters(resource, "N_INST", waker)

    def wake_one(self, resource: str, waker: str = "inst") -> str:
        """A call that wakes the oldest waiter of ``resource`` (every waiter where a
        waiter might not try ``resource`` again: see ``wake_one_ok``)."""
        return self._wake_waiters(resource, "1" if self.wake_one_ok else "N_INST", waker)

    def _wake_waiters(self, resource: str, most: str, waker: str) -> str:
        args = f"G.sched, QMASK, G.wait, N_INST, WMASK, {resource}, {most}"
        if self.trace:
            return f"dsync.wake_waiters_traced({args}, G.TRACE, w, {waker})"
        return f"dsync.wake_waiters({args})"

    def chan_register(self, side: str, c: str, flag: str) -> list[str]:
        """``inst`` joins the line of channel ``c``'s senders or receivers; ``flag`` (a
        frame word of the future, 0 when it starts) remembers that it did."""
        marked = [f"{flag} = 1"] if self.wake_one_ok else []
        return [*marked, f"dsync.register({WAIT_ARGS}, RES_{side}_{c}, inst, G.sched.CTL)"]

    def has_tickets(self, c: str) -> bool:
        """Whether channel ``c``'s receives take tickets (codegen/shapes.py): none waits in line."""
        return self.shapes is not None and c in self.shapes.tickets

    def defers(self, c: str) -> bool:
        """Whether channel ``c``'s sender defers its looks for waiting ticket holders."""
        return self.shapes is not None and self.shapes.defers(c)

    def is_bell(self, side: str, c: str) -> bool:
        """Whether channel ``c``'s ``side`` end is a bell end (codegen/shapes.py): it waits on
        a bit in the slot word and never joins a wait list."""
        return self.shapes is not None and self.shapes.bell(side, c) is not None

    def chan_done(self, side: str, c: str, flag: str) -> list[str]:
        """After ``inst``'s send or receive on channel ``c`` completed (or lost a select):
        if it had joined the line, it leaves it, and a wake spent on it and not used
        passes on to the next waiter of that side. One that never joined the line
        (the usual case for a producer that keeps ahead) costs nothing here."""
        if not self.wake_one_ok or self.is_bell(side, c) or (side == "RECV" and self.has_tickets(c)):
            return []
        res = f"RES_{side}_{c}"
        return [
            f"if {flag} != 0 and dsync.deregister(G.wait.WREG, N_INST, {res}, inst) != dsync.REG_WAITING"
            f" and dsync.chan_can_{side.lower()}(G.chan, CH_{c}, CAP_{c}):",
            f"    {self.wake_one(res)}",
        ]


def suspends_here(x: ir.Stmt) -> bool:
    """Whether statement ``x`` itself (not counting its bodies) can leave the poll."""
    return (
        isinstance(x, ir.AwaitS)
        and x.suspends
        or isinstance(x, ir.Select | ir.ForAwait)
        or isinstance(x, ir.For)
        and x.kind != "seq"  # the warp leaves the poll to run it
    )


def contains_suspend(s: ir.Stmt) -> bool:
    return any(suspends_here(x) for x in stmts_in((s,)))


def source_line(plan: Plan, span: object) -> str:
    line = getattr(span, "line", 0)
    lines = plan.source.splitlines()
    if 1 <= line <= len(lines):
        return f"# {plan.path}:{line}: {lines[line - 1].strip()}"
    return ""


class Emitter:
    """Structured emission of await-free statements (shared by both kinds of function)."""

    def __init__(self, shared: Shared, fn: Function):
        self.shared = shared
        self.fn = fn
        self.types = dict(fn.locals)
        self.r = ExprRenderer(checks=shared.checks)
        self.loops: list[tuple[str, int, int]] = []  # ('native'|'cfg', break label, continue label)
        self._last_line = -1

    # -- helpers --
    def comment(self, out: list[str], ind: str, span: object) -> None:
        line = getattr(span, "line", 0)
        if line and line != self._last_line:
            self._last_line = line
            text = source_line(self.shared.plan, span)
            if text:
                out.append(ind + text)

    def assign(self, var: str, value: str) -> str:
        ty = self.types[var]
        return f"{local(var)} = {wrap(NP[str(ty)], value)}"

    def return_lines(self, value: ir.Expr | None, ind: str) -> list[str]:
        if value is None:
            return [ind + "return"]
        return [ind + f"return {wrap(NP[str(self.fn.ret)], self.r(value))}"]

    # -- statements --
    def structured(self, stmts: tuple[ir.Stmt, ...], out: list[str], ind: str) -> None:
        for s in stmts:
            self.comment(out, ind, s.span)
            self.stmt(s, out, ind)

    def stmt(self, s: ir.Stmt, out: list[str], ind: str) -> None:
        if isinstance(s, ir.Let):
            value = s.value
            if s.op != "=":
                value = ir.Binary(COMPOUND[s.op], ir.Var(s.var, self.types[s.var]), s.value, self.types[s.var])
            out.append(ind + self.assign(s.var, self.r(value)))
        elif isinstance(s, ir.Store):
            self._store(s, out, ind)
        elif isinstance(s, ir.Eval):
            out.append(ind + self.r(s.expr))
        elif isinstance(s, ir.If):
            out.append(ind + f"if {self.r(s.cond)}:")
            self._body(s.then, out, ind + "    ")
            if s.orelse:
                out.append(ind + "else:")
                self._body(s.orelse, out, ind + "    ")
        elif isinstance(s, ir.While):
            out.append(ind + f"while {self.r(s.cond)}:")
            out.extend(self.guard(ind + "    "))
            self._native_loop(s.body, out, ind + "    ")
        elif isinstance(s, ir.Loop):
            out.append(ind + "while True:")
            out.extend(self.guard(ind + "    "))
            self._native_loop(s.body, out, ind + "    ")
        elif isinstance(s, ir.For) and s.kind == "seq":
            out.append(ind + self.assign(s.stop_var, self.r(s.stop)))
            out.append(ind + f"for k_{s.loop_id} in range(int64({self.r(s.start)}), int64({local(s.stop_var)})):")
            out.append(ind + "    " + self.assign(s.var, f"k_{s.loop_id}"))
            self._native_loop(s.body, out, ind + "    ")
        elif isinstance(s, ir.Break | ir.Continue):
            self._jump(s, out, ind)
        elif isinstance(s, ir.Return):
            out.extend(self.return_lines(s.value, ind))
        elif isinstance(s, ir.AwaitS):
            self._inline_await(s, out, ind)
        else:
            raise UnsupportedError(
                f"{type(s).__name__.lower()} is not supported by this version's code generator", s.span
            )

    def _body(self, stmts: tuple[ir.Stmt, ...], out: list[str], ind: str) -> None:
        n = len(out)
        self.structured(stmts, out, ind)
        if len(out) == n or all(line.strip().startswith("#") for line in out[n:]):
            out.append(ind + "pass")

    guarded = False  # its loops look at the run's exit word (codegen/bounds.py: stop_lines)
    returns: str | None = None  # what a guarded plain fn returns (None: a loop body leaves its loops)

    def guard(self, ind: str) -> list[str]:
        """In a loop that may never end, look at the run's deadline every 4096 turns.

        A poll function gives up (it returns ABORT and its task is abandoned); a plain fn's
        loops and a loop body's are the user's to bound, except in a program with bounds
        checks, where they look at the run's exit word (codegen/bounds.py: stop_lines).
        """
        return stop_lines(ind, self.returns) if self.guarded else []

    def guard_setup(self, body: tuple[ir.Stmt, ...], returns: str | None) -> list[str]:
        """Guard the loops of this plain fn (which then returns ``returns``) or loop body
        (``returns`` None) where the program has bounds checks: the lines that start the
        count of turns (none where no loop needs one)."""
        if not guarded_loops(self.shared.checks, body):
            return []
        self.guarded, self.returns = True, returns
        return ["turns = 0"] if returns is not None else ["turns = 0", "over = False"]

    def _native_loop(self, body: tuple[ir.Stmt, ...], out: list[str], ind: str) -> None:
        self.loops.append(("native", 0, 0))
        try:
            self._body(body, out, ind)
        finally:
            self.loops.pop()

    def _jump(self, s: ir.Break | ir.Continue, out: list[str], ind: str) -> None:
        kind, brk, cont = self.loops[-1]
        if kind == "native":
            out.append(ind + ("break" if isinstance(s, ir.Break) else "continue"))
        else:
            out.append(ind + f"lbl = {brk if isinstance(s, ir.Break) else cont}")
            out.append(ind + "continue")

    def _store(self, s: ir.Store, out: list[str], ind: str) -> None:
        elem = self.shared.plan.buffer(s.buf).elem
        ty = NP[elem]
        checks = self.shared.checks if self.shared.checks is not None and self.shared.checks.wanted(s) else None
        if s.op == "=" and checks is None:
            out.append(ind + f"{buffer_ref(s.buf)}[{self.r.index(s.index)}] = {wrap(ty, self.r(s.value))}")
            return
        first = s.op == "=" and checks is not None and value_first(checks, s)
        if first:
            out.append(ind + f"val = {wrap(ty, self.r(s.value))}")
        out.append(ind + f"ix = {self.r.index_tuple(s.index)}")
        if checks is not None:  # skipped where the index is outside (the run stops)
            out.append(ind + f"if db.inside({buffer_ref(s.buf)}, ix, {checks.where(s)}):")
            ind += "    "
        if s.op != "=":
            value = self.r.binop(COMPOUND[s.op], elem, elem, f"{buffer_ref(s.buf)}[ix]", self.r(s.value))
        else:
            value = "val" if first else wrap(ty, self.r(s.value))
        out.append(ind + f"{buffer_ref(s.buf)}[ix] = {value}")

    def _inline_await(self, s: ir.AwaitS, out: list[str], ind: str) -> None:
        """An await of a future that never suspends: evaluate it in place."""
        fut = s.future
        if isinstance(fut, ir.AsyncCall):
            call = fn_call(fut.fn, [self.r(a) for a in fut.args], self.shared.checks)
            if s.targets and s.targets[0] is not None:
                out.append(ind + self.assign(s.targets[0], call))
            else:
                out.append(ind + call)
            return
        if isinstance(fut, ir.Join):
            # every child's future is made (its arguments evaluated) before any child runs, as
            # when the join suspends: a child that assigns a local must not change another's
            subs = self._args_first(fut, f"{s.site}", out, ind)
            for target, sub in zip(s.targets or (None,) * len(fut.futures), subs, strict=True):
                one = ir.AwaitS((target,) if target else (), sub, s.site, False, s.span)
                self._inline_await(one, out, ind)
            return
        if isinstance(fut, ir.AsyncBlock):  # never suspends and has no `return`: its body, in place
            self.structured(fut.body, out, ind)
            if s.targets and s.targets[0] is not None and fut.result is not None:
                out.append(ind + f"{local(s.targets[0])} = {local(fut.result)}")
            return
        raise UnsupportedError("this await is not supported by this version's code generator", s.span)

    def _args_first(self, fut: ir.Join, tag: str, out: list[str], ind: str) -> tuple[ir.Future, ...]:
        """The join's children with each call's arguments evaluated now, into temporaries."""
        subs: list[ir.Future] = []
        for k, sub in enumerate(fut.futures):
            if isinstance(sub, ir.Join):
                sub = ir.Join(self._args_first(sub, f"{tag}_{k}", out, ind), sub.ty, sub.span)
            elif isinstance(sub, ir.AsyncCall) and any(not isinstance(a, ir.Lit) for a in sub.args):
                args = []
                for j, a in enumerate(sub.args):
                    name = f"$tj{tag}_{k}_{j}"
                    self.types[name] = a.ty
                    out.append(ind + self.assign(name, self.r(a)))
                    args.append(ir.Var(name, a.ty))
                sub = ir.AsyncCall(sub.fn, tuple(args), sub.ty, sub.span)
            subs.append(sub)
        return tuple(subs)

    # -- parallel for --
    def register_parallel(self, s: ir.For, bulk: bool = False) -> ParallelLoop:
        loop = ParallelLoop(len(self.shared.parallel) + 1, self.fn.name, s, self._captured(s), bulk=bulk)
        self.shared.parallel.append(loop)
        return loop

    def pack_args(self, loop: ParallelLoop, ai: str, af: str) -> list[str]:
        """Captured locals into an argument row (``ai``/``af`` are 'ARRAY[row' prefixes)."""
        out = []
        ni, nf = 2, 0
        for name, ty in loop.captured:
            if ty in ir.FLOATS:
                out.append(f"{af}, {nf}] = float64({local(name)})")
                nf += 1
            else:
                out.append(f"{ai}, {ni}] = int64({local(name)})")
                ni += 1
        red = loop.loop.reduce
        if red is not None:  # the value's word, from the operator's identity (codegen/reduce.py)
            from gasync.codegen.reduce import identity_word

            if red.ty in ir.FLOATS:
                loop.result = ("F", nf)
                out.append(f"{af}, {nf}] = {identity_word(red)}  # reduce {red.op}: its identity")
                nf += 1
            else:
                loop.result = ("I", ni)
                out.append(f"{ai}, {ni}] = {identity_word(red)}  # reduce {red.op}: its identity")
                ni += 1
        checks = self.shared.checks
        if checks is not None and checks.needs_inst(loop.loop.body):  # a fault names its instance
            loop.inst_word = ni
            out.append(f"{ai}, {ni}] = inst  # the instance, for a bounds fault's report")
            ni += 1
        loop.n_int, loop.n_float = ni, nf
        return out

    def _captured(self, s: ir.For) -> tuple[tuple[str, ir.Ty], ...]:
        from gasync.planner.walk import exprs_of, subexprs

        defined = {s.var}
        used: list[str] = []
        for x in stmts_in(s.body):
            if isinstance(x, ir.Let):
                defined.add(x.var)
            if isinstance(x, ir.For):
                defined |= {x.var, x.stop_var}
            for e in exprs_of(x):
                for sub in subexprs(e):
                    if isinstance(sub, ir.Var) and sub.name not in used:
                        used.append(sub.name)
        return tuple((n, self.types[n]) for n in used if n not in defined)


__all__ = [
    "DONE_STATE",
    "FRAME",
    "PENDING",
    "READY",
    "Emitter",
    "ParallelLoop",
    "Shared",
    "UnsupportedError",
    "contains_suspend",
    "literal",
]
