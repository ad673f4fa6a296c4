"""Combined atomics (codegen/combined.py) on the simulator: every atomic operator on every
type it takes, on shared scalars and on buffer elements at a loop-invariant index (a
literal, a captured local), in parallel and bulk loops, through an unrolled map's turns
and its remainder, under conditions, in ranges that leave lanes idle, in empty ranges, in
a reducing loop, beside the forms that stay one atomic per element; values computed
independently with NumPy and Python integers, and the same program run by the reference
interpreter."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gasync
from gasync import reference

# a bulk loop of N elements on 3 executors runs in chunks of 256, 256 and 88; a lane of
# the unrolled map (8 iterations a turn) runs two turns, then its remainder, one at a time
N = 600
INTS = ("i32", "i64", "u32", "u64")
TYPES = (*INTS, "f32", "f64")
KINDS = ("parallel", "bulk")
NP = {"i32": np.int32, "i64": np.int64, "u32": np.uint32, "u64": np.uint64, "f32": np.float32, "f64": np.float64}
INPUT_OF = {"add": "x", "sub": "x", "min": "m", "max": "m", "and": "b", "or": "b"}


def ops(ty: str) -> tuple[str, ...]:
    return ("add", "sub", "min", "max", "and", "or") if ty in INTS else ("add", "sub", "min", "max")


def init(op: str, ty: str) -> int | float:
    """Each target's first value: not the identity, so that it takes part."""
    signed = ty in ("i32", "i64")
    low, high = (-100, 100) if signed else (3, 1 << 31)
    v = {"add": 7, "sub": 7, "min": high, "max": low, "and": -2, "or": 1 << 16}[op]
    if ty not in INTS:
        return float(v)
    return v % (1 << int(ty[1:])) if not signed else v


def literal(v: int | float) -> str:
    return repr(v) if isinstance(v, float) else str(v)


def _inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(12)
    out: dict[str, np.ndarray] = {}
    for ty in TYPES:
        dt = NP[ty]
        if ty in INTS:
            info = np.iinfo(dt)
            out[f"x_{ty}"] = rng.integers(info.min, info.max, N, dtype=dt, endpoint=True)  # sums wrap
            out[f"m_{ty}"] = rng.integers(info.min, info.max, N, dtype=dt, endpoint=True)
            out[f"b_{ty}"] = (rng.integers(0, 1 << 12, N).astype(dt) | dt(0b11)) & dt(0x0FF3)
        else:
            out[f"x_{ty}"] = rng.integers(-1000, 1000, N).astype(dt)  # whole numbers: exact in any order
            m = rng.uniform(-1e3, 1e3, N).astype(dt)
            m[[5, 300, N - 1]] = np.nan  # no candidate for min or max
            out[f"m_{ty}"] = m
        for kind in KINDS:
            out[f"e_{kind}_{ty}"] = np.array([init(op, ty) for op in ops(ty)], dtype=dt)
    return out


def _every_operator(kind: str, ty: str) -> list[str]:
    """Shared scalars and buffer elements, every operator: with a store, a map (unrolled, then
    its remainder)."""
    lines = [f"    {kind} for i in 0..N {{", f"        copy_{kind}_{ty}[i] = x_{ty}[i];"]
    for j, op in enumerate(ops(ty)):
        value = f"{INPUT_OF[op]}_{ty}[i]"
        lines.append(f"        s_{kind}_{op}_{ty}.fetch_{op}({value});")
        lines.append(f"        atomic_{op}(e_{kind}_{ty}[{j}], {value});")  # literal indices: one kind each
    # a captured local's index: one kind of operator (a sum) for the whole buffer
    lines.append(f"        atomic_add(a_{kind}_{ty}[k], x_{ty}[i]);")
    lines.append(f"        atomic_sub(a_{kind}_{ty}[k + 1], m_{ty}[i]);")
    lines.append("    }")
    return lines


