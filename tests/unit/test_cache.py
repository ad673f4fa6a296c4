"""The compile cache: `gasync cache info|clear` and the bound with oldest-first eviction.

Every test uses a temporary cache directory (GASYNC_CACHE_DIR or a path), never the real one.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from gasync.runtime import cache


def gasync(*args: str, cache_dir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gasync", *args], capture_output=True, text=True, timeout=60,
        env=dict(os.environ, GASYNC_CACHE_DIR=str(cache_dir), GASYNC_LINKED_DIR=f"{cache_dir}-helpers", **env),
    )  # fmt: skip


def fake_program(root: Path, name: str, size: int, mtime: float) -> Path:
    """A module of ``size`` bytes and a Numba index and data file of ``size`` bytes each, named
    as runtime/module.py names them (two digests)."""
    module = root / f"gasync_{hashlib.sha256(name.encode()).hexdigest()[:20]}_{'abc' * 4}.py"
    root.mkdir(parents=True, exist_ok=True)
    module.write_bytes(b"#" * size)
    pycache = root / "__pycache__"
    pycache.mkdir(exist_ok=True)
    for suffix in ("nbi", "1.nbc"):
        (pycache / f"{module.stem}.gasync_kernel-10.py311.{suffix}").write_bytes(b"#" * size)
    os.utime(module, (mtime, mtime))
    return module


def test_info_of_an_empty_cache(tmp_path: Path) -> None:
    res = gasync("cache", "info", cache_dir=tmp_path / "c")
    assert res.returncode == 0, res.stderr
    assert res.stdout == (
        f"cache:    {tmp_path / 'c'} (not created yet)\nprograms: 0\nsize:     0 B of at most 1.0 GiB\n"
        f"helpers:  0 compiled, 0 B in {tmp_path / 'c'}-helpers (gasync's own, for every program)\n"
    )


def test_info_counts_programs_and_bytes(tmp_path: Path) -> None:
    fake_program(tmp_path, "a", 1000, 1.0)
    fake_program(tmp_path, "b", 2000, 2.0)
    (tmp_path / "notes.txt").write_text("not ours")
    res = gasync("cache", "info", "--json", cache_dir=tmp_path, GASYNC_CACHE_MAX="10MB")
    assert res.returncode == 0, res.stderr
    helpers = {"dir": f"{tmp_path}-helpers", "entries": 0, "bytes": 0}
    assert json.loads(res.stdout) == {
        "dir": str(tmp_path), "programs": 2, "bytes": 9000, "max_bytes": 10**7, "helpers": helpers,
    }  # fmt: skip
    text = gasync("cache", "info", cache_dir=tmp_path).stdout
    assert "programs: 2\nsize:     8.8 KiB of at most 1.0 GiB\n" in text


def test_clear_removes_only_gasyncs_files(tmp_path: Path) -> None:
    fake_program(tmp_path, "a", 10, 1.0)
    (tmp_path / "notes.txt").write_text("not ours")
    (tmp_path / "__pycache__" / "other.nbi").write_text("not ours")
    res = gasync("cache", "clear", cache_dir=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stderr == f"removed 1 program (30 B) from {tmp_path}\n"
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        "__pycache__", "__pycache__/other.nbi", "notes.txt",
    ]  # fmt: skip


def test_a_bad_bound_is_a_usage_error(tmp_path: Path) -> None:
    res = gasync("cache", "info", cache_dir=tmp_path, GASYNC_CACHE_MAX="lots")
    assert res.returncode == 2
    assert res.stderr == (
        "gasync: error: Invalid value for '--cache-max' (env var: 'GASYNC_CACHE_MAX'):"
        " expected a size such as 1GB, 500MiB or 2G, found 'lots'\ntry 'gasync cache info --help'\n"
    )


def test_eviction_removes_the_oldest_programs_first(tmp_path: Path) -> None:
    old = fake_program(tmp_path, "old", 100, 1.0)
    mid = fake_program(tmp_path, "mid", 100, 2.0)
    new = fake_program(tmp_path, "new", 100, 3.0)
    assert cache.evict(tmp_path, 650, keep=new) == [old]
    assert [e.module for e in cache.entries(tmp_path)] == [mid, new]
    assert not list((tmp_path / "__pycache__").glob(f"{old.stem}.*"))


def test_eviction_keeps_the_module_just_written(tmp_path: Path) -> None:
    older = fake_program(tmp_path, "older", 100, 5.0)
    just = fake_program(tmp_path, "just", 1000, 1.0)  # an older time stamp, e.g. a clock step
    assert cache.evict(tmp_path, 10, keep=just) == [older]
    assert [e.module for e in cache.entries(tmp_path)] == [just]


def test_within_the_bound_nothing_is_evicted(tmp_path: Path) -> None:
    fake_program(tmp_path, "a", 100, 1.0)
    assert cache.evict(tmp_path, 300) == []
    assert cache.info(tmp_path).programs == 1


def test_a_kernel_is_cached_once_numba_wrote_its_index(tmp_path: Path) -> None:
    module = fake_program(tmp_path, "a", 10, 1.0)
    assert cache.kernel_cached(module)
    bare = tmp_path / f"gasync_{'b' * 20}_{'abc' * 4}.py"
    bare.write_text("")
    assert not cache.kernel_cached(bare)


def test_clear_and_eviction_leave_the_users_gasync_named_files(tmp_path: Path) -> None:
    theirs = ["gasync_helpers.py", "gasync_notes.txt", f"gasync_{'a' * 20}_{'abc' * 4}.py.bak"]
    for name in theirs:
        (tmp_path / name).write_text("the user's")
    fake_program(tmp_path, "a", 10, 1.0)
    (tmp_path / "__pycache__" / "gasync_helpers.cpython-312.pyc").write_text("the user's")
    (tmp_path / f"gasync_{'c' * 20}_{'abc' * 4}.tmp123").write_text("ours: a module half written")
    assert cache.info(tmp_path).programs == 1
    ours = f"gasync_{hashlib.sha256(b'a').hexdigest()[:20]}_{'abc' * 4}.py"
    assert [e.module.name for e in cache.entries(tmp_path)] == [ours]
    assert cache.evict(tmp_path, 0) != []
    res = gasync("cache", "clear", cache_dir=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stderr == f"removed 0 programs (27 B) from {tmp_path}\n"
    left = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    assert left == sorted([*theirs, "__pycache__", "__pycache__/gasync_helpers.cpython-312.pyc"])


def test_the_generated_module_is_named_as_the_cache_knows_it(tmp_path: Path) -> None:
    import gasync
    from gasync.runtime.module import module_path

    prog = gasync.compile_source("task main { }\n", "m.gasync")
    path = module_path(prog.generated, str(tmp_path))
    assert cache.is_module(path.name) and path.parent == tmp_path


def test_an_empty_cache_dir_is_a_usage_error(tmp_path: Path) -> None:
    for args in (["cache", "clear", "--cache-dir", ""], ["cache", "info", "--cache-dir", ""]):
        cmd = [sys.executable, "-m", "gasync", *args]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert res.returncode == 2
        assert res.stderr.startswith(
            "gasync: error: Invalid value for '--cache-dir' (env var: 'GASYNC_CACHE_DIR'):"
            " an empty path names no folder"
        ), res.stderr


def test_compiled_helpers_are_counted_and_cleared_with_the_programs(tmp_path: Path) -> None:
    store = Path(f"{tmp_path}-helpers")  # (the gasync helper above points GASYNC_LINKED_DIR there)
    store.mkdir()
    for name in ("a" * 40, "b" * 40):
        (store / f"{name}.gxl").write_bytes(b"#" * 100)
    (store / "notes.txt").write_text("not ours")
    doc = json.loads(gasync("cache", "info", "--json", cache_dir=tmp_path).stdout)
    assert doc["helpers"] == {"dir": str(store), "entries": 2, "bytes": 200}
    res = gasync("cache", "clear", cache_dir=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stderr == f"removed 0 programs (0 B) from {tmp_path}\nremoved 2 compiled helpers (200 B) from {store}\n"
    assert [p.name for p in store.iterdir()] == ["notes.txt"]
