"""A plain fn that sets a signal or closes a channel (it has no running instance to name as
the waker: the generated code once referred to an undefined ``inst`` there)."""

from __future__ import annotations

import numpy as np

import gasync

PROGRAM = """
signal go;
channel c: i32[2];
buffer out: i32[2] = zeros;
fn fire() { go.set(); c.close(); }
task a { c.send(5).await; fire(); }
task b {
    go.wait().await;
    let n: i32 = 0;
    for await v in c { n = n + v; }
    out[0] = n;
    out[1] = 1;
}
"""


def test_a_plain_fn_sets_a_signal_and_closes_a_channel() -> None:
    res = gasync.compile_source(PROGRAM, "plain_fn.gasync").run(backend="sim", timeout=60)
    np.testing.assert_array_equal(res.buffers["out"], np.array([5, 1], np.int32))
