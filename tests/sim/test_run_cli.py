"""``gasync run`` as a user runs it: ``python -m gasync run ...`` in a subprocess, on the simulator."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from gasync.runtime.backends import gpu_present

pytestmark = [pytest.mark.sim, pytest.mark.timeout(120)]

SAMPLES = Path(__file__).parents[2] / "samples"
SCALE = """
const K: i32 = 3;
buffer x: f32[2, 3] = input;
buffer y: f32[2, 3] = zeros;
buffer n: i32[4] = iota;
task main {
    for r in 0..2 {
        parallel for c in 0..3 { y[r, c] = x[r, c] * 2.0 + 1.0; }
    }
    for i in 0..4 { n[i] = n[i] * K; }
}
"""
FOREVER = "task main {\n    loop { yield_now().await; }\n}\n"


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every run here caches into a temporary directory, never the user's."""
    monkeypatch.setenv("GASYNC_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def gasync_run(*args: str | Path, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gasync", "run", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ),
    )


def assert_clean_failure(res: subprocess.CompletedProcess[str], *words: str) -> None:
    """Exit status 1, each of ``words`` in the message, and no Python traceback."""
    assert res.returncode == 1, res.stderr
    assert "Traceback" not in res.stdout + res.stderr
    for word in words:
        assert word in res.stderr, res.stderr


@pytest.fixture
def scale(tmp_path: Path) -> Path:
    path = tmp_path / "scale.gasync"
    path.write_text(SCALE)
    return path


@pytest.fixture
def x_npy(tmp_path: Path) -> tuple[Path, np.ndarray]:
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - np.float32(2.5)
    path = tmp_path / "x.npy"
    np.save(path, x)
    return path, x


def test_json_has_buffers_shared_signals_stats() -> None:
    res = gasync_run(SAMPLES / "async_double.gasync", "--backend", "sim", "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert set(out) == {"buffers", "shared", "signals", "stats"}
    assert out["buffers"] == {"out": [42]}
    assert out["stats"]["backend"] == "sim"
    assert "backend sim" in res.stderr


NON_FINITE = """
buffer x: f32[2] = iota;
buffer o: f32[2, 2] = zeros;
shared top: f64 = 0.0;
task main {
    o[0, 0] = 1.0 / x[0];
    o[0, 1] = sqrt(-1.0 - x[0]);
    o[1, 0] = -1.0 / x[0];
    o[1, 1] = x[1];
    top.store(-1.0 / (x[0] as f64));
}
"""


def _strict(constant: str) -> None:
    raise AssertionError(f"not JSON: {constant}")


def test_json_writes_nan_and_infinities_as_strings(tmp_path: Path) -> None:
    path = tmp_path / "nonfinite.gasync"
    path.write_text(NON_FINITE)
    res = gasync_run(path, "--backend", "sim", "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout, parse_constant=_strict)  # no bare NaN or Infinity tokens
    assert out["buffers"]["o"] == [["Infinity", "NaN"], ["-Infinity", 1.0]]
    assert out["buffers"]["x"] == [0.0, 1.0]
    assert out["shared"]["top"] == "-Infinity"


def test_input_and_output(scale: Path, x_npy: tuple[Path, np.ndarray], tmp_path: Path) -> None:
    path, x = x_npy
    saved = tmp_path / "y.npy"
    res = gasync_run(scale, "--backend", "sim", "--input", f"x={path}", "--output", f"y={saved}", "--json")
    assert res.returncode == 0, res.stderr
    y = np.load(saved)
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, x * np.float32(2) + np.float32(1))
    np.testing.assert_array_equal(np.asarray(json.loads(res.stdout)["buffers"]["y"], np.float32), y)


def test_output_is_written_at_exactly_its_path(scale: Path, x_npy: tuple[Path, np.ndarray], tmp_path: Path) -> None:
    # np.save given a name adds '.npy' to one without it: y=/dev/null made /dev/null.npy
    path, x = x_npy
    saved = tmp_path / "y.data"
    res = gasync_run(scale, "--backend", "sim", "--input", f"x={path}", "--output", f"y={saved}", "-q")
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("y")) == ["y.data"]
    np.testing.assert_array_equal(np.load(saved), x * np.float32(2) + np.float32(1))


