"""Indices known inside their buffer are rendered unsigned (codegen/exprs.py ``inside``): the
planner's proven accesses and a hoisted map's, whose range is tested once; an access checked at
run time keeps its signed index (the check reads it), and so does one left unproven with
checks off (``--unchecked``: Python's meaning of a negative index, as before)."""

from __future__ import annotations

import sys
from pathlib import Path

import gasync
from gasync.codegen import generate

ROOT = Path(__file__).resolve().parents[2]

SOURCE = """\
buffer x: f32[64] = random(1);
buffer y: f32[64] = zeros;
buffer idx: i64[4] = zeros;
task main {
    parallel for i in 0..64 { y[i] = x[i] * 2.0; }
    let j: i64 = idx[1];
    y[j] = x[j];
}
"""


def lines_with(source: str, text: str) -> list[str]:
    return [line.strip() for line in source.splitlines() if text in line and not line.strip().startswith("#")]


def test_a_proven_index_is_unsigned_and_a_checked_one_is_not() -> None:
    source = gasync.compile_source(SOURCE, "u.gasync").generated.source
    # the map's iteration helper: y[i] and x[i], proven by the loop's range
    assert lines_with(source, "ix_h_0 = ") == ["ix_h_0 = (uint64(v_i),)"]
    assert "val_h_0 = (a_x[uint64(v_i)] * float32(2.0))" in lines_with(source, "val_h_0 = ")
    assert "v_j = G.B_idx[uint64(1)]" in lines_with(source, "v_j = ")  # a literal index: proven
    # y[j] = x[j]: checked at run time, its index signed
    assert lines_with(source, "db.load(G.B_x") == ["val = db.load(G.B_x, (v_j,), G.sched.CTL, 0, inst)"]
    assert "uint64(v_j)" not in source


def test_with_checks_off_an_unproven_index_stays_signed() -> None:
    plan = gasync.compile_source(SOURCE, "u.gasync").plan
    source = generate(plan, checked=False).source
    assert "G.B_y[v_j] = G.B_x[v_j]" in source
    assert "uint64(v_j)" not in source


def test_the_convergence_probes_patches_still_find_their_text() -> None:
    # scripts/converge_probe.py edits the generated module's text: a codegen change that moves
    # it must show here, not in the next GPU session
    sys.path.insert(0, str(ROOT / "scripts"))
    import converge_probe as probe

    program = gasync.compile(ROOT / "samples" / "tiled_matmul.gasync", defines={"N": 256, "T": 32})
    for edits in (*probe.AT.values(), *probe.VARIANTS.values()):
        probe.patched(program, edits)  # raises SystemExit where a text is gone
