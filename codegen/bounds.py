"""Run-time bounds checks: a numbered check site for each access the planner left unproven.

The planner marks every buffer access whose indices it proves in range
(planner/bounds.py); with checks on (``generate(plan, checked=True)``, the
default) each other access becomes a *check site*, numbered from 0 in the order
the renderers meet it, and is done through runtime/devicebounds.py (``db``):
``db.load`` for a read, ``db.inside`` around a store, ``db.rmw`` (``rmw2`` for
a 2-D buffer) for an atomic.
The module's ``BOUNDS_SITES`` table says, per site, what the host needs to word
a fault: the buffer, its shape, and where each index is in the source.

A fault names its task instance, so code that has checks needs ``inst``: poll
functions have it, a parallel or bulk loop whose body has checks gets it in its
argument row, and a plain function with checks (or calling one that has them)
takes it as a parameter after ``w``. A faulted run stops, and so does one past
its deadline, so a ``while`` or ``loop`` in a plain function or a loop body,
which no poll's deadline check reaches, looks at the run's exit word and the
deadline every ``dl.STOP_EVERY`` turns and gives up once either says so (checks
or none: such a loop may never end). With checks off, or with every access
proven, the module is the same text as one without checks at all.
"""

from __future__ import annotations

from typing import NamedTuple

from gasync.codegen.names import source_line_text
from gasync.dsl.ast import Span
from gasync.planner import ir
from gasync.planner.model import Function, Plan
from gasync.planner.walk import exprs_of, has_effect, stmts_in, subexprs

Access = ir.Load | ir.Store | ir.BufAtomic
CTL = "G.sched.CTL"


class Checks:
    """The check sites of one generated module, and who needs the running instance."""

    def __init__(self, plan: Plan, enabled: bool):
        self.plan = plan
        self.enabled = enabled
        self.sites: list[Access] = []  # site k is sites[k]
        self._site: dict[int, int] = {}  # id of an access -> its site
        self.inst_fns: set[str] = set()  # plain functions that take `inst`
        self.hoisted = False  # rendering a map's unchecked variant (codegen/hoist.py)
        self.any = enabled and any(fn.run_time_indices and unproven(fn.body) for fn in _bodies(plan))
        if self.any:
            for fn in plan.functions:  # callees come before their callers
                if (fn.run_time_indices and unproven(fn.body)) or calls(fn.body) & self.inst_fns:
                    self.inst_fns.add(fn.name)

    def wanted(self, e: Access) -> bool:
        """Whether access ``e`` is checked."""
        return self.enabled and not e.proven

    def needs_inst(self, body: tuple[ir.Stmt, ...]) -> bool:
        return self.any and (unproven(body) or bool(calls(body) & self.inst_fns))

    def may_fault(self, e: ir.Expr) -> bool:
        return self.enabled and _unproven_in(e)

    def where(self, e: Access, ctl: str = "") -> str:
        """``CTL, site, inst``: what a device helper records a fault of ``e`` with (the same
        site for every rendering of ``e``); ``ctl`` names the fault word where it is not G's."""
        key = id(e)
        if key not in self._site:
            self._site[key] = len(self.sites)
            self.sites.append(e)
        return f"{ctl or CTL}, {self._site[key]}, inst"

    def table(self) -> list[str]:
        """The module's BOUNDS_SITES (nothing where there are no checks)."""
        if not self.sites:
            return []
        shapes = {b.name: b.shape for b in (*self.plan.buffers, *(b for g in self.plan.groups for b in g.buffers))}
        rows = []
        for k, e in enumerate(self.sites):
            spans = tuple(_place(ix.span if ix.span.line > 0 else e.span) for ix in e.index)
            row = (e.buf, shapes[e.buf], spans, tuple(ix.ty == "u64" for ix in e.index))
            line = spans[0][0]
            rows.append(f"    {row!r},  # {k}: line {line}: {source_line_text(self.plan.source, line)}")
        return [
            "# Bounds checks (codegen/bounds.py): site k is row k, what the host words a fault there with:",
            "# (buffer, its shape, each index's (line, column, end line, end column), whether each is a u64)",
            "BOUNDS_SITES = (",
            *rows,
            ")",
        ]