def _program() -> str:
    lines = [f"const N: i64 = {N};"]
    for ty in TYPES:
        lines += [f"buffer {x}_{ty}: {ty}[N] = input;" for x in ("x", "m", *(("b",) if ty in INTS else ()))]
        for kind in KINDS:
            lines.append(f"buffer e_{kind}_{ty}: {ty}[{len(ops(ty))}] = input;")
            lines.append(f"buffer a_{kind}_{ty}: {ty}[2] = zeros;")
            lines.append(f"buffer copy_{kind}_{ty}: {ty}[N] = zeros;")
            lines += [f"shared s_{kind}_{op}_{ty}: {ty} = {literal(init(op, ty))};" for op in ops(ty)]
    for kind in KINDS:
        lines += [
            f"shared count_{kind}: u64 = 0;",
            f"shared positive_{kind}: f64 = 0.0;",
            f"shared never_{kind}: f64 = -0.0;",
            f"buffer cond_{kind}: i64[2] = zeros;",
            f"buffer cond_min_{kind}: f32[1] = fill(1000.0);",
            f"shared few_{kind}: i32 = -100;",
            f"buffer few_min_{kind}: u32[1] = fill(4000000000);",
            f"shared empty_{kind}: f64 = -0.0;",
            f"buffer empty_max_{kind}: i32[1] = zeros;",
            f"shared used_{kind}: u64 = 0;",
            f"buffer seen_{kind}: u64[N] = zeros;",
            f"buffer hist_{kind}: i32[5] = zeros;",
            f"shared in_reduce_{kind}: i64 = 0;",
            f"buffer reduced_{kind}: i32[1] = zeros;",
        ]
    lines += ["shared nested: i64 = 0;", "buffer nested_at: i64[3] = zeros;"]
    lines += ["task main {", "    let k: i64 = 0;"]
    for ty in TYPES:
        for kind in KINDS:
            lines += _every_operator(kind, ty)
    for kind in KINDS:
        lines += [
            f"    {kind} for i in 0..N {{",  # conditional updates: not a map
            f"        if i % 3 == 0 {{ count_{kind}.fetch_add(1); atomic_max(cond_{kind}[1], m_i64[i]); }}",
            f"        if x_f64[i] > 0.0 {{ positive_{kind}.fetch_add(x_f64[i]); }}"
            f" else {{ atomic_min(cond_min_{kind}[0], m_f32[i]); }}",
            f"        if x_f64[i] > 5000.0 {{ never_{kind}.fetch_add(1.0); }}",  # never: no atomic, -0.0 stays
            "    }",
            f"    {kind} for i in 0..5 {{ few_{kind}.fetch_max(m_i32[i]); atomic_min(few_min_{kind}[0], m_u32[i]); }}",
            f"    {kind} for i in 7..7 {{ empty_{kind}.fetch_add(1.0); atomic_max(empty_max_{kind}[0], 5); }}",
            f"    {kind} for i in 0..N {{",  # one atomic per element: its value is used, its index varies
            f"        let o = used_{kind}.fetch_add(1);",
            f"        seen_{kind}[i] = o;",
            f"        atomic_add(hist_{kind}[i % 4], 1);",
            f"        atomic_add(hist_{kind}[4], 2);",  # combined beside them: sums commute
            "    }",
            f"    reduced_{kind}[0] = {kind} for i in 0..N reduce max {{ in_reduce_{kind}.fetch_add(2); m_i32[i] }};",
        ]
    lines += [
        "    parallel for i in 0..N {",
        "        for j in 0..3 { nested.fetch_add(j as i64); atomic_add(nested_at[j], 1); }",
        "    }",
        "}",
    ]
    return "\n".join(lines) + "\n"


def wrapped(v: int, ty: str) -> int:
    bits = int(ty[1:])
    v %= 1 << bits
    return v - (1 << bits) if ty.startswith("i") and v >= 1 << (bits - 1) else v


def expected(op: str, ty: str, first: int | float, values: np.ndarray) -> int | float:
    """``first`` updated with each of ``values`` in turn, computed without gasync."""
    if ty not in INTS:
        vals = [float(v) for v in values]
        if op in ("add", "sub"):
            return first + sum(vals) if op == "add" else first - sum(vals)  # whole numbers: exact
        kept = [v for v in vals if not math.isnan(v)]  # the atomics take no NaN
        return min([first, *kept]) if op == "min" else max([first, *kept])
    ints = [int(v) for v in values]
    if op == "add":
        return wrapped(int(first) + sum(ints), ty)
    if op == "sub":
        return wrapped(int(first) - sum(ints), ty)
    if op in ("min", "max"):
        return min([int(first), *ints]) if op == "min" else max([int(first), *ints])
    acc = int(first)
    for v in ints:
        acc = acc & v if op == "and" else acc | v
    return wrapped(acc, ty)


