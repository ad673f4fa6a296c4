"""Functions as code: plain device functions and poll state machines.

A function that can never suspend (a ``fn``, or an ``async fn`` with no
suspending await) becomes a plain device function; awaiting it is a call.

A function that can suspend becomes ``poll_<name>(inst, w, fb_i, fb_f, G)``
(an async fn also takes ``first`` and its parameters) over its frame
(``FI[fb_i:]``, ``FF[fb_f:]``, laid out by the planner). Statements that
contain no suspending await are emitted as ordinary structured Python
(:class:`Emitter`, here); a statement that does is cut into block IR
(codegen/blocks.py, awaits.py, blockir.py), whose blocks a dispatch loop runs
(render.py). A poll restores the locals live at its saved state (the await
site's number, in word 0 of the frame; -1 means done), and its one suspend
exit spills those live there (poll.py, liveness.py).

Every generated function takes ``G``, the device state in runtime/state.py's
named groups. A poll function binds its frame's arrays once (:data:`FRAME`);
everything else is read where it is used (``G.sched.CTL``, ``G.B_out``), and
the device helpers take the group they work on (``dl.wake(G.sched, ...)``).
"""

from __future__ import annotations

from gasync.codegen.bounds import (
    ChunkNames,
    breaks,
    chunked_head,
    guarded_loops,
    long_range,
    overdue_lines,
    stop_lines,
    value_first,
)
from gasync.codegen.exprs import NP, ExprRenderer, buffer_ref, fn_call, literal, local, typed_local, wrap
from gasync.codegen.names import inert, source_line_text, source_lines
from gasync.codegen.shared import (  # noqa: F401  (re-exported: the emitters import them from here)
    ABORT,
    COMPOUND,
    DONE_STATE,
    FORK,
    FRAME,
    PENDING,
    READY,
    WAIT_ARGS,
    ParallelLoop,
    Shared,
    UnsupportedError,
)
from gasync.planner import ir
from gasync.planner.model import Function, Plan
from gasync.planner.walk import stmts_in


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


def source_text(plan: Plan, span: object) -> str:
    """``path:line: text`` of the source line at ``span`` ('' where there is none), inert
    (codegen/names.py): neither the path nor the line can end the comment it goes in."""
    line = getattr(span, "line", 0)
    if 1 <= line <= len(source_lines(plan.source)):
        return f"{inert(plan.path)}:{line}: {source_line_text(plan.source, line)}"
    return ""


def source_line(plan: Plan, span: object) -> str:
    """The source line at ``span`` as a comment ('' where there is none)."""
    text = source_text(plan, span)
    return f"# {text}" if text else ""


