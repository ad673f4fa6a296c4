"""The body of a ``parallel for`` or ``bulk for`` as a device function all 32 lanes run.

``par_<gid>(w, lane, AI, AF, G)`` runs iterations ``lo + lane``, ``lo + lane + 32``,
... of the range in ``G.exec.PARGS_I[w, 0:2]``, with the loop's captured locals in the
argument rows ``AI``/``AF``. A body that is a map is unrolled (``is_map``). Atomic
updates that may be combined (``codegen/combined.py``) update a partial per lane in
the body, and the warp issues one atomic per target after the loop.
"""

from __future__ import annotations

from gasync.codegen import combined, groups, hoist, jam, reduce
from gasync.codegen.bounds import long_range, stop_lines
from gasync.codegen.exprs import local
from gasync.codegen.machine import Emitter, ParallelLoop, Shared, UnsupportedError, captured_loads, source_line
from gasync.codegen.maps import called_iteration, is_map, iteration_helper, unrolled_map
from gasync.codegen.occupancy import LANES
from gasync.codegen.vectors import vector_helper, vector_map
from gasync.planner import ir
from gasync.planner.model import Function


class LoopEmitter(Emitter):
    """The emitter of a loop body: a combined update becomes its partial's update."""

    def __init__(self, shared: Shared, fn: Function, updates: combined.Combined):
        super().__init__(shared, fn)
        self.updates = updates
        self.types.update({p.acc: p.ty for p in updates.partials})

    def stmt(self, s: ir.Stmt, out: list[str], ind: str) -> None:
        if isinstance(s, ir.Eval) and s.expr in self.updates.of:
            assert isinstance(s.expr, ir.SharedOp | ir.BufAtomic)
            out += combined.update_lines(self.updates.of[s.expr], s.expr, self.r, ind)
            return
        super().stmt(s, out, ind)


def emit_parallel_body(shared: Shared, loop: ParallelLoop) -> list[str]:
    """The body of a parallel or bulk for: iterations lo + lane, lo + lane + 32, ... of PARGS_I[w, 0:2]."""
    fn = shared.plan.function(loop.fn)
    s = loop.loop
    captured = {n for n, _ in loop.captured}
    updates = combined.find(shared.plan, s.body, captured)
    em = LoopEmitter(shared, fn, updates)
    if loop.inst_word is None:  # a set or close in the body wakes on no instance's behalf (as in a plain fn)
        em.r.self_inst = "int64(-1)"
    _check_depth(shared, fn, s)
    helper = iteration_helper(shared, loop, em, captured, updates.of)
    vhelper = vector_helper(shared, loop, em) if helper else []
    hoisted = mapped(s, captured, updates) and hoist.hoistable(shared, loop)
    helper_u: list[str] = []
    vhelper_u: list[str] = []
    if hoisted:  # its unchecked variant's helpers too
        with hoist.unchecked(shared):
            helper_u = iteration_helper(shared, loop, em, captured, updates.of)
            vhelper_u = vector_helper(shared, loop, em) if helper_u else []
    out = [
        *helper,
        *vhelper,
        *helper_u,
        *vhelper_u,
        "@cuda.jit(device=True)",
        f"def par_{loop.gid}({_params(shared, loop)}):",
        f"    {source_line(shared.plan, s.span)}",
    ]
    if not loop.inline:  # (an inline loop's captured locals and instance are its parameters)
        out += captured_loads(em, loop.captured, 2, "    ")
        if loop.inst_word is not None:
            out.append(f"    inst = AI[{loop.inst_word}]")
    out += ["    " + line for line in em.guard_setup(s.body, None, always=long_range(s))]
    if not loop.inline:  # (an inline loop's range is its parameters)
        out += ["    lo = G.exec.PARGS_I[w, 0]", "    hi = G.exec.PARGS_I[w, 1]"]
    # near 2^63 - 1, lo + lane may wrap where hi is near it: no turn for such a lane
    out.append("    k = dl.lane_start(lo, hi, lane)" if near_the_top(s) else "    k = lo + lane")
    out += combined.init_lines(updates, em.r, "    ")
    red = s.reduce
    if red is not None:
        none_yet = " (NaN: none yet)" if reduce.no_candidate(red) else ""
        out.append(f"    acc = {reduce.start_lane(red)}  # this lane's partial: reduce {red.op}{none_yet}")
        if not loop.bulk:
            out += reduce.parallel_setup(red, loop.result, "    ")
    if hoisted:
        out += hoist.range_lines(shared, em, loop)
        with hoist.unchecked(shared):
            fast = _loops(shared, em, loop, captured, updates, bool(helper_u), bool(vhelper_u))
        slow = _loops(shared, em, loop, captured, updates, bool(helper), bool(vhelper))
        out += ["    if inrange:", *("    " + x for x in fast), "    else:", *("    " + x for x in slow)]
    else:
        out += _loops(shared, em, loop, captured, updates, bool(helper), bool(vhelper))
    out += combined.flush_lines(updates, em.r, "    ")
    if red is not None:
        assert loop.result is not None
        out += reduce.warp_lines(red.op, red.ty, "    ")
        out += reduce.store_lines(red, loop.result, loop.bulk, "    ")
    return out


