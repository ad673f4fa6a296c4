"""E0221 (a group too big) and E0218 (a constant index out of bounds) name the defines (-D) that
their numbers came from, as E0210 does for a size that is not positive: the numbers are not the
file's (E0221 said only "needs 33 warps", with the file's 'W = 3' in front of the user)."""

from __future__ import annotations

import pytest

from gasync.dsl import parse
from gasync.dsl.diagnostics import ErrorGroup
from gasync.planner import PlanOptions, plan
from gasync.planner import errors as E

SRC = """\
const W: i64 = 3;
const S: i64 = 64;
const C: i64 = 2;
buffer o: i64[W] = zeros;
group gg {
    local buffer st: f64[S];
    local channel c: i64[C];
    task p { c.send(1).await; }
    task w for i in 0..W { let v = c.recv().await; st[i] = 1.0; o[i] = v; }
}
"""


def messages(*defines: tuple[str, str]) -> list[tuple[str, list[str]]]:
    with pytest.raises(ErrorGroup) as info:
        plan(parse(SRC, "t.gasync"), PlanOptions(tuple(defines)))
    assert all(isinstance(e, E.GroupFitError) for e in info.value.errors)
    return [(e.message.split(",")[0], [n.message for n in e.notes[1:]]) for e in info.value.errors]


def test_a_group_too_big_names_the_defines_of_its_warps_and_of_its_shared_memory() -> None:
    assert messages(("W", "32"), ("S", "29100")) == [
        ("group 'gg' needs 33 warps per instance", ["'W' is 32, given by the define '-D W=32'"]),
        (
            "group 'gg' needs 232896 bytes of shared memory per instance (227.5 KiB)",
            ["'S' is 29100, given by the define '-D S=29100'"],
        ),
    ]
    assert messages(("C", "29000")) == [
        (
            "group 'gg' needs 928544 bytes of shared memory per instance (906.8 KiB)",
            ["'C' is 29000, given by the define '-D C=29000'"],
        )
    ]


CONSTANT_INDEX = """\
const N: i64 = 4;
const K: i64 = 3;
buffer o: i32[N] = zeros;
group g {
    local buffer st: i32[2, N];
    task a { o[K] = 1; st[1, 3] = 2; o[0] = st[1, 0]; }
}
"""


N3 = "'N' is 3, given by the define '-D N=3'"
ST = "the length of 'st' (in group 'g') along dimension 2 is 3 but the index is 3"


@pytest.mark.parametrize(
    ("define", "expected"),
    [
        (("N", "3"), [("6:16", "the length of 'o' is 3 but the index is 3", [N3]), ("6:30", ST, [N3])]),
        (
            ("K", "9"),
            [("6:16", "the length of 'o' is 4 but the index is 9", ["'K' is 9, given by the define '-D K=9'"])],
        ),
    ],
)
def test_a_constant_index_out_of_bounds_names_the_defines_of_the_index_and_the_length(
    define: tuple[str, str], expected: list[tuple[str, str, list[str]]]
) -> None:
    with pytest.raises(ErrorGroup) as info:
        plan(parse(CONSTANT_INDEX, "t.gasync"), PlanOptions((define,)))
    got = []
    for e in info.value.errors:
        assert isinstance(e, E.IndexBoundsError)
        got.append(
            (
                f"{e.span.line}:{e.span.column}",
                e.message.removeprefix("index out of bounds: "),
                [n.message for n in e.notes],
            )
        )
    assert got == expected