class Emitter:
    """Structured emission of await-free statements (shared by both kinds of function)."""

    def __init__(self, shared: Shared, fn: Function):
        self.shared = shared
        self.fn = fn
        self.types = dict(fn.locals)
        self.r = ExprRenderer(checks=shared.checks)
        self.loops: list[tuple[str, int, int]] = []  # ('native'|'cfg', break label, continue label)
        self._last_line = -1
        self.comments = 0  # source-line comments written so far

    # -- helpers --
    notes = True  # source-line comments (off for codegen/jam.py's later copies of an iteration)

    def comment(self, out: list[str], ind: str, span: object) -> None:
        line = getattr(span, "line", 0)
        if self.notes and line and line != self._last_line:
            self._last_line = line
            text = source_line(self.shared.plan, span)
            if text:
                out.append(ind + text)
                self.comments += 1

    def assign(self, var: str, value: str) -> str:
        ty = self.types[var]
        return f"{self.r.var(var)} = {wrap(NP[str(ty)], value)}"  # r.var: local, but for codegen/jam.py's copies

    def return_value(self, value: ir.Expr) -> str:
        return wrap(NP[str(self.fn.ret)], self.r(value))

    def return_lines(self, value: ir.Expr | None, ind: str) -> list[str]:
        if value is None:
            return [ind + "return"]
        return [ind + f"return {self.return_value(value)}"]

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
            if s.start.ty == "u64":  # counted from its start: bounds past 2^63 are no int64s
                base, k = f"b_{s.loop_id}", f"k_{s.loop_id}"
                out.append(ind + f"{base} = uint64({self.r(s.start)})")
                out.append(ind + f"for {k} in range(int64(0), dl.u64_span({base}, uint64({local(s.stop_var)}))):")
                out.append(ind + "    " + self.assign(s.var, f"{base} + uint64({k})"))
            elif long_range(s) and self.chunks_loops and not breaks(s.body):
                self._chunked_for(s, out, ind)
                return
            else:
                out.append(ind + f"for k_{s.loop_id} in range(int64({self.r(s.start)}), int64({local(s.stop_var)})):")
                out.append(ind + "    " + self.assign(s.var, f"k_{s.loop_id}"))
            out.extend(self.guard(ind + "    ") if long_range(s) else [])  # `for i in 0..n`: n may be 2^63
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

    def _chunked_for(self, s: ir.For, out: list[str], ind: str) -> None:
        n = ChunkNames.of(s.loop_id)  # in chunks of dl.STOP_EVERY turns (codegen/bounds.py, chunked_head)
        out += chunked_head(n, self.r(s.start), local(s.stop_var), self.gives_up(ind + "    ", n.later), ind)
        out.append(ind + "        " + self.assign(s.var, n.k))
        self._native_loop(s.body, out, ind + "        ")
        out.append(ind + f"    {n.c} = {n.e}")

    def _body(self, stmts: tuple[ir.Stmt, ...], out: list[str], ind: str) -> None:
        n, notes = len(out), self.comments
        self.structured(stmts, out, ind)
        if len(out) - n == self.comments - notes:  # only source comments (or nothing): a body needs a statement
            out.append(ind + "pass")

    guarded = False  # its loops look at the run's exit word (codegen/bounds.py: stop_lines)
    returns: str | None = None  # what a guarded plain fn returns (None: a loop body leaves its loops)

    def guard(self, ind: str) -> list[str]:
        """In a loop that may never end, look at the run's deadline every ``dl.STOP_EVERY`` turns.

        A poll function gives up (it returns ABORT and its task is abandoned); a plain fn's loops
        and a loop body's leave, and the run ends with the timeout, or with the fault that stopped
        it (codegen/bounds.py: stop_lines)."""
        return stop_lines(ind, self.returns) if self.guarded else []

    def gives_up(self, ind: str, when: str) -> list[str]:  # where ``when`` holds (codegen/bounds.py)
        return overdue_lines(ind, when, self.returns)

    @property
    def chunks_loops(self) -> bool:  # (codegen/bounds.py, chunked_head; a loop body's loops leave together)
        return self.guarded and self.returns is not None

    def guard_setup(self, body: tuple[ir.Stmt, ...], returns: str | None, always: bool = False) -> list[str]:
        """Guard the loops of this plain fn (which then returns ``returns``) or loop body
        (``returns`` None; ``always``: its lanes' loop is guarded too): the lines that start
        the count of turns (none where no loop needs one)."""
        if not always and not guarded_loops(self.shared.checks, body):
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
            index = self.r.index(s.index, self.r.inside(s))
            out.append(ind + f"{buffer_ref(s.buf)}[{index}] = {wrap(ty, self.r(s.value))}")
            return
        first = s.op == "=" and checks is not None and value_first(checks, s)
        if first:
            out.append(ind + f"val = {wrap(ty, self.r(s.value))}")
        out.append(ind + f"ix = {self.r.index_tuple(s.index, checks is None and self.r.inside(s))}")
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
            call = fn_call(fut.fn, [wrap(NP[str(a.ty)], self.r(a)) for a in fut.args], self.shared.checks)
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
        out, ni, nf = captured_stores(loop.captured, 2, ai, af)
        red = loop.loop.reduce
        if red is not None and not loop.bulk:
            # a parallel loop's lane 0 leaves the warp's value in the frame word of the local it
            # goes to, whose index the row carries: not in the row itself, which the warp's next
            # FORK overwrites (a join or select may fork another child before this one resumes)
            kind, off = self.frame_slot(red.into)
            loop.result = (kind, ni)
            base = "fb_i" if kind == "FI" else "fb_f"
            out.append(f"{ai}, {ni}] = {base} + {off}  # reduce {red.op}: where lane 0 leaves its value")
            ni += 1
        elif red is not None:  # the job's word, from the operator's identity (codegen/reduce.py)
            from gasync.codegen.reduce import identity_word, start_word

            if red.ty in ir.FLOATS:
                loop.result = ("F", nf)
                out.append(f"{af}, {nf}] = {start_word(red, 'lo', 'hi')}  # reduce {red.op}: its first value")
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

    def frame_slot(self, name: str) -> tuple[str, int]:
        """Local ``name``'s frame word: ('FI' or 'FF', its offset from fb_i or fb_f)."""
        for slots, kind in ((self.frame.int_slots, "FI"), (self.frame.float_slots, "FF")):
            for local_name, off in slots:
                if local_name == name:
                    return kind, off
        raise AssertionError(f"{name} has no frame word")

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


def _slots(captured: tuple[tuple[str, ir.Ty], ...], ni: int) -> tuple[list[tuple[str, str, int]], int, int]:
    """Each captured local's row and word in the argument rows: ('AF', k) for a float (from 0),
    ('AI', k) for the rest (from word ``ni``); and the next free int and float words."""
    out, nf = [], 0
    for name, ty in captured:
        if ty in ir.FLOATS:
            out.append((name, "AF", nf))
            nf += 1
        else:
            out.append((name, "AI", ni))
            ni += 1
    return out, ni, nf


def captured_stores(captured: tuple[tuple[str, ir.Ty], ...], ni: int, ai: str, af: str) -> tuple[list[str], int, int]:
    """Lines that store ``captured`` locals into argument rows (``ai``/``af`` are 'ARRAY[row'
    prefixes; integers from word ``ni``, floats from 0), and the next free words."""
    slots, ni, nf = _slots(captured, ni)
    types, word = dict(captured), {"AF": "float64", "AI": "int64"}  # (a local of its row's type goes as it is)
    out = [f"{af if row == 'AF' else ai}, {k}] = {wrap(word[row], typed_local(name, types))}" for name, row, k in slots]
    return out, ni, nf


def captured_loads(em: Emitter, captured: tuple[tuple[str, ir.Ty], ...], ni: int, ind: str) -> list[str]:
    """The other side of ``captured_stores``: each local from the rows ``AI``/``AF``."""
    return [f"{ind}{em.assign(name, f'{row}[{k}]')}" for name, row, k in _slots(captured, ni)[0]]


__all__ = [
    "DONE_STATE",
    "FRAME",
    "PENDING",
    "READY",
    "Emitter",
    "ParallelLoop",
    "Shared",
    "UnsupportedError",
    "captured_loads",
    "captured_stores",
    "contains_suspend",
    "literal",
]