def _place(span: Span) -> tuple[int, int, int, int]:
    return span.line, span.column, span.end_line, span.end_column


def value_first(checks: Checks, s: ir.Store) -> bool:
    """Whether a checked store must compute its value before its index, as an unchecked one
    does (Python evaluates the right side first): where the order could be seen, because
    the value has an effect or a check of its own, or the index has an effect."""
    return has_effect(s.value) or checks.may_fault(s.value) or any(has_effect(i) for i in s.index)


def guarded_loops(checks: Checks | None, body: tuple[ir.Stmt, ...]) -> bool:
    """Whether the ``while`` and ``loop`` loops of a plain fn or loop body look at the run's exit
    word (and the deadline): wherever there is one, as such a loop may never end (``--timeout``
    must stop the run on the GPU too, where nothing else could), and a fault may stop the
    task it waits for; so do its long range loops (``long_range``). (``checks``: kept for the
    callers; checked or not, the same.)"""
    return any(
        isinstance(x, ir.While | ir.Loop) or (isinstance(x, ir.For) and long_range(x))
        for x in stmts_in(body, into_futures=False)
    )


LONG = 1 << 32  # a range loop of at most this many iterations, known at compile time, takes no look


def long_range(s: ir.For) -> bool:
    """Whether range loop ``s`` looks at the run's deadline as a ``while`` does (decision 24):
    where its bounds are not known at compile time or are more than LONG apart, since a range
    may hold 2^64 iterations, which no run outlives."""
    start, stop = _linear(s.start), _linear(s.stop)
    if start is None or stop is None:
        return True
    span = {v: stop.get(v, 0) - start.get(v, 0) for v in {*start, *stop}}  # `t * W..(t + 1) * W`: W
    return any(c for v, c in span.items() if v) or span.get("", 0) > LONG


def _linear(e: ir.Expr) -> dict[str, int] | None:
    """Integer expression ``e`` as a sum of locals times constants and a constant (key ''), or
    None. Wrapping keeps a difference of such sums: a range it says is short is no longer."""
    if isinstance(e, ir.Lit) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return {"": e.value}
    if isinstance(e, ir.Var):
        return {e.name: 1}
    if isinstance(e, ir.Unary) and e.op == "-" and (x := _linear(e.operand)) is not None:
        return {v: -c for v, c in x.items()}
    if not isinstance(e, ir.Binary) or e.op not in ("+", "-", "*"):
        return None
    a, b = _linear(e.left), _linear(e.right)
    if a is None or b is None:
        return None
    if e.op != "*":
        sign = 1 if e.op == "+" else -1
        return {v: a.get(v, 0) + sign * b.get(v, 0) for v in {*a, *b}}
    if set(a) <= {""} or set(b) <= {""}:  # a constant times a sum
        k, x = (a.get("", 0), b) if set(a) <= {""} else (b.get("", 0), a)
        return {v: k * c for v, c in x.items()}
    return None


TURN_LOOK = "(turns & dl.STOP_MASK) == 0"  # every dl.STOP_EVERY turns (a count of turns is never negative)


def stop_lines(ind: str, returns: str | None) -> list[str]:
    """A guarded loop's look at the run's exit word (``dl.overdue``: the deadline too), every
    ``dl.STOP_EVERY`` turns: a plain fn returns ``returns``; a loop body cannot return (its lanes
    meet after the loop), so it leaves each of its loops, ``over`` telling the outer ones."""
    return [ind + "turns += 1", *overdue_lines(ind, TURN_LOOK, returns)]


