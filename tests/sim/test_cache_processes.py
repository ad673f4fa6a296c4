"""``gasync run`` as processes really run it: several at once on one cache, a cache cleared
or evicted under a run, damaged cache files, a full disk, SIGTERM.

Each test is bounded (timeouts on every process) and quick on two cores without a GPU.
"""

from __future__ import annotations

import json
import os
import pickle
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import gasync
from gasync.runtime import cache
from gasync.runtime.errors import RunError
from gasync.runtime.module import module_path

DOUBLE = (
    "buffer out: i32[1] = zeros;\n"
    "async fn double(x: i32) -> i32 {{ return x * 2; }}\n"
    "task main {{ out[0] = double({}).await; }}\n"
)
HANG = "shared n: i64 = 0;\ntask main { while n.load() >= 0 { n.fetch_add(1); } }\n"


def _gasync(*args: str, cache_dir: Path, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "gasync", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, GASYNC_CACHE_DIR=str(cache_dir), **env),
    )  # fmt: skip


def test_runs_at_once_on_one_cache_with_clears_and_evictions_all_succeed(tmp_path: Path) -> None:
    """Four runs of two programs start together on a fresh cache bounded below one module,
    while the cache is cleared again and again: each run's module is written, evicted by the
    other program's run and cleared under it, and every run still gives its own result."""
    files = []
    for k in (21, 22):
        files.append(tmp_path / f"p{k}.gasync")
        files[-1].write_text(DOUBLE.format(k))
    root = tmp_path / "fresh cäche"
    runs = [
        _gasync("run", str(f), "--backend", "sim", "-q", "--json", cache_dir=root, GASYNC_CACHE_MAX="1")
        for f in files + files
    ]
    deadline = time.monotonic() + 60
    while any(p.poll() is None for p in runs) and time.monotonic() < deadline:
        cache.clear(root)
        time.sleep(0.001)
    for p, f in zip(runs, files + files, strict=True):
        out, err = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
        assert p.returncode == 0, err
        assert json.loads(out)["buffers"]["out"] == [2 * int(f.stem[1:])]
    assert not list(root.glob("*.tmp*"))


def test_a_damaged_module_in_the_cache_is_written_anew(tmp_path: Path) -> None:
    """A module of an older gasync, or one a full disk cut short: bytes that are not UTF-8
    failed the run (E0305, a UnicodeDecodeError 'in the simulated kernel')."""
    prog = gasync.compile_source(DOUBLE.format(21), "double.gasync")
    path = module_path(prog.generated, str(tmp_path))
    path.write_bytes(b"\xff\xfe" + prog.generated.source.encode()[:50])
    assert prog.run(backend="sim", cache_dir=str(tmp_path)).buffers["out"][0] == 42
    assert path.read_text() == prog.generated.source


def test_a_cache_folder_that_cannot_be_made_is_an_error_naming_it(tmp_path: Path) -> None:
    """It was 'the simulated kernel failed: NotADirectoryError' (E0305)."""
    (tmp_path / "file").write_text("x")
    prog = gasync.compile_source(DOUBLE.format(21), "double.gasync")
    with pytest.raises(RunError, match="cannot create the cache folder .*file/c: Not a directory") as caught:
        prog.run(backend="sim", cache_dir=str(tmp_path / "file" / "c"))
    assert caught.value.code == "E0309"


def _limit_files(size: int) -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))


