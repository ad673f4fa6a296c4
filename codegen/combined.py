"""Combined atomics: a loop's updates of one target, accumulated per lane and per warp.

Inside a ``parallel for`` or ``bulk for``, an atomic update whose value is dropped
means the same as doing the updates one by one in some order (the spec's v1
"Reductions"), so the compiler may combine them before they reach memory. Each such
target gets a partial per lane, in a register, from the operator's identity
(planner/reduces.py); the body updates it where it had the atomic (under the same
``if``, where it was under one); after the loop the warp combines its 32 partials
with reduce.py's five shuffles, and lane 0 issues one atomic (one per chunk of a
``bulk for``). A warp whose value is still the identity issues none: an identity
changes nothing, and a loop that runs no iteration costs no atomic. So B3's
``resid.fetch_max`` per element becomes one ``atomicMax`` per warp.

What is combined, target by target (docs/language.md, decision 42):

- a statement ``s.fetch_add(v);`` (``fetch_sub``, ``fetch_min``, ``fetch_max``): a
  shared scalar ``s`` that the body uses in no other way (no ``load``, ``store``,
  ``cas``, no fetch whose value is used, no fetch of another kind of operator);
- a statement ``atomic_add(b[k], v);`` (``atomic_sub``, ``atomic_min``,
  ``atomic_max``) whose index ``k`` is made of literals, consts and the loop's
  captured locals only (so it is the same in every iteration), on a buffer ``b``
  that the body neither loads, stores nor updates with an atomic whose value is
  used or whose operator is of another kind (other updates of ``b`` of the same
  kind, at an index that varies, stay one per element: the operators commute).
  Where every update of ``b`` is at a literal index (consts are folded), the
  elements are told apart and each takes its own kind: ``atomic_add(st[0], 1);
  atomic_max(st[1], v);``;
- and only where no ``fn`` the body calls touches the target.

``fetch_add`` and ``fetch_sub`` are one kind (a sum: the partial subtracts),
``min`` and ``max`` are one kind each. Integers are exact (sums wrap as the type
does); float ``min``/``max`` are exact, a NaN being no candidate in the partial as
in the atomic itself (``dl.fmin``/``dl.fmax`` and ``cuda.atomic.min``/``max``);
float sums are added in another order, which the spec allows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gasync.codegen import reduce
from gasync.codegen.exprs import NP, ExprRenderer, buffer_ref, wrap
from gasync.planner import ir
from gasync.planner.effects import transitive_effects
from gasync.planner.model import Plan
from gasync.planner.walk import exprs_of, stmts_in, subexprs

KIND = {"add": "sum", "sub": "sum", "min": "min", "max": "max", "and": "and", "or": "or"}
RMW = {"sum": "add", "min": "min", "max": "max", "and": "and", "or": "or"}  # the one atomic a warp issues
INVARIANT = (ir.Lit, ir.Unary, ir.Binary, ir.Cast)  # with Vars of captured locals: the same every iteration

Update = ir.SharedOp | ir.BufAtomic


@dataclass(frozen=True)
class Partial:
    """One combined target: the lanes' register ``acc`` (an IR local), its operator and type,
    and the first update, whose target the warp's one atomic takes."""

    acc: str
    op: str  # sum, min, max, and, or
    ty: ir.Ty
    first: Update

    @property
    def label(self) -> str:
        """The target in the program's words: ``hits.fetch_add``, ``atomic_max(st[1])``."""
        e = self.first
        if isinstance(e, ir.SharedOp):
            return f"{e.name}.{e.op}"
        literal = all(isinstance(i, ir.Lit) for i in e.index)
        index = ", ".join(str(i.value) for i in e.index if isinstance(i, ir.Lit)) if literal else ".."
        return f"atomic_{e.op}({e.buf}[{index}])"

    def final(self) -> Update:
        """The warp's atomic: the first update's target, with the warp's value."""
        value = ir.Var(self.acc, self.ty)
        e = self.first
        if isinstance(e, ir.SharedOp):
            return ir.SharedOp(e.name, f"fetch_{RMW[self.op]}", (value,), e.ty, e.span)
        # in range: an update whose index is checked adds to the partial only where it is inside
        # (update_lines), so the partial is the identity, and the warp issues none, where it is not
        return ir.BufAtomic(RMW[self.op], e.buf, e.index, value, e.ty, e.span, proven=True)


@dataclass(frozen=True)
class Combined:
    """A loop body's combined updates: each update expression (an ``Eval``'s) -> its partial."""

    partials: tuple[Partial, ...] = ()
    of: dict[ir.Expr, Partial] = field(default_factory=dict)


def _kind(e: Update) -> str:
    return KIND[e.op.removeprefix("fetch_")] if isinstance(e, ir.SharedOp) else KIND[e.op]


def _invariant(index: tuple[ir.Expr, ...], captured: set[str]) -> bool:
    return all(
        isinstance(x, INVARIANT) or isinstance(x, ir.Var) and x.name in captured for e in index for x in subexprs(e)
    )