def overdue_lines(ind: str, when: str, returns: str | None) -> list[str]:
    """Where ``when`` holds, the look at the run's exit word, and what a plain fn (``returns``)
    or a loop body (None) does once the run has stopped (``stop_lines``)."""
    test = [
        ind + f"if {when} and dl.overdue({CTL}):",
        ind + f"    dl.stop_overdue({CTL})  # (at the deadline: the run ends with the timeout)",
    ]
    if returns is not None:
        return [*test, ind + f"    return{returns}  # the run has stopped"]
    leave = [ind + "    over = True  # the run has stopped: leave every loop", ind + "if over:", ind + "    break"]
    return [*test, *leave]


# A long range loop of a task or a plain fn runs in chunks of dl.STOP_EVERY turns, its deadline
# looked at between them (bench/NOTES.md, twenty-fourth session: a test in every turn made a
# loop of one await of a plain fn 6x slower; run 53: back to 14 ns a turn).


def breaks(body: tuple[ir.Stmt, ...]) -> bool:
    """Whether ``body`` breaks out of its own loop (a chunked loop's ``break`` would leave only its chunk)."""
    return any(isinstance(x, ir.Break) for x in stmts_in(body, into_loops=False, into_futures=False))


class ChunkNames(NamedTuple):
    """The locals of a chunked long range loop: each chunk's first turn and end, the turn, the
    loop's first turn."""

    c: str
    e: str
    k: str
    first: str

    @classmethod
    def of(cls, loop_id: int) -> ChunkNames:
        return cls(f"c_{loop_id}", f"e_{loop_id}", f"k_{loop_id}", f"f_{loop_id}")

    @property
    def later(self) -> str:
        """True in every chunk but the first: where the loop looks at the deadline."""
        return f"{self.c} != {self.first}"


def chunked_head(n: ChunkNames, start: str, stop: str, look: list[str], ind: str) -> list[str]:
    """The head of a long range loop (``start``..``stop``, rendered) in chunks: ``n.c`` starts
    each chunk, ``n.e`` ends it (dl.chunk_end: no sum past the stop, whatever the bounds),
    ``look`` (one level in) looks at the deadline between chunks; the turns of a chunk are a
    plain ``range`` loop with no test in it, which the compiler unrolls. The caller adds the
    loop variable's assignment and the body (two levels in), then ``n.c = n.e``."""
    return [
        ind + f"{n.first} = int64({start})",
        ind + f"{n.c} = {n.first}",
        ind + f"while {n.c} < int64({stop}):  # chunks of dl.STOP_EVERY turns",
        *look,
        ind + f"    {n.e} = dl.chunk_end({n.c}, int64({stop}))",
        ind + f"    for {n.k} in range({n.c}, {n.e}):",
    ]


def unproven(body: tuple[ir.Stmt, ...]) -> bool:
    """Whether ``body`` (its nested bodies and async blocks too) has an access not proven in range."""
    for s in stmts_in(body):
        if isinstance(s, ir.Store) and not s.proven:
            return True
        if any(_unproven_in(e) for e in exprs_of(s)):
            return True
    return False


def _unproven_in(e: ir.Expr) -> bool:
    return any(isinstance(x, ir.Load | ir.BufAtomic) and not x.proven for x in subexprs(e))


def calls(body: tuple[ir.Stmt, ...]) -> set[str]:
    """The functions ``body`` calls: plain calls, and awaits of async fns."""
    out: set[str] = set()
    for s in stmts_in(body):
        for e in exprs_of(s):
            out |= {x.name for x in subexprs(e) if isinstance(x, ir.Call) and x.kind == "fn"}
        futures = (
            [s.future] if isinstance(s, ir.AwaitS) else [a.future for a in s.arms] if isinstance(s, ir.Select) else []
        )
        while futures:
            f = futures.pop()
            if isinstance(f, ir.AsyncCall):
                out.add(f.fn)
            elif isinstance(f, ir.Join):
                futures.extend(f.futures)
    return out


def _bodies(plan: Plan) -> list[Function]:
    return [*plan.functions, *(t.body for t in plan.tasks)]
