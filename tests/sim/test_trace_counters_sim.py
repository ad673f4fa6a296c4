"""Counters in a traced run on the simulator (issue 15): the run queue, in flight and each
channel's occupancy, sampled by the device as polls end, within their bounds, settled at the
end, and drawn as Perfetto counter tracks; the CLI's table and the report show their peaks.

:func:`check_counters` is shared with tests/gpu/test_trace_gpu.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import gasync
from gasync import runtime
from gasync.codegen import generate
from gasync.runtime.trace import CHANNEL, INFLIGHT, QUEUE, RawTrace
from gasync.viz.perfetto import chrome_trace_text

pytestmark = [pytest.mark.sim, pytest.mark.timeout(120)]

RUN_TIMEOUT_S = 60.0
SAMPLES = Path(__file__).parents[2] / "samples"

# a relay between two channels: `relay` uses both (its rows hold a's then b's occupancy), `q`
# only b (its first channel column is b's)
RELAY = """
channel a: i32[2];
channel b: i32[3];
buffer out: i32[1] = zeros;
task p for i in 0..2 {
    for k in 0..4 { a.send(k).await; }
}
task closer after p { a.close(); }
task relay {
    for await v in a { b.send(2 * v).await; }
    b.close();
}
task q {
    let s = 0;
    for await v in b { s += v; }
    out[0] = s;
}
"""


def check_counters(raw: RawTrace, instances: int, queue_capacity: int) -> dict[str, list[int]]:
    """What every traced run that ended well shows: counters within their bounds, in time
    order, the run queue and every channel empty at the end; the Perfetto document's
    counter tracks by name, each one's values (in time order). For a program without bulk
    for loops or host signals, whose in flight counts only instances: each once, and a
    sleeper (a select's sleep arm) twice while it also runs (runtime/state.py, Trace)."""
    assert raw.counters, "no counters recorded"
    times = [t for t, _, _ in raw.counters]
    assert times == sorted(times)
    series: dict[int, list[int]] = {}
    for _, k, v in raw.counters:
        series.setdefault(k, []).append(v)
    assert all(0 <= v <= queue_capacity for v in series[QUEUE])
    # in flight counts the polled instance itself while its poll ends
    assert all(1 <= v <= 2 * instances for v in series[INFLIGHT])
    for c, (_, capacity) in enumerate(raw.channels):
        assert all(0 <= v <= capacity for v in series.get(CHANNEL + c, [0]))
        assert series.get(CHANNEL + c, [0])[-1] == 0  # every value sent was received
    assert series[QUEUE][-1] == 0  # nothing left to run after the last poll
    text = chrome_trace_text(raw)
    assert "\\u" not in text
    tracks: dict[str, list[int]] = {}
    for e in json.loads(text)["traceEvents"]:
        if e["ph"] == "C":
            for key, value in e["args"].items():
                tracks.setdefault(f"{e['name']} {key}", []).append(value)
    names = {"run queue", "in flight", *(f"channel {name}" for name, _ in raw.channels)}
    assert names <= set(tracks)
    return tracks


@pytest.fixture(scope="module")
def relay() -> runtime.Result:
    program = gasync.compile_source(RELAY, "<relay>", {})
    return runtime.run(generate(program.plan, trace=True), runtime.RunOptions(backend="sim", timeout_s=RUN_TIMEOUT_S))


def test_a_relay_between_two_channels_counts_both(relay: runtime.Result) -> None:
    assert relay.buffers["out"].tolist() == [2 * 2 * (0 + 1 + 2 + 3)]
    raw = relay.trace
    assert raw is not None and raw.dropped == 0 and raw.channels == [("a", 2), ("b", 3)]
    tracks = check_counters(raw, relay.stats["instances"], 8)
    assert max(tracks["channel a"]) >= 1 or max(tracks["channel b"]) >= 1  # values did wait in them
    assert max(tracks["in flight"]) >= 2  # p's two instances started at once


@pytest.mark.parametrize("sample", ["histogram", "warp_specialized", "join_select"])
def test_every_channel_sample_gives_counters_in_bounds(sample: str) -> None:
    program = gasync.compile(SAMPLES / f"{sample}.gasync")
    gen = generate(program.plan, trace=True)
    res = runtime.run(gen, runtime.RunOptions(backend="sim", timeout_s=RUN_TIMEOUT_S))
    assert res.trace is not None and res.trace.dropped == 0
    check_counters(res.trace, res.stats["instances"], gen.queue_capacity)


def test_a_counted_channel_is_named_so_and_stays_full_while_values_remain() -> None:
    # warp_specialized's loader is a counted channel (codegen/counted.py): no ring, so its
    # occupancy is what the receivers have left, at most its capacity (decision 66)
    program = gasync.compile(SAMPLES / "warp_specialized.gasync")
    gen = generate(program.plan, trace=True)
    res = runtime.run(gen, runtime.RunOptions(backend="sim", timeout_s=RUN_TIMEOUT_S))
    assert res.trace is not None and res.trace.channels == [("ready (counted)", 8)]
    tracks = check_counters(res.trace, res.stats["instances"], gen.queue_capacity)
    assert max(tracks["channel ready (counted)"]) == 8


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "gasync", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=100)


def test_the_cli_prints_the_peaks_and_the_report_shows_them(tmp_path: Path) -> None:
    program = tmp_path / "relay.gasync"
    program.write_text(RELAY)
    trace, report = tmp_path / "t.json", tmp_path / "r.html"
    res = _cli("run", program, "--backend", "sim", "--trace", trace, "--report", report)
    assert res.returncode == 0, res.stderr
    table = res.stdout[res.stdout.index("counters (from the trace)") :]
    assert all(f"│ {name} " in table for name in ("run queue", "in flight", "channel a", "channel b"))
    page = report.read_text(encoding="utf-8")
    assert "<h2>Counters</h2>" in page and "<td>channel b</td>" in page
    doc: dict[str, Any] = json.loads(trace.read_text(encoding="utf-8"))
    assert {"run", "in", "channel"} <= {e["name"] for e in doc["traceEvents"] if e["ph"] == "C"}