def test_define_changes_the_result(scale: Path, x_npy: tuple[Path, np.ndarray]) -> None:
    path, _ = x_npy
    res = gasync_run(scale, "--backend", "sim", "--input", f"x={path}", "-D", "K=10", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["buffers"]["n"] == [0, 10, 20, 30]


def test_missing_input_names_the_buffer(scale: Path) -> None:
    res = gasync_run(scale, "--backend", "sim")
    assert res.returncode == 2  # a required option left out: a usage error, at the declaration
    assert "scale.gasync:" in res.stderr.splitlines()[0]
    assert "buffer 'x' is declared '= input' but no --input x=FILE.npy was given" in res.stderr


def test_input_of_the_wrong_shape(scale: Path, tmp_path: Path) -> None:
    path = tmp_path / "bad.npy"
    np.save(path, np.zeros((3, 2), np.float32))
    res = gasync_run(scale, "--backend", "sim", "--input", f"x={path}")
    assert_clean_failure(res, "shape [3, 2] does not match")
    # at the buffer's declaration, with its line (SCALE's line 3)
    assert f"{scale}:3:1: error[E0301]: --input x: shape [3, 2] does not match the declaration f32[2, 3]" in res.stderr
    assert "buffer x: f32[2, 3] = input;" in res.stderr


def test_input_of_the_wrong_dtype(scale: Path, tmp_path: Path) -> None:
    path = tmp_path / "bad.npy"
    np.save(path, np.zeros((2, 3), np.float64))
    assert_clean_failure(gasync_run(scale, "--backend", "sim", "--input", f"x={path}"), "dtype float64")


def test_input_for_an_unknown_buffer(scale: Path, x_npy: tuple[Path, np.ndarray]) -> None:
    path, _ = x_npy
    res = gasync_run(scale, "--backend", "sim", "--input", f"x={path}", "--input", f"nope={path}")
    assert res.returncode == 2
    assert "--input nope: the program has no buffer named 'nope' (it has x, y, n)" in res.stderr


def test_timeout_stops_a_program_that_never_ends(tmp_path: Path) -> None:
    path = tmp_path / "forever.gasync"
    path.write_text(FOREVER)
    start = time.monotonic()
    res = gasync_run(path, "--backend", "sim", "--timeout", "2s", timeout=60)
    elapsed = time.monotonic() - start
    assert res.returncode != 0
    assert "Traceback" not in res.stdout + res.stderr
    assert "timeout" in res.stderr
    assert elapsed < 2 + 30  # the run's bound plus the simulator's start-up grace


@pytest.mark.skipif(gpu_present(), reason="a CUDA GPU is present here")
def test_backend_cuda_without_a_gpu() -> None:
    assert_clean_failure(gasync_run(SAMPLES / "async_double.gasync", "--backend", "cuda"), "no CUDA GPU")


def test_summary_names_every_buffer(scale: Path, x_npy: tuple[Path, np.ndarray]) -> None:
    path, _ = x_npy
    res = gasync_run(scale, "--backend", "sim", "--input", f"x={path}")
    assert res.returncode == 0, res.stderr
    assert "buffers" in res.stdout and "stats" in res.stdout
    rows = [line.split("│")[1].strip() for line in res.stdout.splitlines() if line.count("│") >= 6]
    assert {"x", "y", "n"} <= set(rows), res.stdout
    # the stats table: the run's times, each a number (cli/summary.py STATS)
    stats = dict(
        (cells[1].strip(), cells[2].strip()) for line in res.stdout.splitlines() if len(cells := line.split("│")) == 4
    )
    for key in ("kernel_ms", "span_ms", "device_ms", "launch_ms"):
        assert float(stats[key]) > 0, (key, res.stdout)
    assert float(stats["device_ms"]) <= float(stats["span_ms"]) <= float(stats["kernel_ms"]), res.stdout


def test_a_simulated_run_that_sleeps_says_how_its_clock_differs(tmp_path: Path) -> None:
    sleeper = tmp_path / "sleeper.gasync"
    sleeper.write_text("buffer o: i32[1] = zeros;\ntask main { sleep(1_000).await; o[0] = 1; }\n")
    plain = tmp_path / "plain.gasync"
    plain.write_text("buffer o: i32[1] = zeros;\ntask main { o[0] = 1; }\n")
    slept = gasync_run(sleeper, "--backend", "sim", "--json")
    assert slept.returncode == 0, slept.stderr
    assert json.loads(slept.stdout)["buffers"]["o"] == [1]
    note = [line for line in slept.stderr.splitlines() if line.startswith("gasync: note: the simulator's clock")]
    assert len(note) == 1 and "sleeps wake late" in note[0]
    quiet = gasync_run(plain, "--backend", "sim", "--json")
    assert quiet.returncode == 0 and "note:" not in quiet.stderr


DEADLOCK = "channel a: i32[1];\nbuffer o: i32[1] = zeros;\n" + (
    "task main { let v = a.recv().await; o[0] = v; }\ntask late after main { a.send(1).await; }\n"
)
WAITS = "signal stop;\nbuffer o: i32[1] = zeros;\ntask main { stop.wait().await; o[0] = 7; }\n"


def test_json_of_a_deadlock_is_one_error_object(tmp_path: Path) -> None:
    path = tmp_path / "dead.gasync"
    path.write_text(DEADLOCK)
    res = gasync_run(path, "--backend", "sim", "--json", "--timeout", "60s")
    assert res.returncode == 1, res.stderr
    err = json.loads(res.stdout)["error"]
    assert err["kind"] == "deadlock" and err["exit_status"] == 1
    assert err["message"].startswith("deadlock: no task can make progress")
    assert "task main waits on recv from channel a" in err["message"]


def test_a_failed_run_writes_its_trace_up_to_the_stop_and_still_fails(tmp_path: Path) -> None:
    path, trace, report = tmp_path / "dead.gasync", tmp_path / "t.json", tmp_path / "r.html"
    path.write_text(DEADLOCK)
    res = gasync_run(path, "--backend", "sim", "--timeout", "60s", "--trace", trace, "--report", report)
    # (it stops at the first poll: one event, "1 event", not "1 events")
    assert_clean_failure(res, "error[E0303]: deadlock", f"trace of 1 event up to where the run stopped in {trace}")
    assert json.loads(trace.read_text())["traceEvents"]
    assert f"no report in {report}: the run failed" in res.stderr and not report.exists()


def test_json_of_a_timeout_is_one_error_object(tmp_path: Path) -> None:
    path = tmp_path / "forever.gasync"
    path.write_text(FOREVER)
    res = gasync_run(path, "--backend", "sim", "--json", "--timeout", "1s", timeout=60)
    assert res.returncode == 1, res.stderr
    err = json.loads(res.stdout)["error"]
    assert err["kind"] == "timeout" and err["message"].startswith("the run exceeded --timeout 1s")


@pytest.mark.parametrize("delay", ["0", "0ms", "0s", "0us"])
def test_a_zero_delay_signal_in_any_unit(tmp_path: Path, delay: str) -> None:
    path = tmp_path / "waits.gasync"
    path.write_text(WAITS)
    res = gasync_run(path, "--backend", "sim", "--signal", f"stop={delay}", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["buffers"]["o"] == [7]


def test_quiet_prints_no_lines_and_no_table(tmp_path: Path) -> None:
    sleeper = tmp_path / "sleeper.gasync"
    sleeper.write_text("buffer o: i32[1] = zeros;\ntask main { sleep(1_000).await; o[0] = 1; }\n")
    res = gasync_run(sleeper, "--backend", "sim", "-q")
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    res = gasync_run(sleeper, "--backend", "sim", "-q", "--json")
    assert res.returncode == 0 and res.stderr == ""
    assert json.loads(res.stdout)["buffers"]["o"] == [1]


def test_normal_and_verbose_lines(cache_dir: Path) -> None:
    res = gasync_run(SAMPLES / "async_double.gasync", "--backend", "sim")
    lines = res.stderr.splitlines()
    assert lines[0] == f"gasync: running {SAMPLES / 'async_double.gasync'} on backend sim"
    assert len(lines) == 2 and lines[1].startswith("gasync: compiled in ") and lines[1].endswith(" s")
    verbose = gasync_run(SAMPLES / "async_double.gasync", "--backend", "sim", "-v").stderr
    assert f"gasync: parsed and planned {SAMPLES / 'async_double.gasync'} in " in verbose
    assert " lines of Numba-CUDA in " in verbose
    module = next(cache_dir.glob("gasync_*.py"))
    assert f"gasync: module {module} (in the cache)" in verbose  # the first run wrote it
    fresh = gasync_run(SAMPLES / "async_double.gasync", "--backend", "sim", "-v", "-D", "X=1")
    assert fresh.returncode == 2  # (a usage error: the sample has no const X) ...
    assert "gasync: module" not in fresh.stderr  # ... found before generating anything


def test_a_program_from_stdin_runs() -> None:
    res = subprocess.run(
        [sys.executable, "-m", "gasync", "run", "-", "--backend", "sim", "--json"],
        input=(SAMPLES / "async_double.gasync").read_text(), capture_output=True, text=True, timeout=90,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["buffers"] == {"out": [42]}
    assert "gasync: running <stdin> on backend sim" in res.stderr


def test_a_new_module_evicts_the_oldest_beyond_the_bound(cache_dir: Path, tmp_path: Path) -> None:
    first = gasync_run(SAMPLES / "async_double.gasync", "--backend", "sim", "--json")
    assert first.returncode == 0, first.stderr
    [old] = cache_dir.glob("gasync_*.py")
    other = tmp_path / "other.gasync"
    other.write_text("buffer o: i32[1] = zeros;\ntask main { o[0] = 3; }\n")
    res = gasync_run(other, "--backend", "sim", "--json", "--cache-max", "1")
    assert res.returncode == 0, res.stderr
    [kept] = cache_dir.glob("gasync_*.py")
    assert kept != old and str(kept) == json.loads(res.stdout)["stats"]["module"]


def run_on_a_terminal(*args: str | Path, cwd: Path) -> str:
    """What `gasync run` writes to stderr when stderr is a terminal (a pseudo-terminal here)."""
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gasync", "run", *map(str, args)], stdout=subprocess.DEVNULL, stderr=slave,
        env=dict(os.environ, COLUMNS="200", TERM="xterm"), cwd=cwd,
    )  # fmt: skip
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # the child closed its end
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=90)
    os.close(master)
    return b"".join(chunks).decode(errors="replace")


def test_the_spinner_shows_the_phase_on_a_terminal_and_not_with_quiet(tmp_path: Path) -> None:
    path = tmp_path / "forever.gasync"
    path.write_text(FOREVER)
    shown = run_on_a_terminal(path.name, "--backend", "sim", "--timeout", "3s", cwd=tmp_path)
    assert "forever.gasync: running on the simulator (" in shown and " s in all)" in shown
    quiet = run_on_a_terminal(path.name, "--backend", "sim", "--timeout", "3s", "-q", cwd=tmp_path)
    assert "running on the simulator" not in quiet
    assert "the run exceeded --timeout 3s" in quiet


def test_a_host_signal_raced_in_a_select_is_not_announced(tmp_path: Path) -> None:
    # the select's sleep arm ends the wait: the run does not wait for the signal until --timeout
    path = tmp_path / "raced.gasync"
    path.write_text(
        "signal go;\nbuffer o: i32[1] = zeros;\n"
        "task main { select { _ = go.wait() => { o[0] = 1; } _ = sleep(1000) => { o[0] = 2; } } }\n"
    )
    res = gasync_run(path, "--backend", "sim", "--timeout", "60s", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["buffers"]["o"] == [2]
    assert "warning" not in res.stderr


def test_a_signal_only_the_host_sets_without_signal_is_announced_before_the_run() -> None:
    res = gasync_run(SAMPLES / "counter.gasync", "--backend", "sim", "--timeout", "1s")
    assert res.returncode == 1  # the timeout
    assert res.stderr.splitlines()[0] == (
        "gasync: warning: no task sets signal 'stop', so only the host can (--signal stop=DELAY), and this"
        " run does not: task ticker will wait for it (the run ends in a deadlock report once nothing else"
        " can run, else at --timeout 1s)"
    )
    given = gasync_run(SAMPLES / "counter.gasync", "--backend", "sim", "--signal", "stop=20ms")
    assert given.returncode == 0, given.stderr
    assert "warning" not in given.stderr


def test_a_task_that_reads_a_signal_once_is_not_said_to_wait_for_it(tmp_path: Path) -> None:
    path = tmp_path / "once.gasync"
    path.write_text("signal stop;\nbuffer o: i32[1] = zeros;\ntask t { if stop.is_set() { o[0] = 1; } }\n")
    res = gasync_run(path, "--backend", "sim", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["buffers"]["o"] == [0]
    assert "warning" not in res.stderr


@pytest.mark.parametrize("executor", ["queue", "spin"])
def test_a_signal_set_at_launch_is_set_at_the_first_poll(tmp_path: Path, executor: str) -> None:
    path = tmp_path / "zero.gasync"
    path.write_text(
        "signal stop;\nbuffer o: i32[2] = zeros;\n"
        "task t { if stop.is_set() { o[0] = 1; } stop.wait().await; o[1] = 1; }\n"
    )
    res = gasync_run(path, "--backend", "sim", "--json", "--signal", "stop=0", "--executor", executor)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["buffers"]["o"] == [1, 1] and doc["signals"] == {"stop": True}


def test_the_spin_executor_says_what_each_task_waits_on_at_its_deadline(tmp_path: Path) -> None:
    # the spin executor keeps no wait states, so it cannot see a deadlock: it stops at the
    # deadline (30 s where no --timeout is given), naming what each started task waits on
    path = tmp_path / "stuck.gasync"
    path.write_text(
        "channel c: i32[1];\nchannel d: i32[1];\nbuffer out: i32[2] = zeros;\n"
        "async fn helper() -> i32 { return d.recv().await; }\n"
        "task a for i in 0..2 { c.send(i).await; c.send(i).await; }\n"
        "task b { out[0] = c.recv().await; out[1] = helper().await; d.send(1).await; }\n"
        "task z after b { out[0] = 5; }\n"
    )
    res = gasync_run(path, "--backend", "sim", "--executor", "spin", "--timeout", "2s", "-q")
    assert res.returncode == 1
    lines = res.stderr.splitlines()
    assert lines[:4] == [
        f"{path}: error[E0304]: the run exceeded --timeout 2s; unfinished tasks:",
        "  task a[1] waits on send on channel c (full)",
        "  task b waits on recv from channel d",
        "  task z not started: it runs after b",
    ]
    assert lines[4].startswith("  = note: the spin executor cannot tell a deadlock from a wait")
    assert "was still running" not in res.stderr


def running_child(cmd: list[str], tmp_path: Path) -> tuple[subprocess.Popen[str], int]:
    """``gasync run`` of a program that never ends, started as a shell starts a background job
    (its own process group, SIGINT ignored), once its simulator worker runs the kernel: the
    process and the worker's id."""
    import signal

    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN), env=dict(os.environ),
    )  # fmt: skip
    assert proc.stderr is not None
    assert "on backend sim" in proc.stderr.readline()
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    for _ in range(300):
        kids = children.read_text().split()
        if kids:
            break
        time.sleep(0.1)
    time.sleep(3)  # the worker's start-up and the compile: the kernel spins by now
    assert proc.poll() is None
    return proc, int(kids[0])


@pytest.mark.parametrize("to_group", [True, False], ids=["process group", "process"])
def test_ctrl_c_stops_a_simulated_run_and_its_worker(tmp_path: Path, to_group: bool) -> None:
    import signal

    path = tmp_path / "spin.gasync"
    path.write_text("shared c: u64 = 0;\ntask main { loop { c.fetch_add(1); yield_now().await; } }\n")
    cmd = [sys.executable, "-m", "gasync", "run", str(path), "--backend", "sim", "--json", "--timeout", "40s"]
    proc, worker = running_child(cmd, tmp_path)
    t0 = time.monotonic()
    if to_group:
        os.killpg(proc.pid, signal.SIGINT)
    else:
        os.kill(proc.pid, signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert time.monotonic() - t0 < 10  # not the 40 s of --timeout, nor for ever
    assert proc.returncode == 130, err
    assert err.endswith("gasync: interrupted\n") and "Traceback" not in err
    assert json.loads(out)["error"] == {"kind": "interrupted", "message": "interrupted", "exit_status": 130}
    for _ in range(50):  # the worker was killed, not left to spin
        if not Path(f"/proc/{worker}").exists() or "Z" in Path(f"/proc/{worker}/stat").read_text().split()[2]:
            break
        time.sleep(0.1)
    else:
        os.kill(worker, signal.SIGKILL)
        raise AssertionError("the simulator worker outlived the interrupted run")


def test_trace_events_without_a_trace_is_said_to_do_nothing() -> None:
    res = gasync_run(SAMPLES / "async_double.gasync", "--backend", "sim", "--trace-events", "100")
    assert res.returncode == 0, res.stderr
    assert res.stderr.splitlines()[0] == (
        "gasync: warning: --trace-events 100: this run records no trace (give --trace, --schedule or --report)"
    )
