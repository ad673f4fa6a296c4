"""The concurrent-write check (planner/races.py): which writes race, and the one diagnostic per buffer."""

from __future__ import annotations

import pytest

from gasync.dsl import parse
from gasync.dsl.diagnostics import ErrorGroup, render
from gasync.planner import PlanOptions, plan
from gasync.planner import errors as E


def warnings_of(src: str) -> list[str]:
    p = plan(parse(src, "t.gasync"))
    return [render(w, "t.gasync", src) for w in p.warnings]


def tasks(*bodies: str, buffers: str = "buffer cnt: i32[8] = zeros;\n") -> str:
    """Tasks t0, t1, ... with the given bodies (one statement each, on its own line)."""
    return buffers + "".join(f"task t{k} {{\n    {body}\n}}\n" for k, body in enumerate(bodies))


FOUR_SAME = tasks("cnt[0] = 1;", "cnt[0] = 2;", "cnt[0] = 3;", "cnt[0] = 4;")
FOUR_SAME_TEXT = (
    "t.gasync:12:5: warning: 4 tasks that may run at once write buffer 'cnt': 't0', 't1', 't2' and 't3'\n"
    "    |\n"
    " 12 |     cnt[0] = 4;\n"
    "    |     ^^^^^^^^^^^\n"
    "t.gasync:3:5: note: 't0' writes 'cnt' here\n"
    "   |\n"
    " 3 |     cnt[0] = 1;\n"
    "   |     ^^^^^^^^^^^\n"
    "t.gasync:6:5: note: 't1' writes 'cnt' here\n"
    "   |\n"
    " 6 |     cnt[0] = 2;\n"
    "   |     ^^^^^^^^^^^\n"
    "t.gasync:9:5: note: 't2' writes 'cnt' here\n"
    "   |\n"
    " 9 |     cnt[0] = 3;\n"
    "   |     ^^^^^^^^^^^\n"
    "  = note: order them with 'after', or write with atomic_add and friends"
)


def test_four_tasks_writing_one_element_give_one_warning() -> None:
    assert warnings_of(FOUR_SAME) == [FOUR_SAME_TEXT]


def test_under_strict_it_is_one_error() -> None:
    with pytest.raises(ErrorGroup) as info:
        plan(parse(FOUR_SAME, "t.gasync"), PlanOptions(strict=True))
    (err,) = info.value.errors
    assert type(err) is E.ConcurrentWriteError
    assert render(err, "t.gasync", FOUR_SAME) == FOUR_SAME_TEXT.replace(": warning: ", ": error: ")


def test_many_tasks_are_counted_not_listed() -> None:
    src = tasks(*(f"cnt[3] = {k};" for k in range(7)))
    (text,) = warnings_of(src)
    lines = text.splitlines()
    assert lines[0] == (
        "t.gasync:12:5: warning: 7 tasks that may run at once write buffer 'cnt': 't0', 't1', 't2', 't3' and 3 more"
    )
    assert [line for line in lines if ": note: " in line] == [
        "t.gasync:3:5: note: 't0' writes 'cnt' here",
        "t.gasync:6:5: note: 't1' writes 'cnt' here",
        "t.gasync:9:5: note: 't2' writes 'cnt' here",
    ]


def test_only_the_racing_tasks_are_named_and_each_buffer_once() -> None:
    # t0..t2 write cnt[1]; t3 writes cnt[2] only (disjoint); every task writes all of `all`
    src = tasks(
        "cnt[1] = 1; all[k()] = 1;",
        "cnt[1] = 2; all[k()] = 2;",
        "cnt[1] = 3; all[k()] = 3;",
        "cnt[2] = 4; all[k()] = 4;",
        buffers="buffer cnt: i32[8] = zeros;\nbuffer all: i32[8] = zeros;\nfn k() -> i64 { return 5; }\n",
    )
    heads = [text.splitlines()[0] for text in warnings_of(src)]
    assert heads == [
        "t.gasync:11:5: warning: 3 tasks that may run at once write buffer 'cnt': 't0', 't1' and 't2'",
        "t.gasync:14:17: warning: 4 tasks that may run at once write buffer 'all': 't0', 't1', 't2' and 't3'",
    ]


def test_tasks_ordered_among_themselves_are_named_in_the_pairs_that_race() -> None:
    # t1 runs after t0, so only t0-t2 and t1-t2 race; t3 writes another element
    src = (
        "buffer cnt: i32[8] = zeros;\n"
        "task t0 { cnt[1] = 1; }\n"
        "task t1 after t0 { cnt[1] = 2; }\n"
        "task t2 { let k: i64 = 1; cnt[k] = 3; }\n"
        "task t3 after t2 { cnt[1] = 4; }\n"
    )
    heads = [text.splitlines()[0] for text in warnings_of(src)]
    assert heads == [
        "t.gasync:5:20: warning: tasks that may run at once write buffer 'cnt': 't0' and 't2', 't0' and 't3',"
        " 't1' and 't2', 't1' and 't3'"
    ]


