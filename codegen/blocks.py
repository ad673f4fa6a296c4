"""Labelled blocks: a function body cut into block IR (codegen/blockir.py), then rendered.

A poll function must be cut wherever it can suspend (poll.py); any function
must be cut where its statements nest deeper than Python allows (100
indentation levels, 20 nested loops), so ``DEEP`` and ``DEEP_LOOPS`` bound the
nesting emitted as structured Python and statements nested deeper become
blocks here. So is a statement holding a ``break`` or ``continue`` of a loop
that was cut, as a jump between blocks is a terminator, never a line inside
an op. :class:`BlockEmitter` builds the blocks (``add`` an op, end the block
with ``goto``, ``branch``, ``suspend`` or ``finish``); :func:`render.dispatch`
writes them as ``while True: if lbl == k: ...``.
"""

from __future__ import annotations

from gasync.codegen import blockir as bir
from gasync.codegen.bounds import long_range
from gasync.codegen.ends import ChannelEnds
from gasync.codegen.exprs import NP, counter_step, literal, local
from gasync.codegen.machine import Emitter, Shared, UnsupportedError, source_line
from gasync.codegen.render import Lines, dispatch
from gasync.planner import ir
from gasync.planner.model import Function
from gasync.planner.walk import children, exprs_of, future_bodies, stmts_in, subexprs

DEEP = 24  # statements nested deeper than this are cut into blocks (Python stops at 100 indents)
DEEP_LOOPS = 12  # and loops (Python allows 20 nested loops in a function, the dispatch loop among them)
LOOPS = ir.Loop | ir.While | ir.For | ir.ForAwait


def _read_by(x: ir.Stmt, names: set[str]) -> None:
    """Add the locals statement ``x`` itself reads: its expressions' and the values of the
    async blocks it awaits (a block's value is its parent's to read)."""
    for e in exprs_of(x):
        names.update(sub.name for sub in subexprs(e) if isinstance(sub, ir.Var))
    futures = [x.future] if isinstance(x, ir.AwaitS) else []
    futures += [arm.future for arm in x.arms] if isinstance(x, ir.Select) else []
    while futures:
        f = futures.pop()
        if isinstance(f, ir.Join):
            futures += f.futures
        elif isinstance(f, ir.AsyncBlock) and f.result is not None:
            names.add(f.result)


def reads(stmts: tuple[ir.Stmt, ...]) -> frozenset[str]:
    """The locals that ``stmts`` (and the bodies in them) may read."""
    names: set[str] = set()
    for x in stmts_in(stmts):
        _read_by(x, names)
        if isinstance(x, ir.Let) and x.op != "=":
            names.add(x.var)
    return frozenset(names)


def owned(stmts: tuple[ir.Stmt, ...]) -> frozenset[str]:
    """The locals ``stmts`` name themselves (read or write), not those only the bodies of the
    async blocks they await name: a block's own locals are its poll's alone. A poll restores
    and spills only these (a parent that also spilled a block's locals around its calls wrote
    back values it had never restored: a join of two blocks lost a loop's count that way)."""
    names: set[str] = set()
    for x in stmts_in(stmts, into_futures=False):
        _read_by(x, names)
        if isinstance(x, ir.Let | ir.ForAwait):
            names.add(x.var)
        elif isinstance(x, ir.For):
            names.update((x.var, x.stop_var, *((x.reduce.into,) if x.reduce is not None else ())))
        elif isinstance(x, ir.AwaitS):
            names.update(t for t in x.targets if t is not None)
            if not x.suspends:  # its blocks' bodies are this poll's own code, in place
                for body in future_bodies(x.future):
                    names |= owned(body)
        elif isinstance(x, ir.Select):
            names.update(arm.target for arm in x.arms if arm.target is not None)
    return frozenset(names)


def expr_reads(*es: ir.Expr) -> frozenset[str]:
    return frozenset(sub.name for e in es for sub in subexprs(e) if isinstance(sub, ir.Var))


def kills(s: ir.Stmt) -> frozenset[str]:
    """The locals ``s`` always writes, after it reads what it reads."""
    return frozenset([s.var]) if isinstance(s, ir.Let) else frozenset()


