"""Async behaviour on the simulator that the contract cases cannot express as expected values:
a host signal that stops ticking tasks, deadlocks reported with the exact waiting lines,
``timeout`` on a program that never ends, signal waits that are woken rather than polled,
and traced runs (the RawTrace, its Chrome trace JSON, and ``gasync run --trace --schedule``)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from contract.deadlocks import DEADLOCKS, HEADER

import gasync
from gasync import runtime
from gasync.codegen import generate
from gasync.runtime.errors import DeadlockError, RunTimeoutError
from gasync.runtime.trace import DONE_STATE, POLL, START_STATE, WAKE
from gasync.viz.perfetto import to_chrome_trace

pytestmark = [pytest.mark.sim, pytest.mark.timeout(120)]

RUN_TIMEOUT_S = 60.0
DEADLOCK_WITHIN_S = 20.0  # a deadlock is found by the device, far sooner than RUN_TIMEOUT_S


def compile_text(source: str, name: str = "prog") -> gasync.Program:
    return gasync.compile_source(source, f"<{name}>", {})


# --- a host signal stops ticking tasks -------------------------------------------------------------------------

TICKERS = """
shared counter: u64 = 0;
signal stop;
task ticker for i in 0..3 {
    loop {
        if stop.is_set() { break; }
        counter.fetch_add(1);
        yield_now().await;
    }
}
"""


def test_host_signal_stops_ticking_tasks() -> None:
    res = compile_text(TICKERS).run(backend="sim", timeout=RUN_TIMEOUT_S, signals={"stop": 0.05})
    assert res.signals["stop"] is True
    assert res.shared["counter"] > 0


# --- deadlocks: each names every waiting task and what it waits on ---------------------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", list(DEADLOCKS))
def test_deadlock_names_every_waiting_task(name: str) -> None:
    source, lines = DEADLOCKS[name]
    program = compile_text(source, name)
    start = time.monotonic()
    with pytest.raises(DeadlockError) as info:
        program.run(backend="sim", timeout=RUN_TIMEOUT_S)
    elapsed = time.monotonic() - start
    message = info.value.message
    assert message.splitlines() == [HEADER, *(f"  {line}" for line in lines)], message
    assert str(info.value) == f"{info.value.path}: error[E0303]: {message}"  # the API names the program
    assert elapsed < DEADLOCK_WITHIN_S, f"the deadlock took {elapsed:.1f}s to report"


FOREVER = "task main {\n    loop { yield_now().await; }\n}\n"


@pytest.mark.timeout(90)
def test_timeout_on_a_program_that_never_ends() -> None:
    program = compile_text(FOREVER, "forever")
    start = time.monotonic()
    with pytest.raises(RunTimeoutError) as info:
        program.run(backend="sim", timeout=2)
    elapsed = time.monotonic() - start
    assert "the run exceeded its timeout of 2s" in str(info.value)  # its deadline, not the hard limit
    assert "main" in str(info.value)  # the unfinished task is named
    assert 1.5 <= elapsed < 2 + 30, elapsed  # the bound, plus at most the simulator's start-up grace


LOOPS_OUTSIDE_POLLS = {
    # a loop no poll's deadline check reaches: in a parallel loop's body, and in a plain fn
    # (the latter without checks: its loop used to be guarded only where the program had them)
    "body": (
        "buffer h: i64[32] = zeros;\ntask spin {\n    parallel for i in 0..32 {\n"
        "        let k: i64 = 0;\n        while k >= 0 { k = (k + 1) & 1023; }\n        h[i] = k;\n    }\n}\n",
        True,
    ),
    "plain_fn": (
        "buffer h: i64[1] = zeros;\nfn spin(n: i64) -> i64 { let k: i64 = n; loop { k = (k + 1) % 7; } return k; }\n"
        "task main { h[0] = spin(3); }\n",
        False,
    ),
    # a range of 2^63 iterations or more, in a parallel or bulk loop and a plain fn's `for`:
    # they ran to the simulator's hard limit (decision 24 had a `for` always end)
    "parallel_range": (
        "buffer h: u64[1] = zeros;\ntask main {\n    let b: u64 = 9223372036854775813;\n"
        "    h[0] = parallel for i in 0..b reduce max { i };\n}\n",
        True,
    ),
    "bulk_range": (
        "buffer h: i64[1] = zeros;\ntask main {\n    let b: i64 = 9223372036854775807;\n"
        "    h[0] = bulk for i in -2..b reduce max { i };\n}\n",
        True,
    ),
    "plain_fn_range": (
        "buffer h: i64[1] = zeros;\nfn spin(n: i64) -> i64 { let s: i64 = 0; for i in 0..n { s = s ^ i; } return s; }\n"
        "task main { h[0] = spin(9223372036854775807); }\n",
        True,
    ),
}


@pytest.mark.timeout(90)
@pytest.mark.parametrize("name", sorted(LOOPS_OUTSIDE_POLLS))
def test_timeout_stops_a_loop_outside_any_poll(name: str) -> None:
    text, checked = LOOPS_OUTSIDE_POLLS[name]
    program = compile_text(text, name)
    start = time.monotonic()
    with pytest.raises(RunTimeoutError) as info:
        # (the loop's turn calls no device function: every such call takes a lock of the
        # simulator's (numba-cuda's swapped_cuda_module), on which 32 looping lanes can queue
        # for ~20 s; the deadline's look every 64 turns is the only call left)
        program.run(backend="sim", timeout=2, checked=checked)
    elapsed = time.monotonic() - start
    # its task then finished on the values it had: the run still fails, and says why
    assert [n.message for n in info.value.notes][0] == (
        "a loop in a plain fn or a parallel loop (its range or its body's) was still running at the deadline"
    )
    # and, with no task left unfinished, that the task finished after the loop gave up (it
    # said "unfinished tasks: (none)"); after a parallel loop, the executor may stop first
    assert "(none)" not in info.value.message
    if name.startswith("plain_fn"):  # (the fn returns into its task's poll, which finishes)
        assert info.value.message.endswith(
            "unfinished tasks: none, as a loop still running at the deadline gave up,"
            " and its task then finished on the values it had"
        )
    assert 1.5 <= elapsed < 2 + 20, elapsed  # well before the simulator's own grace (30 s)


# --- signal waits are woken, not polled ------------------------------------------------------------------------

WAITERS = """
signal ready;
shared stage: i32 = 0;
buffer out: i32[3] = zeros;
task waiter for i in 0..3 {
    ready.wait().await;
    out[i] = stage.load() + i;
}
task setter {
    for k in 0..30 { yield_now().await; }
    stage.store(10);
    ready.set();
}
"""


def test_signal_wait_is_woken_not_polled() -> None:
    res = compile_text(WAITERS).run(backend="sim", timeout=RUN_TIMEOUT_S, executors=1)
    assert res.buffers["out"].tolist() == [10, 11, 12]
    # setter: 31 polls; each waiter: one poll to wait, one when woken. Polling waiters would
    # cost about 3 more polls per yield of the setter.
    assert res.stats["polls"] <= 31 + 3 * 2 + 6, res.stats


# --- traces (issue 6) ------------------------------------------------------------------------------------------

TRACED = """
channel c: i32[2];
buffer out: i32[1] = zeros;
task p for i in 0..2 {
    for k in 0..3 {
        c.send(k).await;
        yield_now().await;
    }
}
task closer after p { c.close(); }
task q {
    let s = 0;
    for await v in c { s += v; }
    out[0] = s;
}
"""


@pytest.fixture(scope="module")
def traced() -> runtime.Result:
    program = compile_text(TRACED, "traced")
    return runtime.run(generate(program.plan, trace=True), runtime.RunOptions(backend="sim", timeout_s=RUN_TIMEOUT_S))


def test_trace_has_polls_of_every_instance_from_start_to_done(traced: runtime.Result) -> None:
    assert traced.buffers["out"].tolist() == [2 * (0 + 1 + 2)]
    raw = traced.trace
    assert raw is not None and raw.dropped == 0
    instances = sum(count for _, _, count in raw.tasks)
    assert instances == 4
    polls = [e for e in raw.events if e[0] == POLL]
    for inst in range(instances):
        mine = sorted((e for e in polls if e[2] == inst), key=lambda e: e[5])
        assert mine, f"instance {inst} never polled"
        assert mine[0][3] == START_STATE
        assert mine[-1][4] == DONE_STATE and mine[-1][7] == 1
        assert all(e[4] != DONE_STATE for e in mine[:-1])
        for before, after in zip(mine, mine[1:], strict=False):
            assert after[3] == before[4], f"instance {inst} resumed from another state"
        assert all(e[5] <= e[6] for e in mine)
    assert any(e[0] == WAKE for e in raw.events)
    assert len(polls) == traced.stats["polls"]


def test_chrome_trace_has_a_slice_per_poll_and_flows(traced: runtime.Result) -> None:
    raw = traced.trace
    doc = json.loads(json.dumps(to_chrome_trace(raw)))
    events = doc["traceEvents"]
    polls = [e for e in raw.events if e[0] == POLL]
    execs = next(e["pid"] for e in events if e["name"] == "process_name" and e["args"]["name"] == "executors (sim)")
    slices = [e for e in events if e["ph"] == "X" and e.get("cat") == "poll"]
    assert len([e for e in slices if e["pid"] == execs]) == len(polls)
    assert len(slices) == 2 * len(polls)  # once on its executor's track, once on its task's
    starts = [e for e in events if e["ph"] == "s"]
    ends = [e for e in events if e["ph"] == "f"]
    assert starts and len(starts) == len(ends)
    assert {e["id"] for e in starts} == {e["id"] for e in ends}
    assert doc["otherData"]["events_dropped"] == 0


def test_the_api_runs_traced_and_gives_the_profile() -> None:
    res = compile_text(TRACED, "traced").run(backend="sim", timeout=RUN_TIMEOUT_S, trace=True)
    assert res.buffers["out"].tolist() == [6]
    assert res.trace is not None and res.trace.dropped == 0
    prof = res.profile
    assert prof is not None and list(prof) == ["p", "closer", "q"]
    assert [prof[t].instances for t in prof] == [2, 1, 1]
    assert sum(p.polls for p in prof.values()) == res.stats["polls"] == len(res.trace.polls())
    assert prof["closer"].polls == 1 and prof["closer"].wait_us == 0.0  # never suspends
    # q suspends only at its `for await`, and waits there at least once
    assert list(prof["q"].waiting_on) == ["s1 line 13: for await v in c"]
    for p in prof.values():
        assert 0 < p.longest_poll_us <= p.busy_us
        assert abs(p.wait_us - sum(p.waiting_on.values())) < 1e-3


def gasync_cli(*args: str | Path, timeout: float = 100) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gasync", *map(str, args)], capture_output=True, text=True, timeout=timeout
    )


def test_cli_run_writes_trace_and_schedule(tmp_path: Path) -> None:
    program = tmp_path / "traced.gasync"
    program.write_text(TRACED)
    trace, dot = tmp_path / "t.json", tmp_path / "s.dot"
    report = tmp_path / "r.html"
    res = gasync_cli(
        "run", program, "--backend", "sim", "--trace", trace, "--schedule", dot, "--report", report, "--json"
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    page = report.read_text(encoding="utf-8")
    assert "<svg" in page and "<table" in page and "task q {" in page
    assert all(f"<td>{task}</td>" in page for task in ("p", "closer", "q"))  # the profile's rows
    assert "<script src" not in page and "<link" not in page
    out = json.loads(res.stdout)
    assert list(out["profile"]) == ["p", "closer", "q"]
    keys = {"instances", "polls", "busy_us", "wait_us", "wakes", "longest_poll_us", "waiting_on"}
    assert all(set(p) == keys for p in out["profile"].values())
    assert sum(p["polls"] for p in out["profile"].values()) == out["stats"]["polls"]
    text = trace.read_text(encoding="utf-8")
    assert "\\u" not in text and "→" in text  # real UTF-8, which Perfetto shows as it is
    doc = json.loads(text)
    assert any(e["ph"] == "X" for e in doc["traceEvents"])
    assert all(e["tid"] != 0 for e in doc["traceEvents"] if e["ph"] in ("X", "s", "f"))
    names = {e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name"}
    assert {"task p[0..2]", "task closer", "task q"} <= names
    assert "digraph" in dot.read_text()
    res = gasync_cli("run", program, "--backend", "sim", "--trace", trace)
    assert res.returncode == 0, res.stderr
    table = res.stdout[res.stdout.index("profile (from the trace)") :]
    assert all(f"│ {task} " in table for task in ("p", "closer", "q"))
    assert "for await v in c" in table  # what q waited on
    again = tmp_path / "s2.dot"
    res = gasync_cli("schedule", trace, "-o", again)
    assert res.returncode == 0, res.stderr
    assert "digraph" in again.read_text()


@pytest.mark.timeout(120)
def test_stats_count_wakes_exactly() -> None:
    # each yield_now wakes its own task once: 5 yields, 5 wakes, 6 polls
    program = compile_text(
        "buffer out: i32[1] = zeros;\ntask t { for k in 0..5 { yield_now().await; } out[0] = 1; }", "wakes"
    )
    res = program.run(backend="sim", timeout=RUN_TIMEOUT_S)
    assert res.buffers["out"].tolist() == [1]
    assert (res.stats["wakes"], res.stats["polls"]) == (5, 6)
    # the executors' span on one clock: at least the longest executor's own time, within the kernel's
    assert 0 < res.stats["device_ms"] <= res.stats["span_ms"] <= res.stats["kernel_ms"], res.stats


# --- a value sent wakes one receiver, not all of them ------------------------------------------------------------


@pytest.mark.timeout(120)
def test_a_send_wakes_one_of_many_waiting_receivers() -> None:
    # The contract case: 12 receivers wait before the first of 40 sends. Waking all of
    # them on each send polled every receiver each time (273 polls here; 2 s for B4 on
    # the H200).
    from contract.programs import CASES

    herd = next(c for c in CASES if c.name == "many_receivers_wait_then_each_send_wakes_one")
    res = compile_text(herd.source, "herd").run(backend="sim", executors=13, timeout=RUN_TIMEOUT_S)
    assert (res.shared["total"], res.shared["count"]) == (sum(range(40)), 40)
    assert res.stats["polls"] < 160, res.stats


def test_channels_wake_one_waiter_only_where_every_waiter_tries_again() -> None:
    from gasync.codegen import channel_wakes_one

    def wakes_one(body: str) -> bool:
        senders = "task s { c.send(1).await; d.send(2).await; c.send(3).await; }\ntask r { o[1] = d.recv().await; }\n"
        plan = compile_text("channel c: i64[4];\nchannel d: i64[4];\nbuffer o: i64[2] = zeros;\n" + senders + body).plan
        return channel_wakes_one(plan, {f.name: f.suspends and f.kind == "async" for f in plan.functions})

    assert wakes_one("task t { let v = c.recv().await; o[0] = v; }")
    assert wakes_one("task t { select { v = c.recv() => { o[0] = v; } w = d.recv() => { o[1] = w; } } }")
    assert wakes_one("task t { let (a, b) = join(c.recv(), d.recv()).await; o[0] = a + b; }")
    # two receives of one channel in one join share the task's one place in c's line
    assert not wakes_one("task t { let (a, b) = join(c.recv(), c.recv()).await; o[0] = a + b; }")
    # an async block in a select may drop its place in line when the other arm wins
    assert not wakes_one(
        "task t { select { v = async { let x = c.recv().await; x } => { o[0] = v; } w = d.recv() => { o[1] = w; } } }"
    )
