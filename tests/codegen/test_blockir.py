"""The block IR of poll functions (codegen/blockir.py): its verifier, its tidying, the
liveness over it (codegen/liveness.py), and what that makes of generated polls: only the
locals live at a state are restored and spilled, and a lone await of a suspending async
fn passes its arguments on the callee's first poll instead of through its frame."""

from __future__ import annotations

import re

import pytest
from liveness_programs import CHAIN

import gasync
from gasync.codegen import blockir as bir
from gasync.codegen.liveness import live_at_states


def S(*names: str) -> frozenset[str]:
    return frozenset(names)


def op(*lines: str, uses: frozenset[str] = frozenset(), kills: frozenset[str] = frozenset()) -> bir.Op:
    return bir.Op(tuple(lines), uses, kills)


def test_the_verifier_rejects_a_jump_to_no_block() -> None:
    m = bir.Machine((bir.Block(0, (), bir.Goto(3)),), ())
    with pytest.raises(bir.IRError, match="jumps to block 3, which does not exist"):
        bir.check(m)


def test_the_verifier_rejects_labels_out_of_order_and_unreachable_blocks() -> None:
    swapped = bir.Machine((bir.Block(0, (), bir.Goto(1)), bir.Block(2, (), bir.Finish("1"))), ())
    with pytest.raises(bir.IRError, match="labels run in order"):
        bir.check(swapped)
    orphan = bir.Machine((bir.Block(0, (), bir.Finish("1")), bir.Block(1, (), bir.Finish("1"))), ())
    with pytest.raises(bir.IRError, match="unreachable"):
        bir.check(orphan)


def test_the_verifier_rejects_a_suspend_to_a_state_that_resumes_nowhere() -> None:
    m = bir.Machine((bir.Block(0, (), bir.Suspend(4, 0)),), ((0, 0),))
    with pytest.raises(bir.IRError, match="suspends to state 4, where no block resumes"):
        bir.check(m)
    inside = bir.Machine((bir.Block(0, (bir.Op(("x = 1",), exits=(5,)),), bir.Finish("1")),), ((0, 0),))
    with pytest.raises(bir.IRError, match="state 5"):
        bir.check(inside)


def test_tidy_threads_empty_jumps_drops_dead_blocks_and_numbers_in_order() -> None:
    blocks = {
        0: bir.Block(0, (op("a = 1"),), bir.Goto(7)),
        7: bir.Block(7, (), bir.Goto(9)),  # only jumps on: threaded through
        9: bir.Block(9, (op("b = 2"),), bir.Finish("1")),
        5: bir.Block(5, (op("dead = 3"),), bir.Finish("1")),  # after a return: nothing reaches it
    }
    m = bir.tidy(blocks, [0, 7, 5, 9], {})
    assert [b.ops for b in m.blocks] == [(op("a = 1"),), (op("b = 2"),)]
    assert m.blocks[0].term == bir.Goto(1)


def test_liveness_keeps_what_a_resume_reads_before_it_writes() -> None:
    # 0: x = ..; y = ..  -> 1 (resume of state 1): read x, suspend or go on; 2: y = ..; read y
    blocks = (
        bir.Block(0, (op("x = 1", kills=S("x")), op("y = 1", kills=S("y"))), bir.Goto(1)),
        bir.Block(1, (op("poll(x)", uses=S("x")),), bir.Branch("not rdy", 2, 3)),
        bir.Block(2, (), bir.Suspend(1, 0)),
        bir.Block(3, (op("y = 2", kills=S("y")), op("out = y", uses=S("y"))), bir.Finish("1")),
    )
    live = live_at_states(bir.Machine(blocks, ((0, 0), (1, 1))), S("x", "y"))
    assert live == {0: S(), 1: S("x")}
    # what a return gives is read there too
    returns_y = (*blocks[:3], bir.Block(3, (), bir.Finish("1, y", S("y"))))
    assert live_at_states(bir.Machine(returns_y, ((0, 0), (1, 1))), S("x", "y")) == {0: S(), 1: S("x", "y")}


def poll_text(source: str, fn: str) -> str:
    text = gasync.compile_source(source, "<t>").generated.source
    start = text.index(f"def poll_{fn}(")
    return text[start : text.index("\n\n\n", start)]


def suspend_exit(poll: str) -> str:
    return poll[poll.index("# the suspend exit") :]


def spilled(text: str) -> list[str]:
    """The locals a suspend exit stores into the frame (an i64 one as it is, others cast)."""
    return re.findall(r"FI\[fb_i \+ \d+\] = (?:int64\()?(\w+)\)?$", text, re.M)


def test_only_the_locals_live_at_an_await_are_spilled_and_restored() -> None:
    leaf = poll_text(CHAIN, "leaf")
    # `before` is read after the yield, `x` is not: only `before` crosses it
    assert spilled(suspend_exit(leaf)) == ["v_before"]
    mid = poll_text(CHAIN, "mid")
    assert spilled(suspend_exit(mid)) == ["v_kept"]
    main = poll_text(CHAIN, "main")
    # acc is assigned by the await itself: the loop's bound and counter cross it, acc does not
    spills = spilled(suspend_exit(main))
    assert "v_acc" not in spills and "v_r" in spills


