"""Programs whose maps move 16 bytes an access (codegen/vectors.py), with what each must
compute: the simulator's tests (tests/sim/test_vector_maps_sim.py) and the GPU's
(tests/gpu/test_vector_maps_gpu.py) run the same ones. Each is run at an offset that starts
its accesses on a 16-byte line and at one that does not (the loop's 4- or 8-byte form), and
each range is longer than one vector turn (32 lanes x 8 moves of 16 bytes) with a remainder."""

from __future__ import annotations

from pathlib import Path

import numpy as np

# an offset index in one dimension: y[b + i] with b captured; x is iota
OFFSET = """
const W: i64 = 2;
const CH: i64 = 1100;
const OFF: i64 = 0;
buffer x: f32[W * CH + 8] = iota;
buffer y: f32[W * CH + 8] = zeros;
task s for w in 0..W {
    let b: i64 = w * CH + OFF;
    parallel for i in 0..CH { y[b + i] = 2.0 * x[b + i] + 1.0; }
}
"""


# the same of 8-byte integers: two elements a 16-byte move
OFFSET_I64 = OFFSET.replace("f32", "i64").replace("2.0 * x[b + i] + 1.0", "2 * x[b + i] + 1")


def offset_want(off: int, w: int = 2, ch: int = 1100) -> np.ndarray:
    x = np.arange(w * ch + 8, dtype=np.float32)
    y = np.zeros_like(x)
    y[off : off + w * ch] = 2.0 * x[off : off + w * ch] + 1.0
    return y


# the rows of a 2-D buffer of 8-byte elements: o[r, c]; with C = 1101 the rows start 8
# bytes apart from a 16-byte line in turn, so row 1 takes the 8-byte form and rows 0, 2 the
# 16-byte one
ROWS = """
const R: i64 = 3;
const C: i64 = 1100;
buffer m: f64[R, C] = iota;
buffer o: f64[R, C] = zeros;
task s for r in 0..R {
    parallel for c in 0..C { o[r, c] = m[r, c] * 3.0 - 1.0; }
}
"""


def rows_want(c: int) -> np.ndarray:
    m = np.arange(3 * c, dtype=np.float64).reshape(3, c)
    return m * 3.0 - 1.0


# B7's shape, small: a loader warp stages tiles of x into shared memory (``stage[s, i] =
# x[t * TILE + i]``), a compute warp turns each into y (``y[t * TILE + i] = ... stage[s, i]``);
# at OFF = 1 every tile of x and y starts 4 bytes past a 16-byte line
STAGED = """
const GROUPS: i64 = 2;
const TILES: i64 = 3;
const TILE: i64 = 1056;
const OFF: i64 = 0;
const STAGES: i64 = 2;
buffer x: f32[GROUPS * TILES * TILE + 8] = iota;
buffer y: f32[GROUPS * TILES * TILE + 8] = zeros;
group pipe for g in 0..GROUPS {
    local buffer stage: f32[STAGES, TILE];
    local buffer tile_of: i64[STAGES];
    local channel full: i64[STAGES];
    local channel free: i64[STAGES];
    task loader {
        for s in 0..STAGES { free.send(s).await; }
        for k in 0..TILES {
            let s = free.recv().await;
            let t: i64 = g * TILES + k;
            tile_of[s] = t;
            parallel for i in 0..TILE { stage[s, i] = x[t * TILE + OFF + i]; }
            full.send(s).await;
        }
        full.close();
    }
    task compute {
        for await s in full {
            let t = tile_of[s];
            parallel for i in 0..TILE { y[t * TILE + OFF + i] = 2.0 * stage[s, i] + 1.0; }
            free.send(s).await;
        }
    }
}
"""

# STAGED as the language spec writes its group: stages named by i32 channels
SPEC_STAGED = (
    STAGED.replace("channel full: i64[STAGES]", "channel full: i32[2]")
    .replace("channel free: i64[STAGES]", "channel free: i32[2]")
    .replace("for s in 0..STAGES", "for s in 0..2")
)


def staged_want(off: int, groups: int = 2, tiles: int = 3, tile: int = 1056) -> np.ndarray:
    return offset_want(off, groups * tiles, tile)


# the tiled matrix product sample: its loader copies two tiles of rows T wide (``a[row0 + e / T,
# k0 + e % T]``) into shared memory, its last map writes C's tile back the same way
MATMUL = (Path(__file__).resolve().parents[1] / "samples" / "tiled_matmul.gasync").read_text()
