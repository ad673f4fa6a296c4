"""f32 constants are folded in f32 (decision 62): every operand and every intermediate
result is rounded to f32, as the device computes ``np.float32`` arithmetic, so a const
and the same expression computed at run time agree."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gasync import reference
from gasync.dsl import parse
from gasync.planner import plan
from gasync.planner.model import Plan, PlanOptions

F = np.float32


def _plan(src: str, defines: dict[str, str] | None = None) -> Plan:
    return plan(parse(src, "t.gasync"), PlanOptions(defines=tuple((defines or {}).items())))


def _const(expr: str, ty: str = "f32") -> float:
    p = _plan(f"const L3: f32 = 0.3;\nconst C: {ty} = {expr};\ntask main {{ }}\n")
    return float(next(c.value for c in p.consts if c.name == "C"))


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("0.5 - 0.3", 0.19999998807907104),
        ("0.5 - L3", 0.19999998807907104),
        ("0.1 + 0.2 - 0.3", 0.0),
        ("-(0.5 - 0.3) * 3.0", -0.5999999642372131),
        ("sqrt(0.1 + 0.2)", 0.547722578048706),
        ("min(0.5 - 0.3, 0.2)", 0.19999998807907104),
        ("max(0.5 - 0.3, 0.1)", 0.19999998807907104),
        ("abs(0.3 - 0.5)", 0.19999998807907104),
        ("exp(0.1 * 3.0)", 1.3498588800430298),
        ("pow(0.1 + 0.2, 2.0)", 0.09000000357627869),
        ("(0.1 as f64 + 0.2) as f32", 0.30000001192092896),
    ],
)
def test_an_f32_const_is_folded_in_f32(expr: str, value: float) -> None:
    assert _const(expr) == value


def test_the_expected_values_are_numpy_float32_arithmetic() -> None:
    assert float(F(0.5) - F(0.3)) == 0.19999998807907104
    assert float(F(0.1) + F(0.2) - F(0.3)) == 0.0
    assert float(F(math.sqrt(F(0.1) + F(0.2)))) == 0.547722578048706
    assert float(F(math.pow(F(0.1) + F(0.2), F(2.0)))) == 0.09000000357627869


def test_f64_stays_f64() -> None:
    assert _const("0.5 - 0.3", "f64") == 0.5 - 0.3
    assert _const("(0.1 as f32) as f64", "f64") == 0.10000000149011612
    assert _const("L3 as f64 - 0.3", "f64") == float(np.float64(F(0.3))) - 0.3


def test_a_bare_literal_const_keeps_its_written_value() -> None:
    assert _const("2.2") == 2.2  # the same f32 as 2.200000047683716 once loaded


def test_initialisers_are_folded_in_f32() -> None:
    p = _plan("buffer b: f32[2] = fill(0.5 - 0.3);\nshared s: f32 = 0.1 + 0.2 - 0.3;\ntask main { }\n")
    assert p.buffers[0].init_value == 0.19999998807907104
    assert p.shared[0].init == 0.0


def test_a_define_is_folded_in_f32_where_it_is_used() -> None:
    p = _plan("const L3: f32 = 0.3;\nconst L6: f32 = 0.5 - L3;\ntask main { }\n", {"L3": "0.3"})
    assert [c.value for c in p.consts] == [0.30000001192092896, 0.19999998807907104]


def test_a_const_agrees_with_the_same_expression_at_run_time() -> None:
    src = (
        "const L: f32 = 0.5 - 0.3;\nconst L3: f32 = 0.3;\nconst L6: f32 = 0.5 - L3;\n"
        "const L7: f32 = 0.1 + 0.2 - 0.3;\nconst Q: f32 = sqrt(0.1 + 0.2);\n"
        "buffer o: f32[8] = zeros;\nbuffer b: f32[1] = fill(0.5 - 0.3);\nshared s: f32 = 0.5 - 0.3;\n"
        "task main {\n"
        "    let a: f32 = 0.5 - 0.3;\n    let c: f32 = 0.1 + 0.2 - 0.3;\n    let q: f32 = sqrt(0.1 + 0.2);\n"
        "    o[0] = L; o[1] = a; o[2] = L6; o[3] = L7; o[4] = c; o[5] = b[0]; o[6] = Q; o[7] = q;\n"
        "}\n"
    )
    out = reference.run(_plan(src))
    o = [float(v) for v in out.buffers["o"]]
    assert o == [0.19999998807907104] * 3 + [0.0, 0.0, 0.19999998807907104] + [0.547722578048706] * 2
    assert out.shared["s"] == 0.19999998807907104
