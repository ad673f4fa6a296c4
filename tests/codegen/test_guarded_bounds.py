"""Accesses proven in range by the conditions around them (planner/bounds.py): their rows leave
the generated module's ``BOUNDS_SITES``, and only theirs. The runs are in
tests/sim/test_guarded_bounds_sim.py; which accesses are proven, case by case, in
tests/unit/test_bounds_proofs.py."""

from __future__ import annotations

import re
from pathlib import Path

import gasync
from gasync.codegen import generate

ROOT = Path(__file__).resolve().parents[2]

# the guarded tile: 16 tiles of 64 cover 1,024 indices, the guard keeps those under N = 1,000
TILED = """\
const N: i64 = 1000; const TILE: i64 = 64; const TILES: i64 = (N + TILE - 1) / TILE;
buffer x: f32[N] = iota; buffer y: f32[N] = zeros;
task t for k in 0..TILES {
    parallel for i in 0..TILE {
        let j = k * TILE + i;
        GUARD { y[j] = 2.0 * x[j]; }
    }
}
"""


def sites(source: str) -> list[str]:
    """The buffer of each row of the module's BOUNDS_SITES, in order ([] where it has none)."""
    table = re.search(r"^BOUNDS_SITES = \($(.*?)^\)$", source, re.M | re.S)
    return re.findall(r"^    \('([^']+)', ", table.group(1), re.M) if table else []


def tiled(guard: str) -> list[str]:
    return sites(gasync.compile_source(TILED.replace("GUARD", guard), "t.gasync").generated.source)


def test_the_guarded_tile_has_no_check_left() -> None:
    assert tiled("if true") == ["x", "y"]  # j runs to 1,023 where nothing guards it
    assert tiled("if j < N") == []
    assert tiled("if N > j") == []
    assert tiled("if j <= N - 1") == []


def test_a_guard_that_does_not_cover_the_access_leaves_it_checked() -> None:
    assert tiled("if j < N + 1") == ["x", "y"]
    assert tiled("if j < N || k < 2") == ["x", "y"]
    assert tiled("if j >= N {} else if true") == []  # the else of j >= N: j < N
    assert tiled("if j < N {} else") == ["x", "y"]  # the else of the guard that would cover it


def test_a_local_assigned_again_in_the_branch_stays_checked() -> None:
    src = TILED.replace("let j = ", "let j: i64 = 0;\n        j = ").replace("GUARD", "if j < N")
    assert sites(gasync.compile_source(src, "t.gasync").generated.source) == ["x", "y"]


def test_the_staged_loaders_read_of_x_is_proven_by_its_guard() -> None:
    """b7_staged deals TILES tiles round GROUPS groups of L loaders; where GROUPS * L does not
    divide TILES (132 groups, one an SM of an H100), the last round's ``t`` passes TILES and only
    ``if t < TILES`` keeps ``x[t * TILE + i]`` inside x. The compute tasks' ``y[t * TILE + i]``
    reads its ``t`` from the local buffer ``tile_of``, written only under that guard: proven too
    (decision 41); without the guard both are checked."""
    path = ROOT / "bench" / "programs" / "b7_staged.gasync"
    for runs in (0, 1):  # tiles dealt round the groups, or in a run to each
        program = gasync.compile(path, defines={"GROUPS": 132, "RUNS": runs})
        assert sites(program.generated.source) == []
    text = path.read_text()
    guard = "if t < TILES && (RUNS == 0 || r < PER) {"
    assert guard in text
    unguarded = text.replace(guard, "if true {")
    assert sites(gasync.compile_source(unguarded, "b7.gasync", defines={"GROUPS": 132}).generated.source) == ["x", "y"]


def test_with_checks_off_the_module_is_the_same_where_every_access_is_proven() -> None:
    program = gasync.compile_source(TILED.replace("GUARD", "if j < N"), "t.gasync")
    assert generate(program.plan, checked=False).source == program.generated.source
