"""A long range loop of a task or a plain fn runs in chunks of ``dl.STOP_EVERY`` turns, the run's
deadline looked at between chunks (codegen/machine.py ``_chunked_for``; bench/NOTES.md,
twenty-fourth session): its values are those of every turn, whatever the range's length and
bounds, a ``continue`` goes on in its chunk, a ``break`` keeps the look in every turn, and a
loop too long to end still stops at the deadline."""

from __future__ import annotations

import numpy as np
import pytest

import gasync
from gasync.runtime.errors import RunTimeoutError

M = 9223372036854775807  # the largest i64

SOURCE = """
buffer lo: i64[1] = input;
buffer hi: i64[1] = input;
buffer out: i64[4] = zeros;

fn mix(a: i64, b: i64) -> i64 {
    let s: i64 = 0;
    for i in a..b { s = (s ^ i) + 1; }
    return s;
}

task main {
    let a = lo[0];
    let b = hi[0];
    let s: i64 = 0;
    let n: i64 = 0;
    for i in a..b {
        if i % 3 == 0 { continue; }
        s = s ^ i;
        n += 1;
    }
    out[0] = s;
    out[1] = n;
    out[2] = mix(a, b);
}
"""


def expected(a: int, b: int) -> list[int]:
    s = n = m = 0
    for i in range(a, b):
        m = ((m ^ i) + 1 + 2**63) % 2**64 - 2**63  # (wrapping as an i64)
        if int(np.fmod(i, 3)) == 0:  # gasync's % takes the sign of its left side, as C's does
            continue
        s ^= i
        n += 1
    return [s, n, m, 0]


@pytest.mark.parametrize(
    ("a", "b"),
    [(0, 0), (0, 1), (0, 63), (0, 64), (0, 65), (-7, 1000), (5, 3), (M - 100, M), (-M - 1, -M + 130)],
)
def test_a_chunked_range_loop_gives_every_turns_value(a: int, b: int) -> None:
    program = gasync.compile_source(SOURCE, "chunks.gasync")
    text = program.generated.source
    assert "dl.chunk_end(" in text  # the task's loop and the plain fn's, in chunks
    assert "(turns & dl.STOP_MASK)" not in text  # no look in every turn
    inputs = {"lo": np.array([a], np.int64), "hi": np.array([b], np.int64)}
    out = program.run(backend="sim", timeout=60, inputs=inputs).buffers["out"]
    assert out.tolist() == expected(a, b)


def test_a_loop_that_breaks_looks_at_the_deadline_in_every_turn() -> None:
    # (a `break` in a chunk would leave only its chunk: such a loop is not split)
    src = SOURCE.replace("if i % 3 == 0 { continue; }", "if i == 700 { break; }")
    text = gasync.compile_source(src, "chunks.gasync").generated.source
    poll = text[text.index("def poll_main(") :].split("\n\n\n")[0]
    assert "(turns & dl.STOP_MASK)" in poll and "dl.chunk_end(" not in poll


@pytest.mark.timeout(90)
def test_a_tasks_chunked_loop_too_long_to_end_stops_at_the_deadline() -> None:
    program = gasync.compile_source(SOURCE, "chunks.gasync")
    inputs = {"lo": np.array([0], np.int64), "hi": np.array([M], np.int64)}
    with pytest.raises(RunTimeoutError) as info:
        program.run(backend="sim", timeout=2, inputs=inputs)
    assert "the run exceeded its timeout of 2s" in str(info.value)  # its deadline, not the hard limit
