"""A program of suspending async fns for tests/codegen/test_blockir.py and tests/sim/test_liveness_sim.py."""

CHAIN = """
buffer out: i64[2] = zeros;
async fn leaf(x: i64) -> i64 {
    let before = x * 3;
    yield_now().await;
    return before + 1;
}
async fn mid(x: i64, unused: i64) -> i64 {
    let kept = x + 100;
    let v = leaf(x).await;
    return v + kept;
}
task main {
    let acc: i64 = 0;
    for r in 0..3 {
        acc = mid(acc + (r as i64), 7).await;
    }
    out[0] = acc;
}
"""