def _check(buffers: dict[str, np.ndarray], shared: dict[str, object], xs: dict[str, np.ndarray]) -> None:
    for kind in KINDS:
        for ty in TYPES:
            for j, op in enumerate(ops(ty)):
                want = NP[ty](expected(op, ty, init(op, ty), xs[f"{INPUT_OF[op]}_{ty}"]))
                where = f"{kind} for, {op} on {ty}"
                assert NP[ty](shared[f"s_{kind}_{op}_{ty}"]) == want, f"{where}: shared scalar"
                assert buffers[f"e_{kind}_{ty}"][j] == want, f"{where}: buffer element"
            assert (buffers[f"copy_{kind}_{ty}"] == xs[f"x_{ty}"]).all(), f"{kind} for, the map's stores on {ty}"
            at_k = buffers[f"a_{kind}_{ty}"]
            zero = 0 if ty in INTS else 0.0
            assert at_k[0] == NP[ty](expected("add", ty, zero, xs[f"x_{ty}"])), f"{kind} for, a[k] on {ty}"
            if ty in INTS:
                assert at_k[1] == NP[ty](expected("sub", ty, zero, xs[f"m_{ty}"])), f"{kind} for, a[k + 1] on {ty}"
            else:
                assert np.isnan(at_k[1]), f"{kind} for, a[k + 1] on {ty}: a sum with NaNs"
        third = np.arange(N) % 3 == 0
        x, m_f32 = xs["x_f64"], xs["m_f32"]
        assert shared[f"count_{kind}"] == int(third.sum())
        assert buffers[f"cond_{kind}"][1] == max(0, int(xs["m_i64"][third].max()))
        assert shared[f"positive_{kind}"] == float(x[x > 0].sum())
        assert buffers[f"cond_min_{kind}"][0] == np.float32(expected("min", "f32", 1000.0, m_f32[x <= 0]))
        assert shared[f"never_{kind}"] == 0.0 and math.copysign(1.0, shared[f"never_{kind}"]) < 0  # type: ignore[arg-type]
        assert shared[f"few_{kind}"] == max(-100, int(xs["m_i32"][:5].max()))
        assert buffers[f"few_min_{kind}"][0] == min(4000000000, int(xs["m_u32"][:5].min()))
        assert math.copysign(1.0, shared[f"empty_{kind}"]) < 0  # type: ignore[arg-type]
        assert buffers[f"empty_max_{kind}"][0] == 0
        assert sorted(buffers[f"seen_{kind}"].tolist()) == list(range(N)), "a used fetch_add's old values"
        assert buffers[f"hist_{kind}"].tolist() == [N // 4] * 4 + [2 * N]
        assert shared[f"in_reduce_{kind}"] == 2 * N
        assert buffers[f"reduced_{kind}"][0] == xs["m_i32"].max()
    assert shared["nested"] == 3 * N
    assert buffers["nested_at"].tolist() == [N] * 3


@pytest.fixture(scope="module")
def program() -> tuple[gasync.Program, dict[str, np.ndarray]]:
    return gasync.compile_source(_program(), "combined_atomics.gasync"), _inputs()


def test_the_program_combines_what_it_should(program) -> None:  # type: ignore[no-untyped-def]
    prog, _ = program
    # a map per type and kind, and the reducing loop with a combined update (both kinds)
    assert prog.source.count("# a map: the loads of") == 2 * len(TYPES) + 2
    warp_atomics = prog.source.count("if lane == 0 and t_atom_")
    # per kind: every operator of every type on a scalar and an element, and the two
    # elements at a captured local's index; 5 conditional
    # (`never` too), 2 in few lanes, 2 in an empty range, the invariant hist[4] (not the
    # used fetch_add, not hist[i % 4]), the reduce's fetch_add; then the nested loop's scalar
    per_kind = sum(2 * len(ops(ty)) + 2 for ty in TYPES) + 5 + 2 + 2 + 1 + 1
    assert warp_atomics == 2 * per_kind + 1


def test_every_operator_and_type_on_the_simulator(program) -> None:  # type: ignore[no-untyped-def]
    prog, xs = program
    res = prog.run(backend="sim", inputs=xs, timeout=300, executors=3)
    _check(res.buffers, res.shared, xs)


def test_the_reference_interpreter_agrees(program) -> None:  # type: ignore[no-untyped-def]
    prog, xs = program
    out = reference.run(prog.plan, xs)
    _check(out.buffers, out.shared, xs)
