"""A flagged channel's value halves live in its slot's sequence line (runtime/state.py,
``HALF_LO``, ``HALF_HI``; bench/NOTES.md, runs 50-53): the wait in place loads them from that
line beside the sequence, in words of their own, and values that need both halves, negative ones
included, come out whole."""

from __future__ import annotations

from pathlib import Path

import gasync
from gasync.runtime import state

PINGPONG = (Path(__file__).parents[2] / "bench" / "programs" / "b2_pingpong.gasync").read_text()


def test_the_halves_have_words_of_their_own_in_the_sequence_line() -> None:
    # word 0 is the sequence, word 1 free_first's no-op exchange (runtime/devicechan.py)
    assert {state.HALF_LO, state.HALF_HI}.isdisjoint({0, 1})
    assert state.HALF_LO != state.HALF_HI and max(state.HALF_LO, state.HALF_HI) < state.SLOT_WORDS


def test_the_wait_loads_the_halves_from_the_sequence_line() -> None:
    text = gasync.compile_source(PINGPONG, "<halves>").generated.source
    wait = text[text.index("def await_in_place(") :].split("\n\n\n")[0]
    assert "dl.ld(G.chan.CSEQ, (c, (ticket % cap) * dl.SLOT_WORDS + dl.HALF_LO))" in wait
    assert "dl.ld(G.chan.CSEQ, (c, (ticket % cap) * dl.SLOT_WORDS + dl.HALF_HI))" in wait


WIDE = """
buffer out: i64[4] = zeros;
channel c: i64[1];
task a { for k in 0..4 { c.send((k - 2) * 6000000000 - 1).await; } }
task b { for k in 0..4 { out[k] = c.recv().await; } }
"""


def test_values_of_both_halves_come_out_whole() -> None:
    program = gasync.compile_source(WIDE, "<halves>")
    assert "# FLAGGED" in program.generated.source  # (c's one sender orders nothing: flagged halves)
    out = program.run(backend="sim", timeout=60).buffers["out"]
    assert out.tolist() == [(k - 2) * 6000000000 - 1 for k in range(4)]
