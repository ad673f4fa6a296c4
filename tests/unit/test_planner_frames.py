"""Frame layouts: nested awaits, overlapping children, join side by side, sizes; states in --emit plan."""

from __future__ import annotations

from gasync.dsl import parse
from gasync.planner import plan
from gasync.planner.model import FrameLayout
from gasync.planner.printer import format_plan

SRC = """
buffer out: i32[4] = zeros;
async fn leaf(x: i32) -> f32 {
    yield_now().await;
    return x as f32;
}
async fn pure(x: i32) -> i32 { return x + 1; }
async fn mid(a: i32) -> i32 {
    let u = leaf(a).await;
    let v = leaf(a + 1).await;
    let (p, q) = join(leaf(1), leaf(2)).await;
    let s = pure(a).await;
    return (u + v + p + q) as i32 + s;
}
task main for i in 0..4 {
    let r = mid(i).await;
    out[i] = r;
}
task blk {
    let z = async {
        let w = leaf(1).await;
        w * 2.0
    }.await;
}
"""
PLAN = plan(parse(SRC, "f.gasync"))


def test_a_leaf_frame_holds_state_result_locals_and_its_one_child() -> None:
    # int: state, x, yield_now's word; float: the f32 result
    assert PLAN.frame("leaf") == FrameLayout("leaf", (("x", 1),), (), ("float", 0), ((1, 2, 1),), 3, 1)
    assert PLAN.frame("leaf").bytes == 32


def test_children_of_different_awaits_overlap_and_a_join_lays_them_side_by_side() -> None:
    fr = PLAN.frame("mid")
    assert fr.result == ("int", 1)
    assert fr.int_slots == (("a", 2), ("$t3", 3), ("s", 4))
    assert [n for n, _ in fr.float_slots] == ["$t1", "u", "$t2", "v", "p", "q"]
    # sites 1, 2 (one leaf each) and 3 (join of two leaves) start at the same offsets;
    # site 4 awaits `pure`, which never suspends, so it needs no child frame
    assert fr.children == ((1, 5, 6), (2, 5, 6), (3, 5, 6))
    # the region is the join: 1 done-mask word + 2 leaf frames of (3, 1) words
    assert (fr.n_int, fr.n_float) == (5 + 7, 6 + 2)
    assert fr.bytes == 160


def test_a_never_suspending_async_fn_has_no_frame() -> None:
    assert "pure" not in {f.fn for f in PLAN.frames}


def test_nested_frames_embed_their_callees() -> None:
    fr = PLAN.frame("main")
    assert fr.children == ((1, 4, 0),)
    assert (fr.n_int, fr.n_float) == (4 + 12, 0 + 8)


def test_an_async_block_keeps_its_locals_in_the_enclosing_frame() -> None:
    fr = PLAN.frame("blk")
    assert [n for n, _ in fr.float_slots] == ["$t1", "$t2", "w", "$t3", "z"]
    # the block's own state word, then the leaf it awaits
    assert fr.children == ((2, 1, 5),)
    assert (fr.n_int, fr.n_float) == (1 + 1 + 3, 5 + 1)


def test_frame_memory_is_frame_bytes_times_instances() -> None:
    assert [(t.name, t.count, PLAN.task_frame_bytes(t)) for t in PLAN.tasks] == [("main", 4, 768), ("blk", 1, 88)]
    assert PLAN.frame_bytes == 856


def test_emit_plan_lists_states_frames_and_memory() -> None:
    text = format_plan(PLAN)
    assert (
        "async fn mid(a: i32) -> i32  at 8:1\n"
        "  states:\n"
        "    0 start\n"
        "    1 await, site 1 at 9:13: leaf(...)\n"
        "    2 await, site 2 at 10:13: leaf(...)\n"
        "    3 await, site 3 at 11:5: join(leaf(...), leaf(...))\n"
        "    - inline, site 4 at 12:13: pure(...) (never suspends)\n"
        "    4 done\n"
        "  frame: 160 bytes (12 int words, 8 float words)\n"
        "    int[0] state\n"
        "    int[1] result\n"
        "    int[2] a\n"
    ) in text
    assert (
        "task blk  at 19:1\n"
        "  states:\n"
        "    0 start\n"
        "    1 await, site 2 at 20:13: async { ... }\n"
        "      async block at 20:13:\n"
        "        0 start\n"
        "        1 await, site 1 at 21:17: leaf(...)\n"
        "        2 done\n"
        "    2 done\n"
    ) in text
    assert "async fn pure(x: i32) -> i32  at 7:1\n  states:\n    0 start\n    1 done\n  frame: none" in text
    assert text.endswith(
        "frame memory (bytes per frame x instances):\n  main: 192 x 4 = 768\n  blk: 88 x 1 = 88\n  total: 856 bytes\n"
    )
    assert (
        "  #0 main for i: i32 in 0..4  instances 0..=3 (4)  after: -\n  #1 blk  instances 4..=4 (1)  after: -\n" in text
    )
    assert "  out: i32[4] = zeros  (16 bytes)\n" in text
