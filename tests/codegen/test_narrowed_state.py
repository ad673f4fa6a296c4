"""A parallel loop's body takes only the fields of G it uses (codegen/parallel.py, narrowed_state).

The values are checked by every contract case and sample with a parallel or bulk for, on both
backends; this checks what the generated module passes.
"""

from __future__ import annotations

import gasync
from gasync.codegen import generate, parallel

SRC = """
const N: i64 = 64;
buffer x: f32[N] = iota;
buffer y: f32[N] = zeros;
shared total: i64 = 0;
task main {
    parallel for i in 0..N { y[i] = 2.0 * x[i] + 1.0; }
    bulk for i in 0..N { total.fetch_add(1); }
}
"""


def test_each_loop_takes_the_fields_it_uses_and_its_callers_build_them() -> None:
    src = generate(gasync.compile_source(SRC, "<n>").plan).source
    assert "P_1 = namedtuple('P_1', ('exec', 'B_x', 'B_y'))  # what of G par_1 uses" in src
    assert "def par_1(w, lane, AI, AF, G):" in src
    assert "par_1(w, lane, G.exec.PARGS_I[w], G.exec.PARGS_F[w], P_1(G.exec, G.B_x, G.B_y))" in src
    assert "P_2 = namedtuple('P_2'," in src and "P_2(G." in src  # the bulk loop's, called with job rows


def test_without_narrowing_every_loop_takes_all_of_g() -> None:
    parallel.NARROW = False
    try:
        src = generate(gasync.compile_source(SRC, "<n>").plan).source
    finally:
        parallel.NARROW = True
    assert "P_1" not in src and "par_1(w, lane, G.exec.PARGS_I[w], G.exec.PARGS_F[w], G)" in src
