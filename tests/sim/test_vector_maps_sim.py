"""Maps that move 16 bytes an access (codegen/vectors.py) on the simulator: offset indices
(``y[b + i]``), rows of a 2-D buffer, and a group's shared-memory stages compute the same
values whether their accesses start 16-byte lines (the 16-byte form runs) or not (the
4- or 8-byte form runs), and which form ran is seen by counting the simulator's moves."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from vector_programs import offset_want, rows_want, staged_want

import gasync
from gasync.codegen import vectors

pytestmark = [pytest.mark.sim, pytest.mark.timeout(300)]
CHILD = Path(__file__).with_name("vector_moves_child.py")


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GASYNC_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def run(
    program: str, defines: dict[str, int], bulk: bool = False, rotate: bool = False
) -> tuple[dict[str, np.ndarray], dict[str, int]]:
    """The buffers of ``program`` (a name in tests/vector_programs.py) run on the simulator in a
    child that counts the 16-byte loads and stores (vector_moves_child.py); ``bulk``: with
    codegen/groups.py's BULK_COPY on; ``rotate``: with codegen/vectors.py's ROTATE on."""
    args = [f"{k}={v}" for k, v in defines.items()] + (["--bulk"] if bulk else []) + (["--rotate"] if rotate else [])
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONWARNINGS="ignore")
    done = subprocess.run(
        [sys.executable, str(CHILD), program, *args], env=env, capture_output=True, text=True, timeout=280, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return {k: np.array(v) for k, v in out["buffers"].items()}, {k: out[k] for k in ("ld", "st", "cp", "bk") if out[k]}


@pytest.mark.parametrize(("off", "vector"), [(0, True), (4, True), (1, False)])
def test_an_offset_index_moves_16_bytes_where_its_range_starts_a_line(off: int, vector: bool) -> None:
    out, moves = run("OFFSET", {"OFF": off})
    np.testing.assert_array_equal(out["y"], offset_want(off))
    # each task's 1,100 iterations: one turn of 32 lanes x 8 loads of 4 elements, then 76 more
    assert moves == ({"ld": 2 * 32 * 8, "st": 2 * 32 * 8} if vector else {})


def test_a_rotated_walk_moves_each_whole_turn_once() -> None:
    # three tasks of 3 whole turns (3 x 1,024 iterations) and 76 more each: every element right,
    # and 16-byte moves for exactly the whole turns (none twice, none left to the plain loop)
    out, moves = run("OFFSET", {"W": 3, "CH": 3 * 1024 + 76}, rotate=True)
    np.testing.assert_array_equal(out["y"], offset_want(0, 3, 3 * 1024 + 76))
    assert moves == {"ld": 3 * 3 * 32 * 8, "st": 3 * 3 * 32 * 8}


@pytest.mark.parametrize(("off", "vector"), [(0, True), (1, False)])
def test_an_offset_index_of_8_byte_integers_moves_two_a_load(off: int, vector: bool) -> None:
    out, moves = run("OFFSET_I64", {"OFF": off})
    np.testing.assert_array_equal(out["y"], offset_want(off).astype(np.int64))
    # a turn of 32 lanes x 8 loads of 2 i64 is 512 iterations: two of each task's 1,100
    assert moves == ({"ld": 2 * 2 * 32 * 8, "st": 2 * 2 * 32 * 8} if vector else {})


@pytest.mark.parametrize("cols", [1100, 1101])
def test_the_rows_of_a_2d_buffer_move_16_bytes_where_each_row_starts_a_line(cols: int) -> None:
    out, moves = run("ROWS", {"C": cols})
    np.testing.assert_array_equal(out["o"], rows_want(cols))
    rows = 3 if cols == 1100 else 2  # 1,101 f64 a row: row 1 starts 8 bytes past a line
    # a turn of 32 lanes x 8 moves of 2 f64 is 512 iterations: two a row, then 76 more
    assert moves == {"ld": rows * 2 * 32 * 8, "st": rows * 2 * 32 * 8}


@pytest.mark.parametrize(
    ("program", "off", "vector"), [("STAGED", 0, True), ("STAGED", 1, False), ("SPEC_STAGED", 0, True)]
)
def test_a_groups_stages_move_16_bytes_through_shared_memory(program: str, off: int, vector: bool) -> None:
    """The loader's copy into a stage goes from global to shared memory without registers (a
    ``cp.async`` each 16 bytes on the GPU), the compute warp's map loads the stage 16 bytes at a
    time; the spec's form (stages named by i32 channels, ``stage[s, i]`` with ``s`` an i32)
    too, its checks hoisted. With the bulk copy engine (BULK_COPY, off: bench/NOTES.md run 55)
    each tile is one bulk copy."""
    out, moves = run(program, {"OFF": off})
    np.testing.assert_array_equal(out["y"], staged_want(off))
    turns = 2 * 3 * 32 * 8  # each of 6 tiles: one vector turn of 32 lanes x 8 moves of 4 f32
    assert moves == ({"cp": turns, "ld": turns, "st": turns} if vector else {})
    if vector and program == "STAGED":
        out, moves = run(program, {"OFF": off}, bulk=True)
        np.testing.assert_array_equal(out["y"], staged_want(off))
        assert moves == {"bk": 2 * 3, "ld": turns, "st": turns}


def test_a_stage_whose_rows_do_not_start_lines_takes_bulk_copies_where_they_do() -> None:
    """BULK_COPY on, tiles of 1,058 f32: stage 0's row starts a line, stage 1's 8 bytes past one.
    Into stage 0 the loader's copy is a bulk copy of 1,056 elements and 2 copied a lane each; into
    stage 1 it is the 4-byte map. The values are the same either way."""
    out, moves = run("STAGED", {"TILE": 1058}, bulk=True)
    np.testing.assert_array_equal(out["y"], staged_want(0, tile=1058))
    # each group's tile 0 lands in stage 0 and its tile 1 in stage 1 (the ring of free stages
    # is sent 0, 1); its tile 2 in whichever the compute task freed first
    assert 2 <= moves["bk"] <= 4
    assert "cp" not in moves


def test_only_maps_whose_every_access_is_consecutive_in_the_variable_are_vector_maps() -> None:
    head = "const N: i64 = 64;\nbuffer x: f32[N] = iota;\nbuffer y: f32[N] = zeros;\nbuffer z: f64[N] = zeros;\n"
    head += "buffer m: f32[4, N] = zeros;\nbuffer at: i64[1] = zeros;\n"

    def vectorised(body: str) -> bool:
        text = head + "task s {\n    let b: i64 = at[0];\n    parallel for i in 1..N - 8 { " + body + " }\n}\n"
        code = gasync.compile_source(text, "v.gasync").generated.source
        return "dv.ld_v" in code or "dv.st_v" in code

    assert vectorised("y[i] = x[i];")
    assert vectorised("y[b + i] = x[i + b] + 1.0;")
    assert vectorised("m[b, i] = x[i];")
    assert vectorised("y[i] = 1.0;")
    assert not vectorised("y[i] = x[i - 1];")  # a subtraction: not an offset form
    assert not vectorised("y[i] = x[i] + x[i + 1];")  # neighbours cannot all start lines
    assert not vectorised("y[i] = x[2 * i];")
    assert not vectorised("y[i] = x[at[0] + i];")  # a load in the offset: another task may write it
    assert not vectorised("m[i, b] = x[i];")  # the variable in an outer dimension
    assert not vectorised("z[i] = x[i] as f64;")  # two element sizes
    assert vectors.VECTOR and vectors.OFFSET


def test_a_tiles_rows_are_copied_16_bytes_at_a_time_and_written_back_so() -> None:
    """tiled_matmul with one 32 x 32 tile: its loader copies the tiles of A and B in one vector
    turn (2 copies x 8 steps a lane: ``cp.async`` on the GPU), and the instance writes C's
    tile in one (8 loads of ``acc`` and 8 stores into ``c`` a lane); C is A @ B."""
    out, moves = run("MATMUL", {"N": 32, "T": 32})
    a = np.random.default_rng(1).random((32, 32)).astype(np.float32)
    b = np.random.default_rng(2).random((32, 32)).astype(np.float32)
    np.testing.assert_allclose(out["c"], a @ b, rtol=1e-5)
    assert moves == {"cp": 2 * 8 * 32, "ld": 8 * 32, "st": 8 * 32}


def test_a_tile_moves_16_bytes_only_where_its_width_is_a_multiple_of_the_move() -> None:
    def vectorised(width: int, elem: str) -> bool:
        text = (
            f"buffer t: {elem}[64 / {width} + 1, {width}] = zeros;\n"
            f"task s {{ parallel for i in 0..64 {{ t[i / {width}, i % {width}] = 1 as {elem}; }} }}\n"
        )
        code = gasync.compile_source(text, "t.gasync").generated.source
        return "dv.st_v" in code

    assert vectorised(8, "f32") and vectorised(4, "f32") and vectorised(2, "f64")
    assert not vectorised(6, "f32") and not vectorised(2, "f32")  # a row would end inside a move