def test_a_lone_await_passes_the_callee_its_arguments_and_gets_its_value_in_registers() -> None:
    mid = poll_text(CHAIN, "mid")
    assert mid.startswith("def poll_mid(inst, w, fb_i, fb_f, G, first, p_x, p_unused):")
    # no frame word is written for the callee before its first poll: its arguments are registers
    call = re.search(r"code, rdy_v = poll_leaf\(inst, w, fb_i \+ \d+, fb_f \+ \d+, G, (first_\d+), (a\d+_0)\)", mid)
    assert call is not None
    # and its value comes back beside the code, in registers: nothing of the callee's frame is read
    after = mid[call.end() : mid.index("# the suspend exit")]
    assert "FI[" not in after and "v_v = t_1" in after
    init = mid[mid.index("# <t>:9:") : mid.index(f"if lbl == {_resume_label(mid)}:")]
    assert "FI[" not in init and f"{call.group(1)} = True" in init
    # the callee's first poll reads no state word and no parameter from its frame
    leaf = poll_text(CHAIN, "leaf")
    first = leaf[leaf.index("if first:") : leaf.index("else:")]
    assert "FI[" not in first and "v_x = p_x" in first


def _resume_label(poll: str) -> str:
    m = re.search(r"elif st == 1:  # resume: await 1\n(?:\s+v_\w+ = .*\n)*\s+lbl = (\d+)", poll)
    assert m is not None
    return m.group(1)


def test_every_block_ends_in_one_terminator_and_nothing_follows_a_return() -> None:
    text = gasync.compile_source(CHAIN, "<t>").generated.source
    lines = text.splitlines()
    for k, line in enumerate(lines[:-1]):
        stripped = line.strip()
        if stripped.startswith(("return", "continue", "break")):
            nxt = lines[k + 1]
            indent = len(line) - len(line.lstrip())
            # the next line is outdented (another branch or block), never more of this one
            assert not nxt.strip() or len(nxt) - len(nxt.lstrip()) < indent, (k, line, nxt)


PARALLEL = """\
const N: i64 = 64;
buffer x: f32[N] = random(1);
buffer y: f32[N] = zeros;
channel c: i32[2];
task producer { for k in 0..3 { c.send(k as i32).await; } c.close(); }
task consumer {
    let scale: f32 = 2.0;
    for await k in c {
        parallel for i in 0..N { let v = x[i] * scale; let w = v + 1.0; y[i] = w + (k as f32); }
    }
}
"""


def test_a_parallel_loops_own_locals_are_neither_spilled_nor_restored() -> None:
    consumer = poll_text(PARALLEL, "consumer")
    # the loop reads `scale` (captured) and `k` (captured): they cross the hand-out; the
    # body's own `v`, `w` and `i` live in the lanes' function only
    spilled = set(re.findall(r"F[IF]\[fb_[if] \+ \d+\] = (?:int64|float64)\((\w+)\)", suspend_exit(consumer)))
    assert {"v_scale", "v_k"} <= spilled
    assert not spilled & {"v_v", "v_w", "v_i"}
    restored = set(re.findall(r"(\w+) = \w+\(F[IF]\[fb_[if] \+ \d+\]\)", consumer.split("while True:")[0]))
    assert not restored & {"v_v", "v_w", "v_i"}


def test_a_forward_jump_at_the_end_of_its_case_falls_through_and_a_backward_one_loops() -> None:
    """The dispatch loop's back edge is taken only by jumps backwards (and by jumps that other code
    of their case follows): LLVM threads a forward edge to its case, never one through a loop's header."""
    from gasync.codegen.render import Lines, dispatch

    m = bir.Machine(
        (
            bir.Block(0, (op("i = 0", "total = 0"),), bir.Goto(1)),
            bir.Block(1, (), bir.Branch("i < n", 2, 3)),
            bir.Block(2, (op("total += i", "i += 1"),), bir.Goto(1)),
            bir.Block(3, (op("total *= 2"),), bir.Branch("total > 100", 4, 5)),
            bir.Block(4, (op("total = 100"),), bir.Goto(6)),
            bir.Block(5, (op("total += 1"),), bir.Goto(6)),
            bir.Block(6, (), bir.Finish("total")),
        ),
        (),
    )
    bir.check(m)
    em = Lines(1)
    dispatch(m, em)
    assert "\n".join(em.out) == "\n".join(
        [
            "    while True:",
            "        if lbl == 0:",
            "            i = 0",
            "            total = 0",
            "            lbl = 1",  # forward, last in its case: no continue
            "        if lbl == 1:",
            "            if i < n:",
            "                total += i",
            "                i += 1",
            "                lbl = 1",
            "                continue",  # backward: round the loop
            "            total *= 2",
            "            if total > 100:",
            "                total = 100",
            "                lbl = 6",  # falls out of the if: the else keeps the other arm from running
            "            else:",
            "                total += 1",
            "                lbl = 6",
            "        if lbl == 6:",
            "            return total",
        ]
    )
    fn = "def f(n):\n    lbl = 0\n" + "\n".join(em.out) + "\n"
    space: dict[str, object] = {}
    exec(compile(fn, "<dispatch>", "exec"), space)  # our own rendered test machine
    f = space["f"]
    assert [f(n) for n in (0, 3, 10, 11)] == [1, 7, 91, 100]
