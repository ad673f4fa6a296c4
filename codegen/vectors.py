"""A map's 16-byte moves: where every store of a map (codegen/maps.py) and some of its loads
access their buffers at consecutive elements of the loop's variable, each lane moves VEC
consecutive iterations with one 16-byte load or store an access (``vector_map``), VEC_STEPS
of them in flight, so that a stage of a few warps per SM streams (B4's compute tasks, B7's
loader warps). An access qualifies when its index is the variable itself (``buf[i]``) or
the variable plus an offset the loop does not change, in its last dimension, with other
dimensions the loop does not change either (``x[t * TILE + i]``, ``stage[s, i]``, with
``t`` and ``s`` captured): elements ``i .. i + VEC - 1`` are then neighbours in memory.
Global buffers move with ``ld.global``/``st.global``; a group's local buffers (shared memory)
with ``ld.shared``/``st.shared`` (runtime/devicevec.py). Whether every access starts a
16-byte line, its last dimension's elements adjacent, is known only at run time (a view may
start anywhere, a device array may be strided): the loop tests it at the warp's first
iteration and falls back to the unrolled 4- or 8-byte form where it does not hold.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from gasync.codegen import groups, reduce
from gasync.codegen.exprs import buffer_ref, local
from gasync.codegen.hoist import helper_name, loop_invariant
from gasync.codegen.machine import Emitter, ParallelLoop, Shared, source_line
from gasync.codegen.maps import _given_arrays, _helper_args, _helper_params, map_iteration
from gasync.codegen.names import vector_register
from gasync.planner import ir
from gasync.planner.walk import exprs_of, subexprs

VECTOR = True  # False: maps move 4 or 8 bytes per access only (what bench/NOTES.md measured against)
OFFSET = True  # False: only ``buf[i]`` itself moves 16 bytes (what bench/NOTES.md measured against)
ASYNC_COPY = True  # False: a copy into a local buffer loads into registers, then stores (bench/NOTES.md)
VEC_BYTES = 16
VEC_STEPS = 8  # 16-byte loads in flight per lane and access: 128 bytes, four times UNROLL's 8 x 4
# True: a warp walks its whole turns starting at turn w mod their number and wrapping round, so
# that warps whose ranges start at the same low address bits are not in step (bench/NOTES.md,
# the thirty-ninth session; not for a reducing loop, whose float sum would then vary by executor)
ROTATE = False
SIZES = {"f32": 4, "i32": 4, "u32": 4, "f64": 8, "i64": 8, "u64": 8}

Access = tuple[str, tuple[ir.Expr, ...]]  # (buffer, index): one vector access of the map


def _is_var(e: ir.Expr, var: str) -> bool:
    return isinstance(e, ir.Var) and e.name == var


def vector_index(index: tuple[ir.Expr, ...], var: str, captured: set[str]) -> bool:
    """Whether consecutive values of ``var`` give consecutive elements at ``index``: its last
    dimension ``var`` or ``var + c`` (``c + var``), ``c`` and the other dimensions invariant."""
    *outer, last = index
    if not all(loop_invariant(e, captured) for e in outer):
        return False
    if _is_var(last, var):
        return True
    if not OFFSET or not (isinstance(last, ir.Binary) and last.op == "+" and last.ty == "i64"):
        return False
    for this, other in ((last.left, last.right), (last.right, last.left)):
        if _is_var(this, var) and loop_invariant(other, captured):
            return True
    return False


def _plus(e: ir.Expr, captured: set[str]) -> ir.Expr | None:
    """``x`` of ``c + x`` or ``x + c`` (``c`` invariant), or ``e`` itself."""
    if isinstance(e, ir.Binary) and e.op == "+" and e.ty == "i64":
        if loop_invariant(e.left, captured):
            return e.right
        if loop_invariant(e.right, captured):
            return e.left
    return e


def tile_width(index: tuple[ir.Expr, ...], var: str, captured: set[str]) -> int | None:
    """``T`` where ``index`` walks a tile of rows ``T`` wide as ``var`` counts: its last two
    dimensions ``r + var / T`` and ``c + var % T`` (``r``, ``c`` and the other dimensions
    invariant, ``T`` a literal), as ``a[row0 + e / T, k0 + e % T]``. Where ``T`` is a multiple
    of the elements a 16-byte move holds and the move's first value of ``var`` is too, the
    move's elements are neighbours in one row."""
    if not OFFSET or len(index) < 2 or not all(loop_invariant(e, captured) for e in index[:-2]):
        return None
    row, col = _plus(index[-2], captured), _plus(index[-1], captured)
    widths = set()
    for part, op in ((row, "/"), (col, "%")):
        if not (isinstance(part, ir.Binary) and part.op == op and _is_var(part.left, var)):
            return None
        if not (isinstance(part.right, ir.Lit) and type(part.right.value) is int and part.right.value > 0):
            return None
        widths.add(part.right.value)
    return widths.pop() if len(widths) == 1 else None


