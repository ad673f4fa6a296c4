"""The cache's files as processes and disks really behave: writers at once, damaged and
foreign files, folders that cannot be used, leftovers of killed processes.

Each case once broke a run (or left the cache damaged for every later run); the
processes at once, and signals, are in tests/sim/test_cache_processes.py.
"""

from __future__ import annotations

import errno
import os
import pickle
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gasync.runtime import cache, module

SOURCE = "# a generated module\nVALUE = 42\n" * 200
NAME = f"gasync_{'a' * 20}_{'b' * 12}.py"


def test_threads_writing_one_module_at_once_all_succeed(tmp_path: Path) -> None:
    """Two threads of one process named their temporary file alike (``.tmp<pid>``): one moved
    the other's into place half written, or found its own gone (FileNotFoundError)."""
    path = tmp_path / "c" / NAME
    start = threading.Barrier(8)
    failures: list[BaseException] = []

    def writer() -> None:
        start.wait()
        try:
            for _ in range(20):
                module.write(path, SOURCE)
                assert path.read_text() == SOURCE
        except BaseException as exc:  # noqa: BLE001  (reported below)
            failures.append(exc)

    threads = [threading.Thread(target=writer) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert failures == []
    assert sorted(p.name for p in path.parent.iterdir()) == [NAME]  # no temporary file left


def test_a_damaged_module_is_replaced_and_a_whole_one_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / NAME
    for damaged in (b"\xff\xfe not UTF-8", SOURCE[:100].encode(), b""):
        path.write_bytes(damaged)
        assert module.write(path, SOURCE) is True
        assert path.read_text() == SOURCE
    os.utime(path, (1000.0, 1000.0))
    assert module.write(path, SOURCE) is False
    assert path.stat().st_mtime == 1000.0  # (Numba's cache is keyed by this time stamp)


def test_a_cache_folder_under_a_file_is_an_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(cache.CacheError) as caught:
        module.write(tmp_path / "file" / "c" / NAME, SOURCE)
    assert f"cannot create the cache folder {tmp_path / 'file' / 'c'}" in str(caught.value)
    assert "--cache-dir" in getattr(caught.value, "cli_message", "")


def test_a_full_disk_is_an_error_and_leaves_no_half_written_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(self: Path, data: bytes) -> int:
        with open(self, "wb") as f:
            f.write(data[:10])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Path, "write_bytes", full)
    with pytest.raises(cache.CacheError, match="cannot write to the cache folder .*: No space left on device"):
        module.write(tmp_path / NAME, SOURCE)
    assert list(tmp_path.iterdir()) == []


def test_a_temporary_file_cleared_while_it_is_written_is_written_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``gasync cache clear`` removes temporary modules too, maybe another run's."""
    replace = os.replace
    calls: list[object] = []

    def cleared_once(src: object, dst: object) -> None:
        calls.append(src)
        if len(calls) == 1:
            os.unlink(str(src))
        replace(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", cleared_once)
    assert module.write(tmp_path / NAME, SOURCE) is True
    assert (tmp_path / NAME).read_text() == SOURCE
    assert len(calls) == 2


def test_eviction_removes_what_no_run_can_use(tmp_path: Path) -> None:
    """Numba's files of a module evicted or cleared while its kernel compiled, and a temporary
    module of a process killed while it wrote it, were never removed but by ``cache clear``."""
    live = tmp_path / NAME
    live.write_text(SOURCE)
    pycache = tmp_path / "__pycache__"
    pycache.mkdir()
    orphan_stem = f"gasync_{'c' * 20}_{'b' * 12}"
    orphans = [pycache / f"{orphan_stem}.gasync_kernel-10.py311.{s}" for s in ("nbi", "1.nbc")]
    kept = [pycache / f"{live.stem}.gasync_kernel-10.py311.{s}" for s in ("nbi", "1.nbc")]
    for f in orphans + kept:
        f.write_bytes(b"#")
    stale, fresh = tmp_path / f"{orphan_stem}.tmp123", tmp_path / f"{live.stem}.tmp456"
    stale.write_text("half")
    fresh.write_text("being written")
    old = time.time() - cache.STALE_S - 60
    os.utime(stale, (old, old))
    cache.evict(tmp_path, cache.DEFAULT_MAX_BYTES, keep=live)
    assert not any(f.exists() for f in [*orphans, stale])
    assert all(f.exists() for f in [live, *kept, fresh])


def test_without_a_home_folder_the_cache_is_in_the_temporary_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ``$HOME`` and no password entry (a container's anonymous user): Path.home() raises."""

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    root = cache.default_dir()
    assert root.parent == Path(__import__("tempfile").gettempdir())
    assert root.name == f"gasync-{os.getuid()}"


def test_a_cache_dir_whose_name_is_too_long_is_a_usage_error(tmp_path: Path) -> None:
    res = subprocess.run(
        [sys.executable, "-m", "gasync", "cache", "info", "--cache-dir", str(tmp_path / ("n" * 300))],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert res.returncode == 2, res.stderr
    assert "File name too long" in res.stderr
    assert "internal error" not in res.stderr


def test_cache_info_and_clear_of_a_folder_not_made_yet(tmp_path: Path) -> None:
    root = tmp_path / "not" / "yet"
    assert cache.info(root).programs == 0
    assert cache.clear(root) == (0, 0)
    assert cache.evict(root, 0) == []
    assert not root.exists()


def test_pickled_cache_errors_keep_their_command_line_words(tmp_path: Path) -> None:
    """The simulator's worker sends the error back pickled."""
    err = cache.cache_error(tmp_path, "create", OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)))
    back = pickle.loads(pickle.dumps(err))
    assert isinstance(back, cache.CacheError)
    assert back.code == "E0309"
    assert getattr(back, "cli_message", "") == getattr(err, "cli_message", None)
