"""Device code for reducing loops (``parallel for ... reduce OP { ... }``, planner/reduces.py).

Each lane keeps a private partial in a register (``acc``, from the operator's
identity), adds each of its iterations' values, and the warp then combines its
32 partials with five shuffles (``dl.shfl_down``: ``shfl.sync`` on the GPU, a
per-warp row and two barriers under the simulator). Lane 0 has the warp's value:
a ``parallel for`` leaves it in the warp's argument row, where the poll that
resumes after the loop reads it; a chunk of a ``bulk for`` combines it with one
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
        return "math.inf" if value == math.inf else "-math.inf" if value == -math.inf else repr(value)
    return str(int(value))


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


def store_lines(red: ir.Reduction, slot: tuple[str, int], bulk: bool, ind: str) -> list[str]:
    """Lane 0's store (parallel) or atomic combine (a bulk chunk) of the warp's value."""
    kind, k = slot
    row = f"A{kind}"  # the loop's argument row: PARGS_x[w] for parallel, JOBARGS_x[job] for bulk
    word = "float64(acc)" if kind == "F" else "int64(acc)"
    out = [f"{ind}if lane == 0:"]
    if not bulk:
        return [*out, f"{ind}    {row}[{k}] = {word}"]
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