def vector_accesses(shared: Shared, loop: ParallelLoop) -> tuple[list[Access], list[Access], int] | None:
    """The map's vector loads and stores (each access once, in order of appearance) and their
    element size, if it can move them all 16 bytes at a time: every load and store is a
    vector access (consecutive, or a tile's rows of a width the move divides), each buffer's
    accesses at one index, all of one element size of 4 or 8 bytes, none checked at run time."""
    s = loop.loop
    captured = {n for n, _ in loop.captured}
    loads: dict[Access, ir.Load] = {}
    stores: dict[Access, ir.Store] = {}
    widths: set[int] = set()

    def vector(index: tuple[ir.Expr, ...]) -> bool:
        if vector_index(index, s.var, captured):
            return True
        width = tile_width(index, s.var, captured)
        widths.add(width or 0)
        return width is not None

    for st in s.body:
        if isinstance(st, ir.Store):
            if not vector(st.index) or (st.buf, st.index) in stores:
                return None
            stores[(st.buf, st.index)] = st
        for e in exprs_of(st):
            for sub in subexprs(e):
                if isinstance(sub, ir.Load):
                    if not vector(sub.index):
                        return None
                    loads.setdefault((sub.buf, sub.index), sub)
    if len({a[0] for a in loads}) < len(loads):
        return None  # a stencil's neighbours (x[i], x[i + 1]) cannot all start 16-byte lines
    found = [*loads.values(), *stores.values()]
    sizes = {SIZES.get(shared.plan.buffer(a.buf).elem, 0) for a in found}
    checks = shared.checks
    if len(sizes) != 1 or 0 in sizes or (checks is not None and any(checks.wanted(a) for a in found)):
        return None
    size = sizes.pop()
    if any(w % (VEC_BYTES // size) for w in widths):
        return None  # a tile's row would end inside a 16-byte move
    return list(loads), list(stores), size


def _names(loads: list[Access]) -> dict[Access, str]:
    """Each vector load's buffer as the program names it where the loop is (``pipe.stage`` ->
    ``stage``: a group's local item hides a global buffer of its name there), under the tags of
    codegen/names.py (``e_stage``, ``r0_stage``). A vector map loads each buffer at one index
    (vector_accesses), so that no two loads share a name."""
    out = {a: groups.item(a[0]) if groups.is_local(a[0]) else a[0] for a in loads}
    assert len(set(out.values())) == len(out), out
    return out


@contextmanager
def _at(em: Emitter, var: str, value: str) -> Iterator[None]:
    """While an index is rendered: the loop's variable stands for ``value``."""
    outer = em.r.var
    em.r.var = lambda n: f"int64({value})" if n == var else outer(n)
    try:
        yield
    finally:
        em.r.var = outer


def _address(em: Emitter, var: str, a: Access, value: str) -> str:
    """The index argument of access ``a``'s 16-byte move at ``var = value``: the element
    itself where the index is the variable (``buf[i]``), else the index tuple."""
    index = a[1]
    if len(index) == 1 and _is_var(index[0], var):
        return value
    with _at(em, var, value):
        return em.r.index_tuple(index)


def async_copy(shared: Shared, loop: ParallelLoop) -> bool:
    """Whether the map only copies global buffers into a group's local ones
    (``stage[s, i] = x[t * TILE + i]``; ``ta[s, e] = a[row0 + e / T, k0 + e % T]`` and its
    neighbour for ``tb``): its 16-byte moves can then go from global to shared memory without
    passing through registers (``cp.async``, runtime/devicevec.py), so that a lane keeps all
    of its range in flight, not VEC_STEPS moves of it."""
    body = loop.loop.body
    if not ASYNC_COPY or not body:
        return False
    return all(
        isinstance(st, ir.Store)
        and st.op == "="
        and isinstance(st.value, ir.Load)
        and groups.is_local(st.buf)
        and not groups.is_local(st.value.buf)
        and shared.plan.buffer(st.value.buf).elem == shared.plan.buffer(st.buf).elem
        for st in body
    )


def _tiles_line_up(loop: ParallelLoop, accesses: list[Access]) -> str:
    """The run-time part of a tile's 16-byte moves (``tile_width``): the range's start a
    multiple of the move's elements, each tiled buffer's rows 16-byte multiples apart (its
    first move's line then holds for every row); "" where no access is a tile."""
    s = loop.loop
    captured = {n for n, _ in loop.captured}
    tiled = sorted({a[0] for a in accesses if tile_width(a[1], s.var, captured) is not None})
    if not tiled:
        return ""
    return "".join(f" and dv.rows16({buffer_ref(b)})" for b in tiled)


def _space(buf: str) -> str:
    """The devicevec suffix of a buffer's memory: a group's local is in shared memory."""
    return "s" if groups.is_local(buf) else ""


def _bulk_lines(em: Emitter, var: str, pairs: list[tuple[Access, Access]], vec: int, size: int) -> list[str]:
    """A copy map whose accesses run along their last dimensions (no tile): lane 0 hands the
    range's whole 16-byte lines to the bulk copy engine (runtime/devicevec.py, ``bulk_copy``:
    one instruction, its completion waited for on the warp's mbarrier) where the device has one;
    the other lanes skip them, and the lanes' copies below then take none."""
    line = "                dv.bulk_copy({}, {}, {}, {}, n * {}, L.mb, cuda.threadIdx.x // LANES)"
    return [
        "        if BULK_COPY and lo < hi:  # the copy engine moves the lines; lane 0 waits for them",
        f"            n = (hi - lo) - (hi - lo) % {vec}",
        "            if lane == 0 and n > 0:",
        *(
            line.format(
                buffer_ref(d[0]), _address(em, var, d, "lo"), buffer_ref(f[0]), _address(em, var, f, "lo"), size
            )
            for d, f in pairs
        ),
        "            lo += n",
    ]


def vector_helper(shared: Shared, loop: ParallelLoop, em: Emitter) -> list[str]:
    """``vit_<gid>``, one iteration of a vector map (ITERATION_HELPER) given its loaded
    elements: the loop's variable, each vector load's element (``e_<buffer>``), the captured
    locals; it returns each store's value. Nothing where the map is not a vector map."""
    s = loop.loop
    found = vector_accesses(shared, loop) if VECTOR else None
    if found is None or async_copy(shared, loop):
        return []
    loads, _, _ = found
    names = _names(loads)
    params = [local(s.var), *(f"e_{names[a]}" for a in loads), *_helper_params(shared, loop)[1:]]
    out = ["@dl.PROGRAM_INLINE", f"def {helper_name(shared, 'vit', loop.gid)}({', '.join(params)}):"]
    out.append(f"    {source_line(shared.plan, s.span)}  (one element of a 16-byte step)")
    em.r.vector_loads = {a: f"e_{names[a]}" for a in loads}
    with _given_arrays(shared, loop, em):
        values = [f"val_h_{n}" for n, _ in map_iteration(shared, em, s.body, out, "    ", "h")]
    em.r.vector_loads = {}
    out.append(f"    return {', '.join(values)}{',' if len(values) == 1 else ''}")
    return [*out, "", ""]


def vector_map(shared: Shared, em: Emitter, loop: ParallelLoop, helper: bool) -> list[str]:
    """Where every vector access starts a 16-byte line at the warp's first iteration, each
    lane takes VEC consecutive iterations per 16-byte move, VEC_STEPS loads in flight an
    access; the unrolled and plain loops do the rest. With ``helper`` (the map has a vector
    helper) each element is a call of ``vit_<gid>``."""
    s = loop.loop
    found = vector_accesses(shared, loop) if VECTOR else None
    if found is None:
        return []
    loads, stores, size = found
    names = _names(loads)
    vec = VEC_BYTES // size
    span = vec * VEC_STEPS  # iterations per lane per turn
    aligned = " and ".join(  # an access both loaded and stored (in place: x[i] = f(x[i])) tested once
        dict.fromkeys(f"dv.aligned16({buffer_ref(a[0])}, {_address(em, s.var, a, 'lo')})" for a in [*loads, *stores])
    )
    rows = _tiles_line_up(loop, [*loads, *stores])
    if rows:
        aligned = f"lo % {vec} == 0 and {aligned}{rows}"
    out = [f"    {source_line(shared.plan, s.span)}", "    lo = k - lane"]
    if async_copy(shared, loop):
        pairs = [((st.buf, st.index), (st.value.buf, st.value.index)) for st in s.body if isinstance(st, ir.Store)]
        at = "vk + {} * LANES"
        out += [
            f"    if {aligned}:  # 16-byte copies into shared memory, {vec} iterations each, none waited for",
            *([] if rows or not groups.BULK_COPY else _bulk_lines(em, s.var, pairs, vec, size)),
            f"        while lo + {span} * LANES <= hi:",
            f"            vk = lo + lane * {vec}",
            *(
                f"            dv.cp_async16({buffer_ref(dst[0])}, {_address(em, s.var, dst, at.format(u * vec))}, "
                f"{buffer_ref(src[0])}, {_address(em, s.var, src, at.format(u * vec))})"
                for u in range(VEC_STEPS)
                for dst, src in pairs
            ),
            f"            lo += {span} * LANES",
            "        dv.cp_async_wait()  # this lane's copies are in shared memory (the lanes meet after the map)",
            "        k = lo + lane",
        ]
        return out
    rotate = ROTATE and s.reduce is None
    out.append(f"    if {aligned}:  # 16-byte moves, {vec} iterations each")
    if rotate:
        out += [
            f"        nt = (hi - lo) // ({span} * LANES)  # whole turns, walked from turn w mod nt round",
            "        tt = w % nt if nt > 0 else 0",
            "        base = lo",
        ]
    first = f"base + tt * ({span} * LANES)" if rotate else "lo"
    out += [f"        while lo + {span} * LANES <= hi:", f"            vk = {first} + lane * {vec}"]
    for u in range(VEC_STEPS):
        at = f"vk + {u * vec} * LANES"
        for a in loads:
            ref = buffer_ref(a[0])
            reg = vector_register(names[a], u)
            out.append(f"            {reg} = dv.ld{_space(a[0])}_v{vec}({ref}, {_address(em, s.var, a, at)})")
    kept = [(n, st) for n, st in enumerate(s.body) if isinstance(st, ir.Store)]  # by place in the body
    moves: list[str] = []
    red = s.reduce
    assert red is None or not helper  # a reducing loop has no iteration helper
    values: list[str] = []  # a reducing loop's values of the turn, in order
    rest = _helper_args(shared, loop) if helper else []  # (once: it walks the loop's body)
    for u in range(VEC_STEPS):
        at = f"vk + {u * vec} * LANES"
        vals: dict[Access, list[str]] = {a: [] for a in stores}
        for j in range(vec):
            given = {a: f"{vector_register(names[a], u)}[{j}]" for a in loads}
            if helper:
                targets = [f"val_{u}_{j}_{n}" for n, _ in kept]
                args = [f"int64({at} + {j})", *given.values(), *rest]
                target = ", ".join(targets) + ("," if len(targets) == 1 else "")
                out.append(f"            {target} = {helper_name(shared, 'vit', loop.gid)}({', '.join(args)})")
                for name, (_, st) in zip(targets, kept, strict=True):
                    vals[(st.buf, st.index)].append(name)
                continue
            em.r.vector_loads = given
            out.append(f"            {em.assign(s.var, f'{at} + {j}')}")
            for n, st in map_iteration(shared, em, s.body, out, "            ", f"{u}_{j}"):
                vals[(st.buf, st.index)].append(f"val_{u}_{j}_{n}")
            if red is not None:  # a reducing loop's value of this element, kept for after the loads
                values.append(f"rv_{u}_{j}")
                out.append(f"            rv_{u}_{j} = {reduce.lane_value(red, em.r(ir.Var(red.value, red.ty)))}")
        em.r.vector_loads = {}
        for a, stored in vals.items():
            where = _address(em, s.var, a, at)
            moves.append(f"            dv.st{_space(a[0])}_v{vec}({buffer_ref(a[0])}, {where}, ({', '.join(stored)}))")
    if red is not None:  # combined after every load of the turn (a float min or max may branch)
        out += [f"            acc = {reduce.combine(red.op, red.ty, 'acc', v)}" for v in values]
    out += moves
    out.append(f"            lo += {span} * LANES")
    if rotate:
        out += ["            tt += 1", "            if tt == nt:", "                tt = 0"]
    out.append("        k = lo + lane")
    return out