class BlockEmitter(ChannelEnds):
    """The block machinery shared by poll functions and deeply nested plain functions."""

    def __init__(self, shared: Shared, fn: Function, body: tuple[ir.Stmt, ...], first_free_label: int):
        super().__init__(shared, fn)
        self.body = body
        self.built: dict[int, bir.Block] = {}
        self.order: list[int] = []
        self.label: int | None = None  # the block being built (None: after a terminator)
        self.ops: list[bir.Op] = []
        self.n_labels = first_free_label
        self.resume: dict[int, int] = {}  # state -> the block a poll resumes it at
        self.exits: list[int] = []  # states the op being built may suspend to from inside
        self._depth: dict[int, tuple[int, int]] = {}
        self._jumps: dict[int, bool] = {}
        self.rings: tuple[tuple[str, str], ...] = ()  # a poll's (codegen/ends.py); a plain function has none
        self.looks: tuple[str, ...] = ()
        self.kept: tuple[str, ...] = ()
        self.restored: dict[str, tuple[int, str]] = {}  # (codegen/ends.py, restored_sends)
        self.values: tuple[str, ...] = ()
        self.frees: dict[int, str] = {}
        self.riders: dict[int, str] = {}

    # -- building blocks --
    def new_label(self) -> int:
        self.n_labels += 1
        return self.n_labels

    def start(self, label: int) -> None:
        """Build block ``label`` next (the block being built falls through into it)."""
        if self.label is not None:
            self.end(bir.Goto(label))
        self.label, self.ops = label, []
        self.order.append(label)

    def add(self, lines: list[str], uses: frozenset[str] = frozenset(), kills: frozenset[str] = frozenset()) -> None:
        if not lines:
            return
        if self.label is None:  # after a jump or a return: nothing reaches this (tidy drops it)
            self.start(self.new_label())
        exits, self.exits = tuple(self.exits), []
        self.ops.append(bir.Op(tuple(lines), uses, kills, exits))

    def end(self, term: bir.Terminator) -> None:
        if self.label is None:
            self.start(self.new_label())
        assert self.label is not None
        self.built[self.label] = bir.Block(self.label, tuple(self.ops), term)
        self.label, self.ops = None, []

    def goto(self, label: int) -> None:
        self.end(bir.Goto(label))

    def branch(self, cond: str, then: int, orelse: int, uses: frozenset[str] = frozenset()) -> None:
        self.end(bir.Branch(cond, then, orelse, uses))

    def goto_if(self, cond: str, label: int, uses: frozenset[str] = frozenset()) -> None:
        """Jump to ``label`` where ``cond`` holds; go on building otherwise."""
        rest = self.new_label()
        self.branch(cond, label, rest, uses)
        self.start(rest)

    def suspend(self, state: int, code: int) -> None:
        self.resume.setdefault(state, -1)
        self.end(bir.Suspend(state, code))

    def suspend_if(self, cond: str, state: int, code: int, lines: tuple[str, ...] = ()) -> None:
        """Where ``cond`` holds: run ``lines``, then suspend to ``state``; go on otherwise."""
        leave, rest = self.new_label(), self.new_label()
        self.branch(cond, leave, rest)
        self.start(leave)
        self.add(list(lines))
        self.suspend(state, code)
        self.start(rest)

    def resume_at(self, state: int) -> None:
        """Start the block that a poll resuming in ``state`` runs."""
        label = self.new_label()
        self.start(label)
        self.resume[state] = label

    def machine(self) -> bir.Machine:
        missing = [s for s, label in self.resume.items() if label < 0]
        if missing:
            raise bir.IRError(f"states {missing} are suspended to but never resumed")
        resume = dict(self.resume)
        if resume:
            resume[0] = 0
        return bir.tidy(self.built, self.order, resume)

    def dispatch(self, level: int = 1) -> list[str]:
        em = Lines(level)
        cases = dispatch(self.machine(), em)
        self.shared.dispatch_sizes.append((self.fn.name, cases))
        return em.out

    # -- which statements become blocks --
    def depth(self, s: ir.Stmt) -> tuple[int, int]:
        """How deep statements nest inside ``s``, and loops among them (``s`` counts)."""
        key = id(s)
        if key not in self._depth:
            inner = [self.depth(x) for body in children(s) for x in body]
            loop = isinstance(s, LOOPS)
            self._depth[key] = (
                1 + max((d for d, _ in inner), default=0),
                int(loop) + max((n for _, n in inner), default=0),
            )
        return self._depth[key]

    def jumps_out(self, s: ir.Stmt) -> bool:
        """Whether ``s`` holds a break or continue of a loop outside it."""
        key = id(s)
        if key not in self._jumps:
            inner = (self.jumps_out(x) for body in children(s, into_futures=False) for x in body)
            self._jumps[key] = isinstance(s, ir.Break | ir.Continue) or not isinstance(s, LOOPS) and any(inner)
        return self._jumps[key]

    def must_cut(self, s: ir.Stmt) -> bool:
        nest, loops = self.depth(s)
        in_cfg_loop = bool(self.loops) and self.loops[-1][0] == "cfg"
        return nest > DEEP or loops > DEEP_LOOPS or in_cfg_loop and self.jumps_out(s)

    def cfg(self, stmts: tuple[ir.Stmt, ...]) -> None:
        for s in stmts:
            note: list[str] = []
            self.comment(note, "", s.span)
            self.add(note)
            if isinstance(s, ir.Return):
                self.finish_stmt(s.value)
            elif isinstance(s, ir.Break | ir.Continue) and self.loops and self.loops[-1][0] == "cfg":
                _, brk, cont = self.loops[-1]
                self.goto(brk if isinstance(s, ir.Break) else cont)
            elif not self.must_cut(s):
                lines: list[str] = []
                if isinstance(s, LOOPS):  # a loop that awaits nothing may run long: wake first
                    lines += self.ring_flush()
                self.stmt(s, lines, "")
                self.add(lines, reads((s,)), kills(s))
            else:
                method = getattr(self, "_cfg_" + type(s).__name__, None)
                if method is None:
                    raise UnsupportedError(f"'{type(s).__name__.lower()}' with awaits cannot be compiled", s.span)
                method(s)

    def finish_stmt(self, value: ir.Expr | None) -> None:
        """A ``return`` that ends a block (a plain function's: return the value)."""
        if value is None:
            self.end(bir.Finish(""))
        else:
            self.end(bir.Finish(self.return_value(value), expr_reads(value)))

    # -- control flow, as blocks --
    def _cfg_If(self, s: ir.If) -> None:
        then_l, else_l, join_l = self.new_label(), self.new_label(), self.new_label()
        self.branch(self.r(s.cond), then_l, else_l, expr_reads(s.cond))
        self.start(then_l)
        self.cfg(s.then)
        self._close(join_l)
        self.start(else_l)
        self.cfg(s.orelse)
        self._close(join_l)
        self.start(join_l)

    def _close(self, label: int) -> None:
        if self.label is not None:
            self.goto(label)

    def _loop_body(self, exit_: int, cont: int, body: tuple[ir.Stmt, ...]) -> None:
        self.loops.append(("cfg", exit_, cont))
        try:
            self.cfg(body)
        finally:
            self.loops.pop()

    def _cfg_Loop(self, s: ir.Loop) -> None:
        head, exit_ = self.new_label(), self.new_label()
        self.start(head)
        self.add(self.guard(""))
        self.add(self.turn_flush(s.body))  # (a loop that never waits must not hold a wake back)
        self._loop_body(exit_, head, s.body)
        self._close(head)
        self.start(exit_)

    def _cfg_While(self, s: ir.While) -> None:
        head, body, exit_ = self.new_label(), self.new_label(), self.new_label()
        self.start(head)
        self.add(self.guard(""))
        self.add(self.turn_flush(s.body))
        self.branch(f"not {self.r(s.cond)}", exit_, body, expr_reads(s.cond))
        self.start(body)
        self._loop_body(exit_, head, s.body)
        self._close(head)
        self.start(exit_)

    def _cfg_For(self, s: ir.For) -> None:
        if s.kind != "seq":
            raise UnsupportedError(f"a {s.kind} for cannot be compiled here", s.span)
        head, body, step, exit_ = self.new_label(), self.new_label(), self.new_label(), self.new_label()
        self.add([self.assign(s.stop_var, self.r(s.stop))], expr_reads(s.stop), frozenset([s.stop_var]))
        self.add([self.assign(s.var, self.r(s.start))], expr_reads(s.start), frozenset([s.var]))
        self.start(head)
        if long_range(s):  # `for i in 0..n`: n may be 2^63
            self.add(self.guard(""))
        self.branch(f"not {local(s.var)} < {local(s.stop_var)}", exit_, body, frozenset([s.var, s.stop_var]))
        self.start(body)
        self._loop_body(exit_, step, s.body)
        self._close(step)
        self.start(step)
        self.add(self.turn_flush(s.body))
        ty = NP[str(self.types[s.var])]
        self.add([counter_step(local(s.var), ty)], frozenset([s.var]), frozenset([s.var]))
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
        self.end(bir.Finish("" if self.fn.ret == "unit" else literal(0, self.fn.ret)))
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
