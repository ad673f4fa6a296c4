"""Values through the polls that restore and spill only their live locals and pass a lone
await's arguments on the callee's first poll (codegen/poll.py, codegen/liveness.py): every
await below really suspends (a yield, a child's FORK for its parallel loop), so each local
that crosses one must have been spilled, and each that does not must not be needed."""

from __future__ import annotations

import pytest
from liveness_programs import CHAIN

import gasync

pytestmark = [pytest.mark.sim, pytest.mark.timeout(180)]


def chain_expected() -> int:
    acc = 0
    for r in range(3):
        x = acc + r
        acc = (3 * x + 1) + (x + 100)  # mid(x) = leaf(x) + kept
    return acc


def test_a_chain_of_suspending_fns_keeps_its_live_locals() -> None:
    res = gasync.compile_source(CHAIN, "<chain>").run(backend="sim", timeout=120)
    assert int(res.buffers["out"][0]) == chain_expected() == 2145


FORKS = """
buffer data: i64[64] = iota;
buffer out: i64[3] = zeros;
async fn scaled(k: i64) -> i64 {
    let base = k * 10;
    parallel for i in 0..64 {
        data[i] = data[i] + k;
    }
    yield_now().await;
    return base + data[5];
}
task main {
    let keep: i64 = 9;
    let a = scaled(2).await;
    out[0] = a;
    out[1] = keep;
    out[2] = scaled(3).await;
}
"""


def test_a_fork_from_a_callee_passes_up_and_resumes_with_its_locals() -> None:
    res = gasync.compile_source(FORKS, "<forks>").run(backend="sim", timeout=120)
    # data[5] = 5 + 2 after the first call, + 3 after the second
    assert [int(v) for v in res.buffers["out"]] == [20 + 7, 9, 30 + 10]
    assert [int(v) for v in res.buffers["data"][:3]] == [5, 6, 7]