@pytest.mark.parametrize(
    "src",
    [
        # distinct constant indices (consts and constant arithmetic included)
        tasks("cnt[0] = 1;", "cnt[1] = 2;", "cnt[2] = 3;", "cnt[3] = 4;"),
        tasks(
            "cnt[K] = 1;", "cnt[K + 1] = 2;", "cnt[2 * K + 2] = 3;", buffers="const K: i64 = 2;\nbuffer cnt: i32[8];\n"
        ),
        # instance ranges that do not overlap; an offset from the instance variable
        "buffer x: i32[8] = zeros;\ntask a for i in 0..4 { x[i] = 1; }\ntask b for j in 4..8 { x[j] = 2; }\n",
        "buffer x: i32[8] = zeros;\ntask a for i in 0..4 { x[i] = 1; }\ntask b for j in 0..4 { x[j + 4] = 2; }\n",
        # loop variables with constant bounds
        "buffer x: i32[8] = zeros;\ntask a { for k in 0..4 { x[k] = 1; } }\n"
        "task b { parallel for k in 4..8 { x[k] = 2; } }\n",
        # one row each of a 2-D buffer
        "buffer m: f32[2, 4] = zeros;\ntask a { for c in 0..4 { m[0, c] = 1.0; } }\ntask b { m[1, 3] = 2.0; }\n",
        # the same constant through a call from one task, and a different one from another
        "buffer y: f32[8] = zeros;\nfn put3() { y[3] = 1.0; }\ntask a { put3(); }\ntask b { y[4] = 2.0; }\n",
        # instances of one task are assumed disjoint, whatever they write
        "buffer x: i32[8] = zeros;\ntask a for i in 0..4 { x[0] = 1; }\n",
        # a group's variable has its range as a task's instance variable does
        "buffer done: i32[3] = zeros;\ntask a { done[0] = 1; }\n"
        "group gr for g in 0..2 { task b { done[1 + g] = 1; } }\n",
    ],
)
def test_disjoint_writes_do_not_warn(src: str) -> None:
    assert warnings_of(src.replace("buffer cnt: i32[8];", "buffer cnt: i32[8] = zeros;")) == []


@pytest.mark.parametrize(
    ("src", "head"),
    [
        # instances of two different tasks over one range: element 0 is written by both a[0] and b[0]
        (
            "buffer x: i32[8] = zeros;\ntask a for i in 0..4 { x[i] = 1; }\ntask b for j in 0..4 { x[j] = 2; }\n",
            "t.gasync:3:24: warning: tasks 'a' and 'b' may run at once and both write buffer 'x'",
        ),
        # ranges that share one element
        (
            "buffer x: i32[8] = zeros;\ntask a { for k in 0..4 { x[k] = 1; } }\ntask b for j in 3..8 { x[j] = 2; }\n",
            "t.gasync:3:24: warning: tasks 'a' and 'b' may run at once and both write buffer 'x'",
        ),
        # an index that wraps around (2 * 2^30 overflows i32) proves nothing: it reaches 0 here
        (
            "buffer x: i32[8] = zeros;\ntask a for i in 2..3 { x[i * 1073741824 + 1073741824 + 1073741824] = 1; }\n"
            "task b { x[0] = 2; }\n",
            "t.gasync:3:10: warning: tasks 'a' and 'b' may run at once and both write buffer 'x'",
        ),
        # a group's range that reaches the other task's element
        (
            "buffer done: i32[3] = zeros;\ntask a { done[1] = 1; }\n"
            "group gr for g in 0..2 { task b { done[1 + g] = 1; } }\n",
            "t.gasync:3:35: warning: tasks 'a' and 'b' may run at once and both write buffer 'done'",
        ),
        # a loop whose bound is not constant covers the whole buffer
        (
            "buffer x: i32[8] = zeros;\ntask a { let n = x[0] as i64; for k in 0..n { x[k] = 1; } }\n"
            "task b { x[7] = 2; }\n",
            "t.gasync:3:10: warning: tasks 'a' and 'b' may run at once and both write buffer 'x'",
        ),
    ],
)
def test_overlapping_writes_warn(src: str, head: str) -> None:
    (text,) = warnings_of(src)
    assert text.splitlines()[0] == head


def test_tasks_ordered_by_after_do_not_race_with_a_shared_chain() -> None:
    # t1 and t2 both come after t0 but not after each other: only they race
    src = (
        "buffer y: i32[1] = zeros;\ntask t0 { y[0] = 0; }\ntask t1 after t0 { y[0] = 1; }\n"
        "task t2 after t0 { y[0] = 2; }\ntask t3 after t1, t2 { y[0] = 3; }\n"
    )
    (text,) = warnings_of(src)
    assert (
        text.splitlines()[0] == "t.gasync:4:20: warning: tasks 't1' and 't2' may run at once and both write buffer 'y'"
    )
