"""Accesses proven in range by the ``if`` around them run unchecked on the simulator and give
NumPy's results; an access its guard does not cover is still checked, and its fault reported.

planner/bounds.py narrows a local's range inside a branch whose condition compares it; which
accesses that proves is in tests/unit/test_bounds_proofs.py, what leaves the module's
BOUNDS_SITES in tests/codegen/test_guarded_bounds.py. Here the indices go past the buffers on
purpose (the tiles' last one, ``idx``'s values), so that a proof that did not hold would read
or write outside a buffer instead of stopping the run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gasync
from gasync.runtime.errors import BoundsError

pytestmark = [pytest.mark.sim, pytest.mark.timeout(180)]

# 7 tiles of 16 cover 112 indices; the guard keeps the 100 of x and y
TILED = """\
const N: i64 = 100; const TILE: i64 = 16; const TILES: i64 = (N + TILE - 1) / TILE;
buffer x: f32[N] = iota; buffer y: f32[N] = zeros;
task t for k in 0..TILES {
    parallel for i in 0..TILE {
        let j = k * TILE + i;
        if j < N { y[j] = 2.0 * x[j]; }
    }
}
"""

# the staged pipeline of bench/programs/b7_staged.gasync, small: 7 tiles dealt round 2 groups
# of 2 loaders in 2 rounds, so the last round's t = 7 is one past the tiles
STAGED = """\
const GROUPS: i64 = 2; const TILE: i64 = 8; const STAGES: i64 = 2; const L: i64 = 2; const C: i64 = 2;
const TILES: i64 = 7; const N: i64 = TILES * TILE;
const ROUNDS: i64 = (TILES + GROUPS * L - 1) / (GROUPS * L);
buffer x: f32[N] = iota; buffer y: f32[N] = zeros;
group pipe for g in 0..GROUPS {
    local buffer stage: f32[STAGES, TILE];
    local buffer tile_of: i64[STAGES];
    local channel full: i64[STAGES];
    local channel free: i64[STAGES];
    local channel done: i64[L];
    task loader for l in 0..L {
        if l == 0 { for s in 0..STAGES { free.send(s).await; } }
        for k in 0..ROUNDS {
            let t: i64 = (k * L + l) * GROUPS + g;
            if t < TILES {
                let s = free.recv().await;
                tile_of[s] = t;
                parallel for i in 0..TILE { stage[s, i] = x[t * TILE + i]; }
                full.send(s).await;
            }
        }
        done.send(l).await;
        if l == 0 {
            for j in 0..L { let _d = done.recv().await; }
            full.close();
        }
    }
    task compute for c in 0..C {
        for await s in full {
            let t = tile_of[s];
            parallel for i in 0..TILE { y[t * TILE + i] = 2.0 * stage[s, i] + 1.0; }
            free.send(s).await;
        }
    }
}
"""

# a gather through indices that may be anything: idx's values go past x at both ends
GATHER = """\
const N: i64 = 8; const M: i64 = 12;
buffer x: f32[N] = iota; buffer idx: i64[M] = input; buffer y: f32[M] = zeros; buffer h: f32[N] = zeros;
task main {
    parallel for i in 0..M {
        let j = idx[i];
        if j < 0 || j >= N { y[i] = -1.0; } else { y[i] = x[j] * 10.0; }
    }
    for r in 0..M {
        let j = idx[r];
        if j < 0 { continue; }
        if j >= N { continue; }
        h[j] = h[j] + 1.0;
    }
}
"""
IDX = np.array([3, -1, 7, 8, 0, -9, 100, 5, 7, 2, 9, -(2**40)], np.int64)


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every run here caches into a temporary directory, never the user's."""
    monkeypatch.setenv("GASYNC_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_the_guarded_tile_runs_unchecked_to_numpys_result() -> None:
    program = gasync.compile_source(TILED, "t.gasync")
    assert "BOUNDS_SITES" not in program.generated.source
    y = program.run(backend="sim", timeout=120).buffers["y"]
    np.testing.assert_array_equal(y, 2.0 * np.arange(100, dtype=np.float32))


def test_the_staged_pipeline_reads_only_the_tiles_its_guard_lets_through() -> None:
    program = gasync.compile_source(STAGED, "s.gasync")
    # no check: x[t * TILE + i] is proven by its guard, y[t * TILE + i] by what tile_of can hold
    assert "BOUNDS_SITES" not in program.generated.source
    y = program.run(backend="sim", timeout=120).buffers["y"]
    np.testing.assert_array_equal(y, 2.0 * np.arange(56, dtype=np.float32) + 1.0)


def test_a_gather_through_guarded_indices_gives_numpys_result() -> None:
    program = gasync.compile_source(GATHER, "g.gasync")
    assert "BOUNDS_SITES" not in program.generated.source
    out = program.run(backend="sim", inputs={"idx": IDX}, timeout=120).buffers
    inside = (IDX >= 0) & (IDX < 8)
    x = np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(out["y"], np.where(inside, x[np.where(inside, IDX, 0)] * 10.0, -1.0))
    np.testing.assert_array_equal(out["h"], np.bincount(IDX[inside], minlength=8).astype(np.float32))


FAULT = """\
const N: i64 = 8;
buffer y: f32[N] = zeros; buffer idx: i64[2] = input;
task main {
    for r in 0..2 {
        let j = idx[r];
        GUARD
    }
}
"""


@pytest.mark.parametrize(
    ("guard", "j", "index"),
    [
        ("if j >= 0 && j < N + 1 { y[j] = 1.0; }", 8, 8),  # the guard lets 8 through
        ("if j >= 0 && j < N { y[0] = 1.0; } else { y[j] = 1.0; }", -1, -1),  # the branch it fails in
        ("if j >= 0 || j < N { y[j] = 1.0; }", 8, 8),  # one side of || is enough to enter
        ("if j >= 0 && j < N { return; }\n        y[j] = 1.0;", -1, -1),  # past a guard that leaves
        ("if j >= 0 && j < N { j = j + 1; y[j] = 1.0; }", 7, 8),  # moved inside the branch
    ],
    ids=["loose", "else", "or", "after", "moved"],
)
def test_an_access_its_guard_does_not_cover_is_still_reported(guard: str, j: int, index: int) -> None:
    program = gasync.compile_source(FAULT.replace("GUARD", guard), "f.gasync")
    assert "BOUNDS_SITES" in program.generated.source
    with pytest.raises(BoundsError) as info:  # the bad index first: "after" returns at a good one
        program.run(backend="sim", inputs={"idx": np.array([j, 3], np.int64)}, timeout=120)
    assert (info.value.buffer, info.value.index, info.value.length) == ("y", index, 8)


def test_a_local_buffer_written_past_its_range_keeps_the_check_that_catches_it() -> None:
    # tile_of[s] = t + 1: the last tile's 7 sends y[56 + i] past y's end; the read of it stays checked
    from gasync.runtime.errors import BoundsError

    program = gasync.compile_source(STAGED.replace("tile_of[s] = t;", "tile_of[s] = t + 1;"), "s.gasync")
    assert "BOUNDS_SITES" in program.generated.source
    with pytest.raises(BoundsError, match="index out of bounds"):
        program.run(backend="sim", timeout=120)
