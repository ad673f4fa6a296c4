"""A parallel loop whose body is a map (``is_map``): its iterations' loads may all come before
their stores, so the loop is unrolled (UNROLL iterations a turn) and, where its buffers allow,
moved 16 bytes a load (codegen/vectors.py). One iteration is a device function of its own
(``it_<gid>``, and ``vit_<gid>`` for one element of a 16-byte step; ITERATION_HELPER), which the
unrolled and tail loops call: Numba types its body once, and NVVM inlines it back. The helper
takes its buffers' arrays, not G (every call passing G costs compiling:
scripts/typing_probe.py). codegen/parallel.py writes the loop around these.
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from contextlib import contextmanager

from gasync.codegen import combined, groups, reduce
from gasync.codegen.bounds import CTL
from gasync.codegen.exprs import NP, buffer_ref, local, wrap
from gasync.codegen.hoist import helper_name, loop_invariant
from gasync.codegen.machine import Emitter, ParallelLoop, Shared, source_line
from gasync.planner import ir

# iterations per lane per turn of an unrolled map loop: 8 loads in flight per lane, so that a
# stage of a few warps per SM (B4's compute tasks: 4) still streams; the kernel's registers
# do not grow with it (ptx_check --registers: B4 71, B5 64, B5a 48 at both 4 and 8; 16 took B5
# to 72, fewer warps per SM)
UNROLL = 8
PURE = (ir.Lit, ir.Var, ir.Load, ir.Unary, ir.Binary, ir.Cast)


def is_map(
    body: tuple[ir.Stmt, ...],
    captured: set[str],
    combined_updates: Container[ir.Expr] = (),
    var: str | None = None,
    reducing: bool = False,
) -> bool:
    """Whether a parallel loop's body is a map: straight-line lets, plain stores and combined
    atomic updates (of a register: ``combined_updates``) of pure expressions, with at least one
    store (none needed in a ``reducing`` loop's body, whose tail is a let), reading no buffer
    that it writes except *in place* (``in_place``, given the loop's variable ``var``). Then
    all of an iteration's loads may come before another iteration's stores, which an unrolled
    loop uses to keep several loads in flight per lane (the compiler cannot: buffers may
    alias)."""
    from gasync.planner.walk import exprs_of, subexprs

    read: set[str] = set()
    written: set[str] = set()
    for st in body:
        exprs = list(exprs_of(st))
        if isinstance(st, ir.Let):
            if st.var in captured:
                return False
        elif isinstance(st, ir.Store) and st.op == "=":
            written.add(st.buf)
        elif isinstance(st, ir.Eval) and st.expr in combined_updates:
            assert isinstance(st.expr, ir.SharedOp | ir.BufAtomic)
            exprs = [combined.value_of(st.expr)]  # its target is the same in every iteration
        else:
            return False
        for e in exprs:
            for sub in subexprs(e):
                if not isinstance(sub, PURE) and not _builtin(sub):
                    return False
                if isinstance(sub, ir.Load):
                    read.add(sub.buf)
    both = read & written
    if both and (var is None or not in_place(body, both, captured, var)):
        return False
    # a body of updates alone (no reduce) keeps one iteration per turn: its loads in flight
    # would take a register each, for the whole kernel
    return bool(written) or reducing


def _builtin(e: ir.Expr) -> bool:
    """A call of a builtin (``abs``, ``sqrt``, ``min``, ...): pure, like an operator."""
    return isinstance(e, ir.Call) and e.kind == "builtin"


def in_place(body: tuple[ir.Stmt, ...], bufs: set[str], captured: set[str], var: str) -> bool:
    """Whether each of ``bufs``, read and written by a map-like ``body``, is read and written
    at one index only, the same in every access (``x[i] = 0.5 * x[i]``), which takes each
    iteration to an element of its own (``injective`` in the loop's variable ``var``), with no
    read after the body's first store to it. Iterations are unordered (docs/language.md,
    decision 26), so an iteration reads only the element that it alone writes, and another
    iteration's store, before or after, cannot change what it reads: an unrolled loop may
    take the loads of several iterations before their stores."""
    from gasync.planner.walk import exprs_of, subexprs

    once = _assigned_once(body)
    for buf in bufs:
        indices: set[tuple[ir.Expr, ...]] = set()
        stored = False
        for st in body:
            loads = [x for e in exprs_of(st) for x in subexprs(e) if isinstance(x, ir.Load) and x.buf == buf]
            if loads and stored:
                return False  # a read after the store: the unrolled loop would read before it
            indices.update(x.index for x in loads)
            if isinstance(st, ir.Store) and st.buf == buf:
                indices.add(st.index)
                stored = True
        if len(indices) != 1:
            return False
        (index,) = indices
        fixed = captured | once | {var}
        if not all(loop_invariant(e, fixed) for e in index):  # a local set twice: not one element
            return False
        if not any(injective(e, var, captured) for e in index):
            return False
    return True


def _assigned_once(body: tuple[ir.Stmt, ...]) -> set[str]:
    """The body's locals set by one statement only (a value for the whole iteration)."""
    counts: dict[str, int] = {}
    for st in body:
        if isinstance(st, ir.Let):
            counts[st.var] = counts.get(st.var, 0) + 1
    return {name for name, n in counts.items() if n == 1}


def injective(e: ir.Expr, var: str, captured: set[str]) -> bool:
    """Whether ``e`` takes different values for different values of ``var``: ``var`` itself,
    plus or minus a loop invariant, or times a nonzero integer literal."""
    if isinstance(e, ir.Var):
        return e.name == var
    if not isinstance(e, ir.Binary) or e.ty != "i64":
        return False
    if e.op in ("+", "-"):
        return (injective(e.left, var, captured) and loop_invariant(e.right, captured)) or (
            e.op == "+" and injective(e.right, var, captured) and loop_invariant(e.left, captured)
        )
    if e.op == "*":
        for this, other in ((e.left, e.right), (e.right, e.left)):
            if isinstance(other, ir.Lit) and not isinstance(other.value, bool) and other.value != 0:
                return injective(this, var, captured)
    return False


def map_iteration(
    shared: Shared, em: Emitter, body: tuple[ir.Stmt, ...], out: list[str], ind: str, tag: str, index: bool = False
) -> list[tuple[int, ir.Store]]:
    """One iteration of a map's body into ``out``: its lets and combined updates, and each
    store's value into ``val_<tag>_<j>`` (with ``index``, its index into ``ix_<tag>_<j>``),
    ``j`` the store's place in the body. Returns the stores, for the caller to write after
    the other iterations' loads."""
    stores = []
    for j, st in enumerate(body):
        if isinstance(st, ir.Let | ir.Eval):  # an Eval here is a combined update (is_map)
            em.structured((st,), out, ind)
            continue
        assert isinstance(st, ir.Store)
        if index:
            out.append(f"{ind}ix_{tag}_{j} = {em.r.index_tuple(st.index, em.r.inside(st))}")
        out.append(f"{ind}val_{tag}_{j} = {wrap(NP[shared.plan.buffer(st.buf).elem], em.r(st.value))}")
        stores.append((j, st))
    return stores


def unrolled_map(shared: Shared, em: Emitter, s: ir.For, loop: ParallelLoop | None = None) -> list[str]:
    """UNROLL iterations per turn: each one's lets, stored values and combined updates
    first, then the stores; with ``loop`` (it has an iteration helper) each iteration is a
    call of the helper."""
    line = f"    {source_line(shared.plan, s.span)}"
    turn = f"    while k + {UNROLL - 1} * LANES < hi:  # a map: the loads of {UNROLL} iterations in flight"
    if loop is not None and LOOPED:
        return [line, *_looped_arrays(shared, em, loop), turn, *_looped_body(shared, loop)]
    out = [line, turn]
    stores = []
    red = s.reduce
    assert red is None or loop is None  # a reducing loop has no iteration helper
    for u in range(UNROLL):
        if loop is not None:
            out += called_iteration(shared, loop, f"k + {u} * LANES", f"{u}", "        ", stores)
            continue
        out.append(f"        {em.assign(s.var, f'k + {u} * LANES')}")
        for j, st in map_iteration(shared, em, s.body, out, "        ", f"{u}", index=True):
            stores += _store_lines(shared, st, f"{u}_{j}", "        ")
        if red is not None:  # this iteration's value, kept before the next one's lets take its local
            out.append(f"        rv_{u} = {reduce.lane_value(red, em.r(ir.Var(red.value, red.ty)))}")
    if red is not None:  # combined after every load of the turn (a float min or max may branch)
        out += [f"        acc = {reduce.combine(red.op, red.ty, 'acc', f'rv_{u}')}" for u in range(UNROLL)]
    out += stores
    out.append(f"        k += {UNROLL} * LANES")
    return out


# A turn of a map with an iteration helper as two counted loops over the UNROLL iterations: the
# helper's calls, their indices and values kept in local arrays, then the stores. NVVM unrolls
# both and keeps the arrays in registers: the same PTX as the turn written out UNROLL times
# (bench/NOTES.md, the thirty-fifth session), for ~100 fewer statements a loop for Numba (B6).
LOOPED = True


def _looped_arrays(shared: Shared, em: Emitter, loop: ParallelLoop) -> list[str]:
    """The local arrays of a looped turn (see LOOPED), made before its loop: a row per index
    component of each store (``t_ix<d>_<j>``) and of its values (``t_val_<j>``)."""
    out = []
    for j, st in _stores(loop):
        unsigned = em.r.inside(st)
        for d in range(len(st.index)):
            out.append(f"    t_ix{d}_{j} = cuda.local.array({UNROLL}, {'uint64' if unsigned else 'int64'})")
        out.append(f"    t_val_{j} = cuda.local.array({UNROLL}, {NP[shared.plan.buffer(st.buf).elem]})")
    return out


def _looped_body(shared: Shared, loop: ParallelLoop) -> list[str]:
    """A looped turn's two loops (see LOOPED), after its ``while``."""
    out = [f"        for u in range({UNROLL}):  # the loads of the {UNROLL} iterations first"]
    out += called_iteration(shared, loop, "k + u * LANES", "u", "            ", [])
    out2 = [f"        for u in range({UNROLL}):  # then their stores"]
    for j, st in _stores(loop):
        dims = range(len(st.index))
        out += [f"            t_ix{d}_{j}[u] = ix_u_{j}[{d}]" for d in dims]
        out.append(f"            t_val_{j}[u] = val_u_{j}")
        comma = "," if len(st.index) == 1 else ""
        out2.append(f"            ix_u_{j} = ({', '.join(f't_ix{d}_{j}[u]' for d in dims)}{comma})")
        out2.append(f"            val_u_{j} = t_val_{j}[u]")
        out2 += _store_lines(shared, st, f"u_{j}", "            ")
    return [*out, *out2, f"        k += {UNROLL} * LANES"]


def _stores(loop: ParallelLoop) -> list[tuple[int, ir.Store]]:
    return [(j, st) for j, st in enumerate(loop.loop.body) if isinstance(st, ir.Store)]


def _store_lines(shared: Shared, st: ir.Store, tag: str, ind: str) -> list[str]:
    """The store of an iteration's value ``val_<tag>`` at ``ix_<tag>``, checked where it must be."""
    store = f"{buffer_ref(st.buf)}[ix_{tag}] = val_{tag}"
    checks = shared.checks
    if checks is not None and checks.wanted(st):  # skipped where the index is outside
        return [f"{ind}if db.inside({buffer_ref(st.buf)}, ix_{tag}, {checks.where(st)}):", f"{ind}    {store}"]
    return [f"{ind}{store}"]


# A map's iteration as a device function of its own (its lets, then each store's index and
# value, returned): the unrolled loop calls it UNROLL times and the tail loop once, so Numba
# types and lowers the body once instead of UNROLL + 1 times (B6: a cold compile's typing and
# lowering are most of it). NVVM inlines it back (forceinline): the same code runs.
ITERATION_HELPER = True


def iteration_helper(
    shared: Shared, loop: ParallelLoop, em: Emitter, captured: set[str], combined_updates: Container[ir.Expr]
) -> list[str]:
    """``it_<gid>``, a map's iteration (see ITERATION_HELPER), or nothing where the body is not
    a map of lets and stores (a combined update keeps the body in the loop)."""
    s = loop.loop
    body = s.body
    if not ITERATION_HELPER or s.reduce is not None or s.start.ty == "u64":  # a u64 range: codegen/parallel.wide
        return []
    if not is_map(body, captured, combined_updates, s.var):
        return []
    if any(isinstance(st, ir.Eval) for st in body):
        return []
    name = helper_name(shared, "it", loop.gid)
    out = ["@dl.PROGRAM_INLINE", f"def {name}({', '.join(_helper_params(shared, loop))}):"]
    out.append(f"    {source_line(shared.plan, s.span)}  (one iteration)")
    values = []
    with _given_arrays(shared, loop, em):
        for j, _st in map_iteration(shared, em, body, out, "    ", "h", index=True):
            values += [f"ix_h_{j}", f"val_h_{j}"]
    out.append(f"    return {', '.join(values)}")
    return [*out, "", ""]


def _read_buffers(loop: ParallelLoop) -> list[str]:
    """The global buffers a map's body reads, in order of first appearance."""
    from gasync.planner.walk import exprs_of, subexprs

    found: dict[str, None] = {}
    for st in loop.loop.body:
        for e in exprs_of(st):
            for sub in subexprs(e):
                if isinstance(sub, ir.Load) and not groups.is_local(sub.buf):
                    found.setdefault(sub.buf, None)
    return list(found)


def _checked(shared: Shared, loop: ParallelLoop) -> bool:
    """Whether a map's body has a load checked at run time (it then needs the fault word)."""
    from gasync.planner.walk import exprs_of, subexprs

    checks = shared.checks
    if checks is None:
        return False
    return any(
        isinstance(sub, ir.Load) and checks.wanted(sub)
        for st in loop.loop.body
        for e in exprs_of(st)
        for sub in subexprs(e)
    )


@contextmanager
def _given_arrays(shared: Shared, loop: ParallelLoop, em: Emitter) -> Iterator[None]:
    """While a helper's body is rendered: its buffers and fault word are its parameters (each
    call passes a few arrays, not G, whose many arrays make every call costly to compile:
    scripts/typing_probe.py)."""
    em.r.arrays = {b: f"a_{b}" for b in _read_buffers(loop)}
    em.r.ctl = "ctl" if _checked(shared, loop) else ""
    try:
        yield
    finally:
        em.r.arrays, em.r.ctl = {}, ""


def _helper_params(shared: Shared, loop: ParallelLoop) -> list[str]:
    """The helper's parameters: the loop's variable, its captured locals, the instance where
    checks report it, the arrays of the buffers it reads, the fault word where it checks,
    and a group's locals."""
    params = [local(loop.loop.var), *(local(n) for n, _ in loop.captured)]
    params += ["inst"] if loop.inst_word is not None else []
    params += [f"a_{b}" for b in _read_buffers(loop)]
    params += ["ctl"] if _checked(shared, loop) else []
    return params + (["L"] if groups.locals_param(shared.plan, loop.fn) else [])


def _helper_args(shared: Shared, loop: ParallelLoop) -> list[str]:
    """What a call of a helper passes after the loop's variable (``_helper_params``)."""
    args = [local(n) for n, _ in loop.captured]
    args += ["inst"] if loop.inst_word is not None else []
    args += [buffer_ref(b) for b in _read_buffers(loop)]
    args += [CTL] if _checked(shared, loop) else []
    return args + (["L"] if groups.locals_param(shared.plan, loop.fn) else [])


def called_iteration(
    shared: Shared, loop: ParallelLoop, k: str, tag: str, ind: str, stores: list[str] | None = None
) -> list[str]:
    """A call of the iteration helper for iteration ``k``; its stores go into ``stores``, or
    (None) right after the call."""
    names = []
    kept = []
    for j, st in enumerate(loop.loop.body):
        if isinstance(st, ir.Store):
            names += [f"ix_{tag}_{j}", f"val_{tag}_{j}"]
            kept += _store_lines(shared, st, f"{tag}_{j}", ind)
    args = [f"int64({k})", *_helper_args(shared, loop)]
    out = [f"{ind}{', '.join(names)} = {helper_name(shared, 'it', loop.gid)}({', '.join(args)})"]
    if stores is None:
        return out + kept
    stores += kept
    return out
