"""`gasync run` on a real GPU: no Numba warnings on the terminal, the compiled line, the executors bound."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.gpu, pytest.mark.timeout(300)]

# One instance: a one-block grid, for which Numba warns of GPU under-utilisation.
SMALL = "buffer o: i32[1] = zeros;\ntask main { o[0] = 5; }\n"


def gasync_run(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gasync", "run", *args, "--backend", "cuda"], capture_output=True, text=True,
        timeout=240, env=dict(os.environ, GASYNC_CACHE_DIR=str(cache)),
    )  # fmt: skip


def test_no_numba_warning_and_a_cached_second_compile(tmp_path: Path) -> None:
    prog = tmp_path / "small.gasync"
    prog.write_text(SMALL)
    first = gasync_run(str(prog), cache=tmp_path / "cache")
    assert first.returncode == 0, first.stderr
    assert "Warning" not in first.stderr and "\x1b[" not in first.stderr
    compiled = [line for line in first.stderr.splitlines() if line.startswith("gasync: compiled in ")]
    assert len(compiled) == 1 and not compiled[0].endswith("(cached)")
    second = gasync_run(str(prog), cache=tmp_path / "cache")
    assert second.returncode == 0, second.stderr
    lines = second.stderr.splitlines()
    assert any(line.startswith("gasync: compiled in ") and line.endswith(" s (cached)") for line in lines)


def test_more_executors_than_the_gpu_holds_is_a_usage_error(tmp_path: Path) -> None:
    prog = tmp_path / "small.gasync"
    prog.write_text(SMALL)
    res = gasync_run(str(prog), "--executors", "100000", cache=tmp_path / "cache")
    assert res.returncode == 2
    assert "gasync: error: --executors 100000: one launch holds at most " in res.stderr
    assert "threads on each of its" in res.stderr and "SMs at once, one warp each)" in res.stderr
    assert not (tmp_path / "cache").exists()
