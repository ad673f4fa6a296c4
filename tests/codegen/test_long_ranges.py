"""A range loop that may be too long to end looks at the run's deadline as a `while` does
(decision 24, codegen/bounds.py ``long_range``); one whose length the compiler knows to be
short does not, so the hot loops of the samples are unchanged. The runs are in
tests/sim/test_async_sim.py (test_timeout_stops_a_loop_outside_any_poll)."""

from __future__ import annotations

import pytest

import gasync

LOOK = "dl.overdue("


def par_body(source: str) -> str:
    text = gasync.compile_source(source, "t.gasync").generated.source
    return text[text.index("def par_1(") :].split("\n\n\n")[0]


@pytest.mark.parametrize(
    ("head", "long"),
    [
        ("parallel for i in 0..N", False),
        ("parallel for i in u * W..(u + 1) * W", False),  # W apart, whatever u is
        ("parallel for i in 1..N + 1", False),
        ("parallel for i in 0..n", True),  # n from a buffer: up to 2^63
        ("parallel for i in u..u * W", True),
        ("parallel for i in 0..BIG", True),  # 2^33
    ],
)
def test_a_parallel_loop_looks_at_the_deadline_only_where_its_range_may_be_long(head: str, long: bool) -> None:
    src = (
        "const N: i64 = 4096; const W: i64 = 64; const BIG: i64 = 8589934592;\nbuffer y: i64[1] = zeros;\n"
        "task w for t in 0..4 {\n    let n = y[0];\n    let u = t as i64;\n"
        f"    {head} {{ atomic_add(y[0], i); }}\n}}\n"
    )
    assert (LOOK in par_body(src)) == long


def test_a_sequential_for_over_a_run_time_range_looks_at_the_deadline() -> None:
    src = "buffer y: i64[2] = zeros;\nfn f(n: i64) -> i64 { let s: i64 = 0; for i in 0..n { s += i; } return s; }\n"
    text = gasync.compile_source(src + "task main { y[0] = f(y[1]); }\n", "t.gasync").generated.source
    assert LOOK in text[text.index("def fn_f(") :].split("\n\n\n")[0]
    text = gasync.compile_source(src.replace("0..n", "0..64") + "task main { y[0] = f(3); }\n", "t.gasync")
    assert LOOK not in text.generated.source.split("def fn_f(")[1].split("\n\n\n")[0]