def _params(shared: Shared, loop: ParallelLoop) -> str:
    """par_<gid>'s parameters: its argument rows, or, called inline by a poll on all 32 lanes
    (codegen/warppoll.py), its range and captured locals (and instance) themselves."""
    lp = groups.locals_param(shared.plan, loop.fn)
    if not loop.inline:
        return f"w, lane, AI, AF, G{lp}"
    inst = ["inst"] if loop.inst_word is not None else []
    return ", ".join(["w", "lane", "lo", "hi", *(local(name) for name, _ in loop.captured), *inst, f"G{lp}"])


def _loops(
    shared: Shared, em: LoopEmitter, loop: ParallelLoop, captured: set[str], updates: combined.Combined,
    helper: bool, vhelper: bool,
) -> list[str]:  # fmt: skip
    """The lanes' loops over the warp's range: a map's vector and unrolled loops, then one
    iteration a turn (``helper``, ``vhelper``: the iteration helpers exist)."""
    s = loop.loop
    red = s.reduce
    out: list[str] = []
    turns: list[str] = []  # the loops that take several iterations a turn
    if mapped(s, captured, updates):
        turns += vector_map(shared, em, loop, vhelper)
        turns += unrolled_map(shared, em, s, loop if helper else None)
    elif red is None and not helper and not wide(s):
        inner = jam.inner_loop(s, captured)
        if inner is not None:
            turns += jam.jammed_loop(em, s, inner)
    # near int64's top their k + n * LANES would wrap, and a range too long to end takes
    # the loop below, which looks at the deadline (long_range): there, one a turn
    ifs = [*(["hi <= dl.TURNS_BELOW"] if near_the_top(s) else []), *(["dl.short_span(k, hi)"] if long_range(s) else [])]
    if turns and ifs:
        out += [f"    if {' and '.join(ifs)}:", *("    " + line for line in turns)]
    else:
        out += turns
    out.append("    while k < hi:")
    if long_range(s):  # `parallel for i in 0..n`: n may be 2^63
        out += stop_lines("        ", None)
    if helper:  # the iteration's values from its helper, then its stores
        out += called_iteration(shared, loop, "k", "t", "        ")
    else:
        out.append(f"        {em.assign(s.var, 'dl.word_u64(k)' if wide(s) else 'k')}")
        em.loops.append(("native", 0, 0))
        em.structured(s.body, out, "        ")
    if red is not None:
        value = reduce.lane_value(red, em.r(ir.Var(red.value, red.ty)))
        out.append(f"        acc = {reduce.combine(red.op, red.ty, 'acc', value)}")
    if near_the_top(s):  # k + LANES would wrap past 2^63 - 1 and never reach hi
        out += ["        if k >= hi - LANES:", "            break"]
    out.append("        k += LANES")
    return out


def near_the_top(s: ir.For) -> bool:
    """Whether a lane's word may pass 2^63 - 1 - LANES: a 64-bit range whose stop is not a
    literal below it (a u64 range counts in shifted words: ``wide``)."""
    if s.start.ty not in ("i64", "u64"):
        return False  # an i32 or u32 range's words are far from int64's ends
    if not isinstance(s.stop, ir.Lit):
        return True
    word = int(s.stop.value) - (1 << 63) if s.start.ty == "u64" else int(s.stop.value)
    return word > (1 << 63) - 1 - LANES


def mapped(s: ir.For, captured: set[str], updates: combined.Combined) -> bool:
    """Whether loop ``s`` is unrolled as a map (codegen/maps.py): a reducing loop's too, its
    iterations' values combined into the lane's partial one by one after their loads."""
    return not wide(s) and is_map(s.body, captured, updates.of, s.var, s.reduce is not None)


def wide(s: ir.For) -> bool:
    """A u64 range: its lanes count in shifted words (dl.u64_word), so its loops take the
    plain path, which alone turns the word back into the value."""
    return s.start.ty == "u64"


def _check_depth(shared: Shared, fn: Function, s: ir.For) -> None:
    """A loop body runs inside the lanes' own loop: it cannot be cut into blocks, so
    its nesting is a limit (a located error, not Python's own)."""
    from gasync.codegen.blocks import DEEP, DEEP_LOOPS, BlockEmitter

    depth = BlockEmitter(shared, fn, s.body, 0)
    for st in s.body:
        nest, loops = depth.depth(st)
        if nest > DEEP or loops >= DEEP_LOOPS:
            raise UnsupportedError(
                f"the body of a {s.kind} for nests statements {nest} deep and loops {loops} deep; at most"
                f" {DEEP} and {DEEP_LOOPS - 1} are supported there: move the inner part into a fn",
                st.span,
            )
