"""suite.unchecked: the program a benchmark's ``<key>_unchecked`` figure runs (bounds checks off)."""

from __future__ import annotations

from suite import SAME_CODE, checks_note, unchecked

import gasync

SOURCE = "buffer at: i64[1] = input;\nbuffer out: i32[4] = zeros;\ntask main { out[at[0]] = 1; }\n"


def test_the_unchecked_twin_is_the_same_plan_generated_without_run_time_checks() -> None:
    prog = gasync.compile_source(SOURCE, "u.gasync")
    off = unchecked(prog)
    assert prog.generated.checked and not off.generated.checked
    assert off.plan is prog.plan and off.generated.trace == prog.generated.trace
    assert "db.inside(" in prog.source and "db." not in off.source  # runtime/devicebounds.py's checks left out


def test_an_unchecked_rows_note_says_how_many_sites_the_checked_program_tests() -> None:
    prog = gasync.compile_source(SOURCE, "u.gasync")
    assert checks_note(prog, unchecked(prog)) == "the checked program tests 1 access sites at run time"
    proven = gasync.compile_source("buffer out: i32[4] = zeros;\ntask t for i in 0..4 { out[i] = 1; }\n", "p.gasync")
    assert checks_note(proven, unchecked(proven)) == SAME_CODE and proven.generated.check_sites == 0
