"""Property: integer and float arithmetic computed by generated kernels equals the language's rules.

Hypothesis builds random typed expressions (wrapping + - *, truncating / and %,
bitwise ops, masked shifts, casts between widths, saturating float casts) over
values read from an input buffer, so nothing is folded at compile time. Each
program stores many expressions into an output buffer; the expected values come
from the planner's constant evaluator (planner/consteval.py), an independent
implementation of the same rules in Python integers, applied to the same typed IR
(with shifts masked as on the device: a shift by a constant amount past the width is a
compile error instead, decision 33, so a constant amount is kept in 0..32).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import gasync
from gasync.planner import ir
from gasync.planner.consteval import evaluate

INT_TYPES = ("i32", "i64", "u32", "u64")
OPS = ("+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>")
PER_PROGRAM = 12
INPUTS = 6  # v[0..5] of each integer type


def leaf(ty: str) -> st.SearchStrategy[str]:
    small = st.integers(0, 40).map(str)
    return st.one_of(st.integers(0, INPUTS - 1).map(lambda k: f"v_{ty}[{k}]"), small)


def expr(ty: str, depth: int) -> st.SearchStrategy[str]:
    if depth == 0:
        return leaf(ty)
    sub = expr(ty, depth - 1)
    binary = st.tuples(sub, st.sampled_from(OPS), sub).map(_binary)
    other = st.sampled_from([t for t in INT_TYPES if t != ty])
    cast = other.flatmap(lambda o: expr(o, depth - 1).map(lambda e: f"(({e}) as {ty})"))
    fcast = expr(ty, depth - 1).map(lambda e: f"((({e}) as f64 * 1.5) as {ty})")
    return st.one_of(leaf(ty), binary, cast, fcast)


def _binary(t: tuple[str, str, str]) -> str:
    a, op, b = t
    if op in ("/", "%"):  # a zero divisor is 0 on the device and an error at compile time
        b = f"({b} | 1)"
    if op in ("<<", ">>") and "v_" not in b:  # a constant amount past the width is an error (decision 33)
        b = f"({b} & 31)"
    return f"({a} {op} {b})"


PROGRAMS = st.lists(
    st.sampled_from(INT_TYPES).flatmap(lambda ty: expr(ty, 3).map(lambda e: (ty, e))),
    min_size=PER_PROGRAM,
    max_size=PER_PROGRAM,
)


def program_text(cases: list[tuple[str, str]]) -> str:
    lines = [f"buffer v_{t}: {t}[{INPUTS}] = input;" for t in INT_TYPES]
    lines += [f"buffer out_{k}: {ty}[1] = zeros;" for k, (ty, _) in enumerate(cases)]
    lines.append("task main {")
    lines += [f"    out_{k}[0] = {e};" for k, (_, e) in enumerate(cases)]
    lines.append("}")
    return "\n".join(lines) + "\n"


def expected(prog: gasync.api.Program, inputs: dict[str, np.ndarray]) -> list[int]:
    """Evaluate each stored expression of the typed IR with the constant evaluator."""
    values = {name: arr for name, arr in inputs.items()}

    def substitute(e: ir.Expr) -> ir.Expr:
        if isinstance(e, ir.Load):
            (ix,) = e.index
            assert isinstance(ix, ir.Lit)
            return ir.Lit(int(values[e.buf][int(ix.value)]), e.ty)
        if isinstance(e, ir.Binary):
            return ir.Binary(e.op, substitute(e.left), substitute(e.right), e.ty)
        if isinstance(e, ir.Unary):
            return ir.Unary(e.op, substitute(e.operand), e.ty)
        if isinstance(e, ir.Cast):
            return ir.Cast(substitute(e.expr), e.ty)
        return e

    body = prog.plan.tasks[0].body.body
    out = []
    for s in body:
        assert isinstance(s, ir.Store)
        out.append(evaluate(substitute(s.value), checked_shifts=False))
    return out


def random_inputs(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for t in INT_TYPES:
        dt = {"i32": np.int32, "i64": np.int64, "u32": np.uint32, "u64": np.uint64}[t]
        info = np.iinfo(dt)
        picks = [info.min, info.max, 0, 1]
        picks += [int(x) for x in rng.integers(-1000 if info.min < 0 else 0, 1000, INPUTS - len(picks))]
        out[f"v_{t}"] = np.array(picks, dtype=dt)
    return out


@pytest.mark.sim
@pytest.mark.timeout(600)
@settings(
    max_examples=20,
    deadline=None,
    phases=[Phase.generate],  # each example is a simulated kernel: report it whole, don't shrink for minutes
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(cases=PROGRAMS, seed=st.integers(0, 2**16))
def test_generated_arithmetic_matches_the_language_rules(cases: list[tuple[str, str]], seed: int) -> None:
    text = program_text(cases)
    inputs = random_inputs(seed)
    prog = gasync.compile_source(text, "<property>")
    want = expected(prog, inputs)
    res = prog.run(backend="sim", timeout=120, inputs=inputs)
    got = [int(res.buffers[f"out_{k}"][0]) for k in range(len(cases))]
    for k, ((ty, e), g, w) in enumerate(zip(cases, got, want, strict=True)):
        assert g == w, f"out_{k}: {e} as {ty}: kernel {g}, rules {w}\n{text}"