def find(plan: Plan, body: tuple[ir.Stmt, ...], captured: set[str]) -> Combined:
    """The updates of ``body`` that may be combined (the module's rules); ``captured`` names
    the loop's captured locals, the only locals an invariant index may read."""
    tops, other, callees = _uses(body)
    other |= _touched_by(plan, callees)
    # elements at literal indices of a buffer updated only there are told apart: each may
    # take its own operator; anywhere else two indices may meet, so one operator per buffer
    literal = {_target(t): True for t in tops}
    for top in tops:
        literal[_target(top)] &= isinstance(top, ir.BufAtomic) and all(isinstance(i, ir.Lit) for i in top.index)
    kinds: dict[tuple[object, ...], set[str]] = {}
    for top in tops:
        kinds.setdefault(_kinds_key(top, literal[_target(top)]), set()).add(_kind(top))
    partials: dict[tuple[object, ...], Partial] = {}
    of: dict[ir.Expr, Partial] = {}
    for top in tops:
        target = _target(top)
        if target in other or len(kinds[_kinds_key(top, literal[target])]) > 1:
            continue
        if isinstance(top, ir.BufAtomic) and not _invariant(top.index, captured):
            continue
        key = (*target, top.index) if isinstance(top, ir.BufAtomic) else target
        if key not in partials:
            partials[key] = Partial(f"$tatom_{len(partials)}", _kind(top), top.ty, top)
        of[top] = partials[key]
    return Combined(tuple(partials.values()), of)


def _uses(body: tuple[ir.Stmt, ...]) -> tuple[list[Update], set[tuple[str, str]], set[str]]:
    """The updates that are statements (in source order), the targets that the body uses in
    any other way (('shared' or 'buffer', name)), and the fns it calls."""
    tops: list[Update] = []
    other: set[tuple[str, str]] = set()
    callees: set[str] = set()
    for s in stmts_in(body):
        exprs = list(exprs_of(s))
        if isinstance(s, ir.Eval) and isinstance(s.expr, ir.SharedOp | ir.BufAtomic):
            top = s.expr
            if isinstance(top, ir.SharedOp) and top.op.startswith("fetch_"):
                tops.append(top)
                exprs = list(top.args)
            elif isinstance(top, ir.BufAtomic):
                tops.append(top)
                exprs = [*top.index, top.value]
        if isinstance(s, ir.Store):
            other.add(("buffer", s.buf))
        for e in exprs:
            for x in subexprs(e):
                if isinstance(x, ir.SharedOp):
                    other.add(("shared", x.name))
                elif isinstance(x, ir.BufAtomic | ir.Load):
                    other.add(("buffer", x.buf))
                elif isinstance(x, ir.Call) and x.kind == "fn":
                    callees.add(x.name)
    return tops, other, callees


def _target(e: Update) -> tuple[str, str]:
    return ("shared", e.name) if isinstance(e, ir.SharedOp) else ("buffer", e.buf)


def _kinds_key(e: Update, literal: bool) -> tuple[object, ...]:
    """What must take one kind of operator: ``e``'s element where its buffer's are told apart."""
    return (*_target(e), e.index) if literal and isinstance(e, ir.BufAtomic) else _target(e)


def _touched_by(plan: Plan, callees: set[str]) -> set[tuple[str, str]]:
    """The shared scalars and buffers that the ``fn``s called (and theirs) use at all."""
    if not callees:
        return set()
    effects = transitive_effects(plan.functions, {})
    out: set[tuple[str, str]] = set()
    for name in sorted(callees):
        eff = effects[name]
        out |= {("shared", n) for n in eff.shared_reads | eff.shared_writes}
        out |= {("buffer", n) for n in eff.reads | eff.updates | set(eff.writes)}
    return out


def value_of(e: Update) -> ir.Expr:
    """The value an update combines into its target."""
    return e.args[0] if isinstance(e, ir.SharedOp) else e.value


def init_lines(combined: Combined, r: ExprRenderer, ind: str) -> list[str]:
    """Each partial from its operator's identity, before the lanes' loop."""
    if not combined.partials:
        return []
    out = [f"{ind}# combined atomics (codegen/combined.py): a partial per lane, one atomic per warp after the loop"]
    for p in combined.partials:
        out.append(f"{ind}{r(ir.Var(p.acc, p.ty))} = {reduce.identity_lane(p.op, p.ty)}  # {p.label}")
    return out


def update_lines(p: Partial, e: Update, r: ExprRenderer, ind: str) -> list[str]:
    """The body's update of ``p`` where it had the atomic ``e``. Where ``e``'s index is checked,
    the check stays here, where the atomic was: an update that runs with its index outside
    stops the run as the atomic would, even one that changes nothing (``atomic_add(h[b], 0)``),
    and adds nothing to the partial."""
    acc = r(ir.Var(p.acc, p.ty))
    value = wrap(NP[str(p.ty)], r(value_of(e)))
    if e.op in ("sub", "fetch_sub"):
        line = f"{acc} = {wrap(NP[str(p.ty)], f'{acc} - {value}')}  # {p.label}: this lane's part"
    else:
        line = f"{acc} = {reduce.combine(p.op, p.ty, acc, value)}  # {p.label}: this lane's part"
    checks = r.checked(e) if isinstance(e, ir.BufAtomic) else None
    if checks is None:
        return [ind + line]
    inside = f"db.inside({buffer_ref(e.buf)}, {r.index_tuple(e.index)}, {checks.where(e)})"
    return [f"{ind}if {inside}:", f"{ind}    {line}"]


def flush_lines(combined: Combined, r: ExprRenderer, ind: str) -> list[str]:
    """After the loop: every lane shuffles, then lane 0 issues each target's one atomic."""
    out: list[str] = []
    for p in combined.partials:
        acc = r(ir.Var(p.acc, p.ty))
        out.append(f"{ind}# {p.label}, combined:")
        out += reduce.warp_lines(p.op, p.ty, ind, acc)
        identity = reduce.identity_lane(p.op, p.ty)
        out.append(f"{ind}if lane == 0 and {acc} != {identity}:  # the identity changes nothing")
        out.append(f"{ind}    {r(p.final())}")
    return out