def test_a_run_that_cannot_write_its_job_says_so(tmp_path: Path) -> None:
    """A full temporary folder (a file size limit here): it was an internal error (exit 3)."""
    src = tmp_path / "p.gasync"
    src.write_text(DOUBLE.format(21))
    res = subprocess.run(
        [sys.executable, "-m", "gasync", "run", str(src), "--backend", "sim", "-q", "--cache-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=60, preexec_fn=lambda: _limit_files(4096),
    )  # fmt: skip
    assert res.returncode == 1, res.stderr
    assert "cannot write the simulator's job in" in res.stderr
    assert "File too large" in res.stderr and "TMPDIR" in res.stderr


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _workers_of(proc: subprocess.Popen[str], poll_s: float = 0.05) -> list[int]:
    """The run's simulator worker(s), once started (at most 30 s)."""
    deadline = time.monotonic() + 30
    while not (workers := _children(proc.pid)) and time.monotonic() < deadline:
        time.sleep(poll_s)
    return workers


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] not in "ZX"
    except (OSError, IndexError):
        return False


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads child processes from /proc (Linux)")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_ends_a_run_with_a_message_and_kills_the_worker(tmp_path: Path, signum: int) -> None:
    """Python's default ended gasync at once, silently, and the worker ran on for a second or
    two without its parent."""
    src = tmp_path / "hang.gasync"
    src.write_text(HANG)
    proc = _gasync("run", str(src), "--backend", "sim", "-q", cache_dir=tmp_path / "c")
    try:
        workers = _workers_of(proc)
        assert workers, "the simulator worker did not start"
        time.sleep(0.5)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=10)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signum
    assert "gasync: terminated" in err
    assert "Traceback" not in err
    assert not any(_alive(w) for w in workers)


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads child processes from /proc (Linux)")
@pytest.mark.parametrize("delay", [0.5, 0.0])
def test_a_run_killed_with_sigkill_leaves_no_worker_and_no_job_folder(tmp_path: Path, delay: float) -> None:
    """The worker outlived its parent for up to half a second, and left the job's folder in
    the temporary folder for good; the next run on the same cache still succeeds. With no
    delay after the job's folder appears, the parent may die while the worker (started
    beside the compile) is still importing, before it has read the job's line, which stays
    in the pipe: that folder went unremoved (seen on a loaded machine)."""
    src = tmp_path / "hang.gasync"
    src.write_text(HANG)
    temp = tmp_path / "temp"
    temp.mkdir()
    proc = _gasync("run", str(src), "--backend", "sim", "-q", cache_dir=tmp_path / "c", TMPDIR=str(temp))
    try:
        workers = _workers_of(proc)
        assert workers, "the simulator worker did not start"
        until = time.monotonic() + 30
        while not list(temp.iterdir()) and time.monotonic() < until:  # the parent writes the job
            time.sleep(0.01)
        time.sleep(delay)
        assert list(temp.iterdir())
    finally:
        proc.kill()
        proc.communicate(timeout=10)
    deadline = time.monotonic() + 30  # (the worker looks every 0.5 s; a loaded 2-core CI machine is slow)
    while (any(_alive(w) for w in workers) or list(temp.iterdir())) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(w) for w in workers)
    assert list(temp.iterdir()) == []
    src.write_text(DOUBLE.format(21))
    again = _gasync("run", str(src), "--backend", "sim", "-q", "--json", cache_dir=tmp_path / "c")
    out, err = again.communicate(timeout=60)
    assert again.returncode == 0, err
    assert json.loads(out)["buffers"]["out"] == [42]


def test_damaged_numba_cache_files_count_as_absent(tmp_path: Path) -> None:
    """A truncated index or data file of Numba's (a full disk, a killed process) failed every
    run of the program with an unpickling error until the cache was cleared."""
    from numba.cuda.core import caching

    cache.guard_numba_cache()
    files = caching.IndexDataCacheFile(str(tmp_path), "gasync_x.gasync_kernel-10.py311", (1.0, 10))
    files.save("key", b"compiled")
    assert files.load("key") == b"compiled"
    index, data = tmp_path / "gasync_x.gasync_kernel-10.py311.nbi", tmp_path / "gasync_x.gasync_kernel-10.py311.1.nbc"
    whole_data = data.read_bytes()
    data.write_bytes(whole_data[: len(whole_data) // 2])
    assert files.load("key") is None
    index.write_bytes(pickle.dumps(files._version) + b"\x80\x04 truncated")
    assert files.load("key") is None
    files.save("key", b"again")  # a save reads the index first
    assert files.load("key") == b"again"


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads child processes from /proc (Linux)")
def test_a_run_killed_before_its_worker_has_started_leaves_no_worker(tmp_path: Path) -> None:
    """Killed as soon as the worker process exists: the worker read its parent's pid after the
    parent was gone (1, or a subreaper's), watched that one for ever, and never ended."""
    src = tmp_path / "hang.gasync"
    src.write_text(HANG)
    left = []
    for _ in range(3):
        proc = _gasync("run", str(src), "--backend", "sim", "-q", cache_dir=tmp_path / "c")
        workers = _workers_of(proc, poll_s=0.005)
        proc.kill()
        proc.communicate(timeout=10)
        deadline = time.monotonic() + 30
        while any(_alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        left += [w for w in workers if _alive(w)]
        for w in left:
            os.kill(w, signal.SIGKILL)
    assert left == []
