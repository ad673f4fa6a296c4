"""A traced run on a real GPU (issue 6): device events recorded, and a Perfetto trace made of them.

Skipped with a reason where no CUDA GPU is present (tests/conftest.py).
"""

from __future__ import annotations

import json

import pytest

import gasync
from gasync import runtime
from gasync.codegen import generate
from gasync.viz.perfetto import to_chrome_trace

pytestmark = [pytest.mark.gpu, pytest.mark.timeout(180)]

POLL, WAKE = 1, 2
PROGRAM = """
buffer out: i64[1] = zeros;
channel c: i64[2];
task p for i in 0..2 {
    for k in 0..3 {
        c.send(k as i64).await;
        yield_now().await;
    }
}
task closer after p { c.close(); }
task q {
    let s: i64 = 0;
    for await v in c { s += v; }
    out[0] = s;
}
"""


def test_traced_gpu_run_records_every_instance_and_wakes() -> None:
    program = gasync.compile_source(PROGRAM, "<traced>")
    res = runtime.run(generate(program.plan, trace=True), runtime.RunOptions(backend="cuda", timeout_s=60))
    assert res.buffers["out"].tolist() == [2 * (0 + 1 + 2)]
    raw = res.trace
    assert raw is not None and raw.backend == "cuda" and raw.dropped == 0
    polls = [e for e in raw.events if e[0] == POLL]
    assert len(polls) == res.stats["polls"]
    for inst in range(4):
        mine = sorted((e for e in polls if e[2] == inst), key=lambda e: e[5])
        assert mine and mine[0][3] == 0 and mine[-1][4] == -1
        assert all(e[5] <= e[6] for e in mine)  # %globaltimer: start before end
    assert any(e[0] == WAKE for e in raw.events)
    doc = json.loads(json.dumps(to_chrome_trace(raw)))
    # each poll is a slice on its executor's track and on its task's
    assert len([e for e in doc["traceEvents"] if e["ph"] == "X" and e.get("cat") == "poll"]) == 2 * len(polls)


def test_traced_gpu_run_samples_counters_in_bounds() -> None:
    # issue 15: the run queue, in flight and the channel's occupancy as each poll ended
    from sim.test_trace_counters_sim import check_counters  # tests/ is on sys.path (conftest.py)

    program = gasync.compile_source(PROGRAM, "<traced>")
    gen = generate(program.plan, trace=True)
    res = runtime.run(gen, runtime.RunOptions(backend="cuda", timeout_s=60))
    assert res.trace is not None and res.trace.channels == [("c", 2)]
    tracks = check_counters(res.trace, res.stats["instances"], gen.queue_capacity)
    assert len(tracks["channel c"]) >= 1
