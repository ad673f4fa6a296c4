"""Maps that update a buffer in place (``x[i] = f(x[i])``) and reducing loops whose body is a
map (codegen/maps.py ``in_place``, codegen/parallel.py ``mapped``) run unrolled, 8 iterations'
loads before their stores, and with 16-byte moves (codegen/vectors.py), on the simulator: the
values equal NumPy's, through the vector and unrolled turns and the remainder after them;
bodies where a load could see another iteration's store, or its own, keep one iteration a
turn."""

from __future__ import annotations

import numpy as np
import pytest

import gasync
from gasync.codegen.maps import UNROLL

pytestmark = [pytest.mark.sim, pytest.mark.timeout(240)]

UNROLLED = f"while k + {UNROLL - 1} * LANES < hi:"

# N = 2000: each lane runs 3 turns of 16-byte moves (f64: 16 iterations a turn; f32: one of
# 32), then unrolled turns of 8 and single iterations
RELAX = """\
const N: i64 = 2000;
buffer x: f64[N] = input;
buffer t: f64[N] = input;
buffer y: f32[N] = input;
buffer z: i64[N] = iota;
buffer out_f: f64[3] = zeros;
buffer out_i: i64[1] = zeros;
task main {
    let r: f64 = parallel for i in 0..N reduce max {
        let v = 0.5 * x[i] + 0.5 * t[i];
        x[i] = v;
        abs(v - t[i])
    };
    out_f[0] = r;
    out_f[1] = bulk for i in 0..N reduce sum { let w = x[i] * 2.0; x[i] = w; w - t[i] };
    out_f[2] = parallel for i in 0..N reduce min { t[i] - 0.25 };
    parallel for i in 0..N { y[i] = 2.0 * y[i] + 1.0; }
    out_i[0] = parallel for i in 0..N reduce sum { let s = z[i] * 3; z[i] = s + 1; s };
}
"""


def test_in_place_updates_and_reductions_unrolled_give_numpy_s_values() -> None:
    program = gasync.compile_source(RELAX, "relax.gasync")
    src = program.generated.source
    assert src.count(UNROLLED) == 5, "each loop above is unrolled"
    assert src.count("# 16-byte moves") == 5, "and moves 16 bytes an access"
    rng = np.random.default_rng(5)
    x, t = rng.uniform(-1, 1, 2000), rng.uniform(-1, 1, 2000)
    y = rng.uniform(-1, 1, 2000).astype(np.float32)
    out = program.run(backend="sim", timeout=200, inputs={"x": x.copy(), "t": t, "y": y.copy()}).buffers
    v = 0.5 * x + 0.5 * t
    assert out["out_f"][0] == np.max(np.abs(v - t))
    w = v * 2.0
    np.testing.assert_array_equal(out["x"], w)
    np.testing.assert_allclose(out["out_f"][1], np.sum(w - t), rtol=1e-12)  # sums in any order
    assert out["out_f"][2] == np.min(t - 0.25)
    np.testing.assert_array_equal(out["y"], np.float32(2.0) * y + np.float32(1.0))
    s = np.arange(2000, dtype=np.int64) * 3
    np.testing.assert_array_equal(out["z"], s + 1)
    assert out["out_i"][0] == s.sum()


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("x[i] = 1.0; let v = x[i]; t[i] = v;", "a read after the store: unrolled, it would come before it"),
        ("x[i + 1] = x[i] * 2.0;", "another iteration's element: its store may come first"),
        ("x[i % 8] = x[i % 8] + 1.0;", "iterations that share an element"),
        ("x[i] = x[N - 1 - i] + 1.0;", "read at one index, written at another"),
        ("let j = i; j = j + 1; x[j - 1] = x[j - 1] + 1.0;", "an index from a local set twice"),
    ],
)
def test_bodies_that_read_what_another_iteration_writes_keep_one_iteration_a_turn(body: str, why: str) -> None:
    source = RELAX.split("task main")[0] + "task main {\n    parallel for i in 0..N - 1 { " + body + " }\n}\n"
    src = gasync.compile_source(source, "notmap.gasync").generated.source
    assert UNROLLED not in src, why


def test_an_in_place_map_with_an_offset_index_is_unrolled() -> None:
    loop = "parallel for i in 0..N - 4 { x[i + 4] = x[i + 4] * 2.0; }"
    source = RELAX.split("task main")[0] + "task main {\n    " + loop + "\n}\n"
    src = gasync.compile_source(source, "offset.gasync").generated.source
    assert UNROLLED in src
