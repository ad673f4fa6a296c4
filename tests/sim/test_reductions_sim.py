"""Reducing loops (``parallel for ... reduce OP { ... }`` and ``bulk for``) on the simulator:
every operator on every type it takes, empty ranges, NaNs, wrapping sums, a reduction in an
async fn and one inside a sequential loop; values computed independently with NumPy, and
the same program run by the reference interpreter."""

from __future__ import annotations

import numpy as np
import pytest

import gasync
from gasync import reference

N = 100  # not a multiple of 32: the last turn of the lanes is partial
OPS = {
    "i32": ("sum", "min", "max", "and", "or"),
    "i64": ("sum", "min", "max", "and", "or"),
    "u32": ("sum", "min", "max", "and", "or"),
    "u64": ("sum", "min", "max", "and", "or"),
    "f32": ("sum", "min", "max"),
    "f64": ("sum", "min", "max"),
    "bool": ("and", "or"),
}
NP = {"i32": np.int32, "i64": np.int64, "u32": np.uint32, "u64": np.uint64, "f32": np.float32, "f64": np.float64}


def _inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    out: dict[str, np.ndarray] = {}
    for ty, dt in NP.items():
        if ty in ("f32", "f64"):
            x = rng.uniform(-100, 100, N).astype(dt)
            x[[3, 50]] = np.nan  # no candidate for min or max
        else:
            info = np.iinfo(dt)
            x = rng.integers(info.min, info.max, N, dtype=dt, endpoint=True)  # sums wrap
        out[f"x_{ty}"] = x
    out["x_bool"] = rng.integers(0, 2, N).astype(bool)
    out["x_bool"][0] = True
    return out


def _expected(op: str, ty: str, x: np.ndarray) -> object:
    if len(x) == 0:
        from gasync.planner.reduces import identity

        return identity(op, ty)
    if ty == "bool":
        return bool(np.all(x)) if op == "and" else bool(np.any(x))
    if op == "sum":
        return x.sum(dtype=np.float64) if ty in ("f32", "f64") else x.sum(dtype=x.dtype)  # NumPy wraps integers
    if op in ("min", "max"):
        return (np.nanmin if op == "min" else np.nanmax)(x)
    return np.bitwise_and.reduce(x) if op == "and" else np.bitwise_or.reduce(x)


def _program() -> tuple[str, list[tuple[str, str, str, int, int]]]:
    lines = [f"const N: i64 = {N};"]
    cases = []  # (ty, op, kind, lo, hi) in result-column order per type
    body = []
    for ty, ops in OPS.items():
        lines.append(f"buffer x_{ty}: {ty}[N] = input;")
        cols = []
        for op in ops:
            for kind in ("parallel", "bulk"):
                whole = (4, 50) if ty in ("f32", "f64") and op == "sum" else (0, N)  # (sums: between the NaNs)
                for lo, hi in (whole, (7, 7)):  # the whole range, and an empty one
                    cols.append((ty, op, kind, lo, hi))
        lines.append(f"buffer r_{ty}: {ty}[{len(cols)}] = zeros;")
        for c, (_, op, kind, lo, hi) in enumerate(cols):
            rng = f"{lo}..{hi}" if (lo, hi) != (0, N) else "0..N"
            body.append(f"    r_{ty}[{c}] = {kind} for i in {rng} reduce {op} {{ x_{ty}[i] }};")
        cases += cols
    lines.append("buffer nested: i64[3] = zeros;")
    lines.append("buffer from_fn: i64[1] = zeros;")
    lines.append("async fn total(n: i64) -> i64 {")
    lines.append("    let s: i64 = bulk for i in 0..n reduce sum { let v = x_i64[i] % 1000; v * 2 };")
    lines.append("    return s;")
    lines.append("}")
    lines.append("task main {")
    lines += body
    lines.append("    for r in 0..3 {")
    lines.append(
        "        nested[r] = parallel for i in 0..N reduce max"
        " { let h: i64 = 0; if x_bool[i] { h = i + (r as i64); } h };"
    )
    lines.append("    }")
    lines.append("    from_fn[0] = total(N).await;")
    lines.append("}")
    return "\n".join(lines) + "\n", cases


def _check(
    buffers: dict[str, np.ndarray], cases: list[tuple[str, str, str, int, int]], xs: dict[str, np.ndarray]
) -> None:
    col: dict[str, int] = {}
    for ty, op, kind, lo, hi in cases:
        c = col.get(ty, 0)
        col[ty] = c + 1
        got, want = buffers[f"r_{ty}"][c], _expected(op, ty, xs[f"x_{ty}"][lo:hi])
        where = f"{kind} for reduce {op} over {ty}[{lo}..{hi}]"
        if ty in ("f32", "f64") and op == "sum" and hi > lo:
            assert got == pytest.approx(float(want), rel=1e-5, nan_ok=True), where
        else:
            assert got == NP.get(ty, bool)(want), where
    x_bool, x_i64 = xs["x_bool"], xs["x_i64"]
    for r in range(3):
        assert buffers["nested"][r] == max([i + r for i in range(N) if x_bool[i]] + [0])
    assert buffers["from_fn"][0] == int(sum(int(np.fmod(v, 1000)) * 2 for v in x_i64))


@pytest.fixture(scope="module")
def program() -> tuple[gasync.Program, list[tuple[str, str, str, int, int]], dict[str, np.ndarray]]:
    text, cases = _program()
    return gasync.compile_source(text, "reductions.gasync"), cases, _inputs()


def test_every_operator_and_type_on_the_simulator(program) -> None:  # type: ignore[no-untyped-def]
    prog, cases, xs = program
    res = prog.run(backend="sim", inputs=xs, timeout=300, executors=3)
    _check(res.buffers, cases, xs)


def test_the_reference_interpreter_agrees(program) -> None:  # type: ignore[no-untyped-def]
    prog, cases, xs = program
    _check(reference.run(prog.plan, xs).buffers, cases, xs)


@pytest.mark.parametrize(
    "bounds",
    ["let a: u64 = 0; let b: u64 = 9223372036854775813;", "let a: i64 = -2; let b: i64 = 9223372036854775807;"],
)
def test_a_bulk_range_of_2_to_the_63_iterations_or_more_runs_until_stopped(
    bounds: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # its length, hi - lo in int64 words, wrapped negative: the job had no chunks and the
    # loop gave the identity at once, 0, where it can only run until the run is stopped
    from gasync.runtime import backends
    from gasync.runtime.errors import RunTimeoutError

    ty = bounds[7:10]
    loop = "o[0] = bulk for i in a..b reduce max { i };"
    src = f"buffer o: {ty}[1] = zeros;\ntask main {{\n    {bounds}\n    {loop}\n}}\n"
    warm = gasync.compile_source("buffer o: i32[1] = zeros;\ntask main { o[0] = 1; }\n", "warm.gasync")
    warm.run(backend="sim")  # so the short limit below is the loop's alone
    prog = gasync.compile_source(src, "huge.gasync")
    monkeypatch.setattr(backends, "SIM_DEFAULT_LIMIT_S", 3.0)
    with pytest.raises(RunTimeoutError):
        prog.run(backend="sim")
