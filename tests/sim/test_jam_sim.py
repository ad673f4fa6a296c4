"""Unroll-and-jam (codegen/jam.py) on the simulator: a parallel loop whose iterations each run
one sequential inner loop computes, jammed, the same values in the same order as one
iteration a turn (f32 sums compared exactly), in task bodies and in groups, and its range's
remainder past the jammed turns runs too; bodies it must not jam keep one iteration a turn."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gasync
from gasync.codegen import jam

pytestmark = [pytest.mark.sim, pytest.mark.timeout(240)]


@pytest.fixture(autouse=True)
def jammed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Jam on, whatever the default (bench/NOTES.md measures it): the mechanism's
    meaning is tested for when a program is bound by its chains' latency."""
    monkeypatch.setattr(jam, "JAM", 4)


ROOT = Path(__file__).resolve().parents[2]

# rows of m (R x K) times v, each row's sum in k order: R = 200 is 6 jammed turns of
# 4 x 32 rows a warp... and 72 rows one a turn
MATVEC = """\
const R: i64 = 200;
const K: i64 = 24;
buffer m: f32[R, K] = random(1);
buffer v: f32[K] = random(2);
buffer y: f32[R] = zeros;
task main {
    parallel for r in 0..R {
        let base: f32 = 0.5;
        let sum: f32 = base;
        for k in 0..K { sum = sum + m[r, k] * v[k]; }
        y[r] = sum * 2.0;
    }
}
"""


def want_matvec(m: np.ndarray, v: np.ndarray) -> np.ndarray:
    y = np.zeros(m.shape[0], np.float32)
    for r in range(m.shape[0]):
        s = np.float32(0.5)
        for k in range(m.shape[1]):
            s = np.float32(s + np.float32(m[r, k] * v[k]))
        y[r] = np.float32(s * np.float32(2.0))
    return y


def test_a_jammed_loop_gives_each_iteration_its_sums_in_order() -> None:
    program = gasync.compile_source(MATVEC, "matvec.gasync")
    assert f"while k + {jam.JAM - 1} * LANES < hi:" in program.generated.source
    out = program.run(backend="sim", timeout=200).buffers
    np.testing.assert_array_equal(out["y"], want_matvec(out["m"], out["v"]))


def test_the_tiled_product_jammed_in_its_group_is_a_at_b_in_k_order() -> None:
    # T = 16: a tile's 256 outputs are 2 jammed turns of a warp's 32 lanes x 4
    program = gasync.compile(ROOT / "samples" / "tiled_matmul.gasync", defines={"N": 32, "T": 16})
    src = program.generated.source
    assert "codegen/jam.py" in src
    # q = e % T is the same in the 4 copies (e + 32 j, 16 divides 32): computed once, so the
    # copies' loads of tb[s, kk * T + q] are one address; r = e / T stays each copy's own
    assert "j0_v_q = " in src and "j1_v_q" not in src and "j3_v_r = " in src
    assert src.count("uint64(v_kk * 16 + j0_v_q)]") == 4
    out = program.run(backend="sim", timeout=200).buffers
    a, b = out["a"], out["b"]
    want = np.zeros((32, 32), np.float32)
    for t in range(2):  # the tiles along k, each summed into the accumulator in turn
        for kk in range(16):
            k = t * 16 + kk
            want = (want + a[:, k : k + 1] * b[k : k + 1, :]).astype(np.float32)
    np.testing.assert_array_equal(out["c"], want)


@pytest.mark.parametrize(
    ("inner", "why"),
    [
        ("for k in 0..K { if k == 3 { break; } sum = sum + m[r, k]; }", "a break leaves the inner loop"),
        ("for k in 0..r { sum = sum + m[r, k % K]; }", "the inner loop's bound is the iteration's own"),
        ("for k in 0..K { sum = sum + m[r, k]; hits.fetch_add(1); }", "an atomic in the body"),
    ],
)
def test_bodies_that_are_not_jammed_keep_one_iteration_a_turn(inner: str, why: str) -> None:
    source = MATVEC.replace("for k in 0..K { sum = sum + m[r, k] * v[k]; }", inner).replace(
        "buffer y:", "shared hits: i64 = 0;\nbuffer y:"
    )
    program = gasync.compile_source(source, "nojam.gasync")
    assert "codegen/jam.py" not in program.generated.source, why


@pytest.mark.parametrize(
    ("lets", "shared", "own"),
    [
        # copies step by 32: r % 8 and (r / 4) % 8 are alike, r / 4 and r % 24 are not
        ("let q: i64 = r % 8; let h: i64 = (r / 4) % 8; let d: i64 = r / 4; let w: i64 = r % 24;"
         " let base: f32 = (q + h + d + w) as f32;", {"q", "h"}, {"d", "w"}),
        # a value assigned again, or read from a buffer, is each copy's own
        ("let q: i64 = r % 8; q = q + 1; let x: f32 = m[0, q]; let base: f32 = x;", set(), {"q", "x"}),
    ],
)  # fmt: skip
def test_only_values_alike_in_every_copy_are_shared(lets: str, shared: set[str], own: set[str]) -> None:
    source = MATVEC.replace("let base: f32 = 0.5;", lets)
    src = gasync.compile_source(source, "alike.gasync").generated.source
    assert "codegen/jam.py" in src
    for name in shared:
        assert f"j0_v_{name} = " in src and f"j1_v_{name}" not in src, name
    for name in own:
        assert f"j3_v_{name} = " in src, name
