"""``return`` inside an async block, run: the generated kernel gives the block the returned value
and leaves only the block (issue 10), whether the block suspends or not, has a tail or not."""

from __future__ import annotations

import pytest

import gasync

pytestmark = [pytest.mark.sim, pytest.mark.timeout(120)]

PROGRAM = """
buffer out: i64[10] = zeros;
buffer inp: i32[2] = iota;
async fn twice_or_zero(x: i32) -> i32 {
    let v = async { if x > 1 { return x * 2; } return 0; }.await;
    return v + 1;
}
task main {
    out[0] = async { return 3; }.await as i64;
    let x: i64 = 40;
    out[1] = async { if inp[1] == 1 { return x + 1; } 5 }.await;
    out[2] = async { if inp[1] == 0 { return x + 1; } 5 }.await;
    out[3] = async { for k in 0..10 { if k == 4 { return k * 10; } } return 1; }.await as i64;
    out[4] = async { if inp[0] == 0 { return 8; } else { return 9; } }.await as i64;
    out[5] = async { loop { yield_now().await; return 11; } }.await as i64;
    let (p, q) = join(async { return 12; }, async { 13 }).await;
    out[6] = (p + q) as i64;
    out[7] = async { let z = async { return 2; }.await; return z + 100; }.await as i64;
    async { if inp[0] == 0 { out[8] = 7; return; } out[8] = 70; }.await;
    out[9] = (twice_or_zero(5).await * 10 + twice_or_zero(0).await) as i64;
}
"""


def test_return_gives_the_blocks_value_on_the_simulator() -> None:
    res = gasync.compile_source(PROGRAM, "<block_returns>", {}).run(backend="sim", timeout=60.0)
    assert res.buffers["out"].tolist() == [3, 41, 5, 40, 8, 11, 25, 102, 7, 111]
