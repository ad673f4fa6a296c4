"""Device code for reducing loops (``parallel for ... reduce OP { ... }``, planner/reduces.py).

Each lane keeps a private partial in a register (``acc``, from the operator's
identity), adds each of its iterations' values, and the warp then combines its
32 partials with five shuffles (``dl.shfl_down``: ``shfl.sync`` on the GPU, a
per-warp row and two barriers under the simulator). Lane 0 has the warp's value:
a ``parallel for`` leaves it in the frame word of the local it goes to (the
argument row carries the word's index: the row itself is the warp's, and the
next FORK, say of another child of a ``join``, overwrites it before the poll
that forked resumes); a chunk of a ``bulk for`` combines it with one
atomic into the job's argument row (its word starts at the identity when the job
is posted), which the task reads once every chunk is done. Integer results are
exact (sums wrap as the type does: the 64-bit word is cut to the type when read);
float sums come in whatever order the lanes and chunks give.
"""

from __future__ import annotations

import math

from gasync.codegen.exprs import NP, wrap
from gasync.planner import ir
from gasync.planner.reduces import identity

LANE_TYPE = {"bool": "int32"}  # a shuffle moves 32- or 64-bit words: bools travel as 0/1
SHUFFLED_AS = {"u32": "int32", "u64": "int64"}


def _literal(value: bool | int | float) -> str:
    if isinstance(value, float):
        if value != value:
            return "math.nan"
        return "math.inf" if value == math.inf else "-math.inf" if value == -math.inf else repr(value)
    return str(int(value))


def no_candidate(red: ir.Reduction) -> bool:
    """Float min and max: a NaN is no candidate, so a partial starts at NaN (none yet), the
    value is NaN only when every iteration's is, and an empty range gives the identity."""
    return red.ty in ir.FLOATS and red.op in ("min", "max")


def start_lane(red: ir.Reduction) -> str:
    """A lane's partial before its first iteration."""
    return f"{lane_type(red.ty)}(math.nan)" if no_candidate(red) else identity_lane(red.op, red.ty)


def start_word(red: ir.Reduction, lo: str, hi: str) -> str:
    """A bulk job's word before its chunks combine into it: the identity, or for float min and
    max NaN (none yet) where the range ``lo..hi`` has iterations."""
    if no_candidate(red):
        return f"float64(math.nan) if {lo} < {hi} else {identity_word(red)}"
    return identity_word(red)


def identity_word(red: ir.Reduction) -> str:
    """The identity as the int64 or float64 word of an argument row."""
    value = identity(red.op, red.ty)
    if red.ty in ir.FLOATS:
        return f"float64({_literal(value)})"
    if red.ty == "u64" and int(value) >= 1 << 63:
        return f"int64({int(value) - (1 << 64)})"  # the same 64 bits
    return f"int64({_literal(value)})"


def lane_type(ty: ir.Ty) -> str:
    return LANE_TYPE.get(str(ty), NP[str(ty)])


def identity_lane(op: str, ty: ir.Ty) -> str:
    """The identity of ``op`` in the lanes' type (a partial's first value)."""
    return f"{lane_type(ty)}({_literal(identity(op, ty))})"


def lane_value(red: ir.Reduction, value: str) -> str:
    return f"int32({value})" if red.ty == "bool" else value


def combine(op: str, ty: ir.Ty, a: str, b: str) -> str:
    """``a OP b`` in the lanes' type (floats' min and max: a NaN is no candidate)."""
    floats = ty in ir.FLOATS
    if op == "sum":
        text = f"{a} + {b}"
    elif op in ("min", "max"):
        text = f"dl.f{op}({a}, {b})" if floats else f"{op}({a}, {b})"
    else:
        text = f"{a} {'&' if op == 'and' else '|'} {b}"
    return wrap(lane_type(ty), text)


def warp_lines(op: str, ty: ir.Ty, ind: str, acc: str = "acc") -> list[str]:
    """Combine the 32 lanes' ``acc`` into lane 0's (every lane must run these)."""
    out = [f"{ind}# the warp's 32 partials into lane 0's: five shuffles down"]
    signed = SHUFFLED_AS.get(str(ty))  # shfl.sync moves signed ints and floats: unsigned as their bits
    for off in (16, 8, 4, 2, 1):
        if signed:
            moved = f"{NP[str(ty)]}(dl.shfl_down(G.exec.CMD, w, lane, {signed}({acc}), {off}))"
        else:
            moved = f"dl.shfl_down(G.exec.CMD, w, lane, {acc}, {off})"
        out.append(f"{ind}{acc} = {combine(op, ty, acc, moved)}")
    return out


def parallel_setup(red: ir.Reduction, slot: tuple[str, int] | None, ind: str) -> list[str]:
    """A parallel loop's words for lane 0's store, read before the loop (kept in registers):
    the index of the frame word the value goes to, and for float min and max whether the
    range has iterations (lane 0's ``k`` is its start)."""
    assert slot is not None
    out = [f"{ind}red_at = AI[{slot[1]}]  # the frame word lane 0 leaves the value in"]
    if no_candidate(red):
        out.append(f"{ind}red_some = k < hi  # (lane 0's) the range has iterations: else the identity")
    return out


def store_lines(red: ir.Reduction, slot: tuple[str, int], bulk: bool, ind: str) -> list[str]:
    """Lane 0's store (parallel) or atomic combine (a bulk chunk) of the warp's value."""
    kind, k = slot
    word = "float64(acc)" if kind in ("F", "FF") else "int64(acc)"
    out = [f"{ind}if lane == 0:"]
    if not bulk:  # into the frame word of the local the value goes to (parallel_setup)
        if no_candidate(red):  # NaN: none yet, unless the range had iterations
            word = f"{word} if red_some else {identity_word(red)}"
        return [*out, f"{ind}    G.frames.{kind}[red_at] = {word}"]
    row = f"A{kind}"  # a bulk loop's argument row, JOBARGS_x[job]
    if red.ty == "u64" and red.op in ("min", "max"):  # the 64-bit word compares signed: a CAS loop
        return [
            *out,
            f"{ind}    while True:",
            f"{ind}        old = dl.ld({row}, {k})",
            f"{ind}        new = int64({red.op}(uint64(old), acc))",
            f"{ind}        if dl.cas({row}, {k}, old, new) == old:",
            f"{ind}            break",
        ]
    if red.op == "sum":
        fn = "add"
    elif red.op in ("min", "max"):
        fn = f"anan{red.op}" if kind == "F" else f"a{red.op}"
    else:
        fn = f"a{red.op}"
    return [*out, f"{ind}    dl.{fn}({row}, {k}, {word})"]


def read_value(red: ir.Reduction, word: str) -> str:
    """The loop's value from its argument word, in the reduction's type."""
    if red.ty == "bool":
        return f"({word} != 0)"
    return f"{NP[str(red.ty)]}({word})"
