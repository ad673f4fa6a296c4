"""An i64 operation of two literals is rendered as its value (codegen/exprs.py, binop), wrapped
as the device wraps it: Numba then types no int64() calls for it (B6). The values computed by
the generated kernel match the reference interpreter's, overflow included."""

from __future__ import annotations

import numpy as np

import gasync
from gasync import reference

SOURCE = """
const W: i64 = 64;
buffer out: i64[5] = zeros;
task t {
    out[0] = W - 1;
    out[1] = 9223372036854775807 + 1;
    out[2] = (3 - 5) * 7;
    out[3] = -6 & 13 | 256 ^ 3;
    out[4] = min(W * 2, 100) + max(W - 70, 0);
}
"""


def test_two_literals_become_their_value() -> None:
    text = gasync.compile_source(SOURCE, "<fold>").generated.source
    assert "int64(64) - int64(1)" not in text and "int64(63)" in text
    assert "int64(-9223372036854775808)" in text  # wrapped, as the device's add wraps
    assert "int64(-14)" in text


def test_the_kernel_computes_what_the_reference_does() -> None:
    program = gasync.compile_source(SOURCE, "<fold>")
    got = program.run(backend="sim", timeout=60).buffers["out"]
    assert got.tolist() == [63, -(2**63), -14, (-6 & 13) | (256 ^ 3), 100]  # (NumPy's own, below)
    assert np.array_equal(reference.run(program.plan).buffers["out"], got)
