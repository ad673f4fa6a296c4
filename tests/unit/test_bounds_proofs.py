"""Which buffer indices the planner proves in range, so that they need no run-time check (issue 13).

Each case is a task body over ``x: f32[8]``, ``m: f32[4, 8]`` and ``h: i32[8]``; the test lists every
access in it with whether it was proven (planner/bounds.py). What is proven is decision 41 of
docs/language.md; an access left unproven is checked at run time (tests/sim/test_bounds_sim.py).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gasync.dsl import parse
from gasync.planner import ir, plan
from gasync.planner.model import Plan
from gasync.planner.walk import exprs_of, stmts_in, subexprs

HEAD = """const N: i64 = 8;
buffer x: f32[N] = zeros;
buffer m: f32[4, N] = zeros;
buffer h: i32[N] = zeros;
buffer at: i64[N] = iota;
"""


def accesses(p: Plan, name: str) -> list[str]:
    """``buf: proven`` or ``buf: checked`` for each access of function or task ``name``, in order."""
    out = []
    for s in stmts_in(p.function(name).body):
        found: list[ir.Load | ir.Store | ir.BufAtomic] = [s] if isinstance(s, ir.Store) else []
        for e in exprs_of(s):
            found += [x for x in subexprs(e) if isinstance(x, ir.Load | ir.BufAtomic)]
        out += [f"{x.buf}: {'proven' if x.proven else 'checked'}" for x in found]
    return out


def task(body: str, head: str = "task main for w in 0..4") -> list[str]:
    return accesses(plan(parse(f"{HEAD}{head} {{\n{body}\n}}\n", "p.gasync")), "main")


@pytest.mark.parametrize(
    "body",
    [
        "x[3] = 1.0;",  # a constant (one outside is E0218)
        "x[N - 1] = 1.0;",  # consts fold
        "h[w] = 1;",  # the instance variable: 0..4
        "h[w * 2 + 1] = 1;",
        "parallel for i in 0..N { x[i] = 2.0; }",
        "bulk for i in 0..N { x[i] = 2.0; }",
        "for i in 0..N { x[i] = 2.0; }",
        "parallel for i in 1..N { x[i - 1] = 2.0; }",  # affine offsets inside
        "parallel for i in 0..N - 1 { x[i + 1] = 2.0; }",
        "parallel for i in (w as i64) * 2..(w as i64 + 1) * 2 { x[i] = 1.0; }",  # a slice per instance
        "for r in 0..4 { parallel for c in 0..N { m[r, c] = 1.0; } }",  # 2-D, per dimension
        "let k: i64 = w as i64 + 1; h[k] = 1;",  # a local assigned once
        "parallel for i in 0..N { atomic_add(h[i], 1); }",  # atomics
        "let s: f32 = parallel for i in 0..N reduce sum { x[i] }; x[w] = s;",  # a reduction's body and target
        "parallel for i in 0..N * 4 { h[i % N] = 1; }",  # %, & and / by divisors that exclude 0
        "parallel for i in 0..N * 4 { h[i & (N - 1)] = 1; }",
        "parallel for i in 0..N * 4 { h[i / 4] = 1; }",
        "for r in max(w as i64 - 1, 0)..min(w as i64 + 2, 4) { m[r, 0] = 1.0; }",  # min and max
        "parallel for i in 0..N { x[(i as i32) as i64] = 1.0; }",  # casts that cannot wrap
    ],
)
def test_proven(body: str) -> None:
    found = task(body)
    assert found and all(a.endswith("proven") for a in found), found


@pytest.mark.parametrize(
    "body",
    [
        "parallel for i in 0..N { x[i + 1] = 2.0; }",  # one past the end
        "parallel for i in 0..N { x[i - 1] = 2.0; }",  # one before the start
        "h[w + 5] = 1;",
        "h[at[w]] = 1;",  # a value read from a buffer
        "let k: i64 = 0; k = w as i64; h[k] = 1;",  # a local assigned twice
        "let k: i64 = 1; k += 1; h[k] = 1;",
        "for r in 0..N { m[r, 0] = 1.0; }",  # inside along one dimension only
        "parallel for i in 0..N { h[i / (w as i64)] = 1; }",  # a divisor that may be 0
        "parallel for i in 0..N { atomic_add(h[i + 1], 1); }",
        "let s: i32 = 0; for i in 0..N { h[(i as i32 * 1000000000) as i64 % N] = 1; }",  # would wrap
    ],
)
def test_checked(body: str) -> None:
    found = task(body)
    assert any(a.endswith("checked") for a in found), found


def test_a_parameter_is_unknown_and_a_caller_does_not_help() -> None:
    p = plan(parse(f"{HEAD}fn put(k: i64) {{ x[k] = 1.0; }}\ntask main {{ put(2); }}\n", "p.gasync"))
    assert accesses(p, "put") == ["x: checked"]


def test_each_access_of_one_statement_is_judged_on_its_own() -> None:
    assert task("parallel for i in 0..N { x[i] = x[i + 1] + x[i - 0]; }") == [
        "x: proven",
        "x: checked",
        "x: proven",
    ]


SENDER = "channel c: i64[2];\ntask loader {\n    for t in 0..N / 2 { c.send(t).await; }\n    c.close();\n}\n"


def test_a_channel_carries_the_range_of_every_value_sent_on_it() -> None:
    body = "for await t in c {\n    parallel for i in t * 2..(t + 1) * 2 { x[i] = 1.0; }\n}"
    assert task(body, SENDER + "task main") == ["x: proven"]
    assert task("let t = c.recv().await; x[t * 2 + 1] = 1.0;", SENDER + "task main") == ["x: proven"]
    assert task("select { t = c.recv() => { x[t] = 1.0; } }", SENDER + "task main") == ["x: proven"]


def test_one_send_without_a_range_leaves_the_channel_unknown() -> None:
    sender = SENDER.replace("c.close();", "c.send(at[0]).await;\n    c.close();")
    assert task("for await t in c { x[t] = 1.0; }", sender + "task main") == ["x: checked"]


def test_a_range_travels_through_a_chain_of_channels() -> None:
    src = (
        f"{HEAD}channel d: i64[2];\n{SENDER}"
        "task relay {\n    for await t in c { d.send(t + 4).await; }\n    d.close();\n}\n"
        "task main {\n    for await u in d { x[u] = 1.0; h[u + 1] = 1; }\n}\n"
    )
    assert accesses(plan(parse(src, "p.gasync")), "main") == ["x: proven", "h: checked"]


def test_a_loop_variable_that_is_reassigned_is_not_trusted() -> None:
    body = "for await t in c {\n    t = t + 8;\n    x[t] = 1.0;\n}"
    assert task(body, SENDER + "task main") == ["x: checked"]


# the language spec's group: stages go round two local channels, each value sent on one
# received from the other, seeded by a loop over 0..2
STAGES = """group pipe for g in 0..4 {
    local buffer stage: f32[2, N];
    local buffer tile_of: i64[2];
    local channel full: i32[2];
    local channel free: i32[2];
    task loader {
        for s in 0..2 { free.send(s).await; }
        for k in 0..4 {
            let s = free.recv().await;
            tile_of[s] = (g as i64) * 4 + (k as i64);
            parallel for i in 0..N { stage[s, i] = 1.0; }
            full.send(s).await;
        }
        full.close();
    }
    task main {
        for await s in full {
            let t = tile_of[s];
            parallel for i in 0..N { h[g] = 1; x[i] = stage[s, i]; }
            free.send(STEP).await;
        }
    }
}
"""


def group_task(step: str, name: str = "main") -> list[str]:
    return accesses(plan(parse(HEAD + STAGES.replace("STEP", step), "p.gasync")), name)


def test_values_that_go_round_a_cycle_of_channels_keep_the_range_they_started_with() -> None:
    """``free`` gives the stage that is sent on ``full``, ``full`` the one sent back on ``free``:
    every value either channel carries is one of the two stages, so ``stage[s, i]`` and
    ``tile_of[s]`` need no check, and neither does ``h[g]`` (the group's variable: 0..4)."""
    assert group_task("s") == ["pipe.tile_of: proven", "h: proven", "x: proven", "pipe.stage: proven"]
    assert group_task("s", "loader") == ["pipe.tile_of: proven", "pipe.stage: proven"]


def test_values_that_grow_round_a_cycle_stay_checked() -> None:
    """``free.send(s + 1)``: each turn the range grows, it never settles, so nothing received
    from either channel is trusted."""
    assert group_task("s + 1") == ["pipe.tile_of: checked", "h: proven", "x: proven", "pipe.stage: checked"]
    assert group_task("s + 1", "loader") == ["pipe.tile_of: checked", "pipe.stage: checked"]


# ---- ranges narrowed by the conditions of enclosing ifs ------------------------------------
# ``j`` is read from a buffer (no range of its own) unless the case gives it one; only a guard
# around the access (or one that leaves before it) can prove it.
GATHER = "let j = at[w];\n"


@pytest.mark.parametrize(
    "body",
    [
        "if j >= 0 && j < N { x[j] = 1.0; }",  # both ends, from nothing known
        "if 0 <= j && N > j { x[j] = 1.0; }",  # the variable on the right
        "if j >= 0 && j <= N - 1 { x[j] = 1.0; }",
        "if j > -1 { if j < N { x[j] = 1.0; } }",  # nested ifs
        "if j < 0 || j >= N { h[0] = 1; } else { x[j] = 1.0; }",  # else: both sides of || failed
        "if !(j < 0) && !(j >= N) { x[j] = 1.0; }",
        "if j == 3 { x[j] = 1.0; }",
        "if j < 0 || j >= N { return; }\nx[j] = 1.0;",  # a guard that leaves: what follows
        "if j >= 0 { h[0] = 1; } else { return; }\nif j >= N { return; }\nx[j] = 1.0;",  # two such
        "if j >= 0 && j < N && x[j] > 0.0 { h[j] = 1; }",  # the right of && runs past the left
        "if j < 0 || j >= N || x[j] > 0.0 { h[0] = 1; }",  # the right of || runs where it failed
        "if j >= 0 && j < 2 { let b = j * 4; parallel for i in 0..4 { x[b + i] = 1.0; } }",
        "while j >= 0 && j < N { x[j] = 1.0; break; }",
    ],
)
def test_a_guard_narrows_a_local_assigned_once(body: str) -> None:
    found = task(GATHER + body)
    assert found[0] == "at: proven" and all(a.endswith("proven") for a in found), found


@pytest.mark.parametrize(
    "body",
    [
        # the guarded tile: j = k * 4 + i runs to 11 (k in 0..3), the guard cuts it at N
        "for k in 0..3 { parallel for i in 0..4 { let j = k * 4 + i; if j < N { x[j] = 2.0; } } }",
        # t < 2 gives t at most 1, so t * 4 + i (i in 0..4) at most 7 = N - 1
        "for k in 0..3 { let t = k * 2 + (w as i64) % 2; if t < 2 { parallel for i in 0..4 { x[t * 4 + i] = 1.0; } } }",
        "for r in 0..16 { if r < N { x[r] = 1.0; } }",  # a loop variable
        "for r in 0..16 { if r >= N { continue; } x[r] = 1.0; }",
        "for r in 0..16 { if r >= N { break; } x[r] = 1.0; }",
        "for r in 0..16 { if r >= N { if w > 1 { break; } else { continue; } } x[r] = 1.0; }",
    ],
)
def test_a_guard_narrows_a_range_already_known(body: str) -> None:
    found = task(body)
    assert found and all(a.endswith("proven") for a in found), found


@pytest.mark.parametrize(
    "body",
    [
        "for k in 0..3 { parallel for i in 0..4 { let j = k * 4 + i; x[j] = 2.0; } }",
        "for k in 0..3 { let t = k * 2 + (w as i64) % 2; parallel for i in 0..4 { x[t * 4 + i] = 1.0; } }",
        "for r in 0..16 { x[r] = 1.0; }",
    ],
)
def test_without_their_guards_those_stay_checked(body: str) -> None:
    assert task(body) == ["x: checked"]


def test_a_guard_narrows_the_instance_variable_and_a_parameter_never_assigned() -> None:
    assert task("if w < 8 { h[w] = 1; }", "task main for w in 0..16") == ["h: proven"]
    put = "fn put(k: i64) { if k >= 0 && k < N { x[k] = 1.0; } }\ntask main { put(2); }\n"
    p = plan(parse(HEAD + put, "p.gasync"))
    assert accesses(p, "put") == ["x: proven"]


@pytest.mark.parametrize(
    "body",
    [
        "if j >= 0 && j < N { j = j + 1; x[j] = 1.0; }",  # assigned again inside the branch
        "if j >= 0 && j < N { for r in 0..2 { j += 1; } x[j] = 1.0; }",  # by a loop inside it
        "if j >= 0 && j < N { h[0] = 1; } else { x[j] = 1.0; }",  # the else of what holds
        "if j >= 0 || j < N { x[j] = 1.0; }",  # one side of || may fail
        "if j >= 0 && j < N + 1 { x[j] = 1.0; }",  # a guard that does not cover the buffer
        "if j >= 0 && j != N { x[j] = 1.0; }",
        "if j >= 0 && j < N { h[0] = 1; }\nx[j] = 1.0;",  # after the branch
        "if j < 0 { h[0] = 1; }\nif j >= N { h[1] = 1; }\nx[j] = 1.0;",  # branches that fall through
        "if j >= 0 && j < N { return; }\nx[j] = 1.0;",  # past it: !(a && b) says neither
        "if j >= 0 || x[j] > 0.0 { h[0] = 1; }",  # the right of || runs where the left failed
        "if j < N && j >= 0 && w < 2 { h[0] = 1; } else { x[j] = 1.0; }",
    ],
)
def test_a_guard_that_does_not_hold_there_leaves_the_access_checked(body: str) -> None:
    found = task(GATHER + body)
    assert "x: checked" in found, found


def test_a_local_assigned_in_a_loop_keeps_its_checks() -> None:
    """``while j < N`` holds where the body starts, but the body moves ``j``: a local assigned
    twice is never narrowed."""
    assert task("let j: i64 = 0;\nwhile j >= 0 && j < N { j += 1; x[j] = 1.0; }") == ["x: checked"]
    assert task("let j: i64 = 0;\nwhile j >= 0 && j < N { x[j] = 1.0; j += 1; }") == ["x: checked"]


# ---- a property: a narrowed proof holds for every value that reaches the access -------------
# Random conditions on j (comparisons with small constants, either side, under !, && and ||);
# whatever is proven in a branch must hold for every j from -20 to 30 (past every constant, so
# every way the condition can go) that takes the branch, checked by evaluating it in Python.
PY_OPS = {"&&": "and", "||": "or"}


def conditions() -> st.SearchStrategy[tuple[str, str]]:
    """A condition as gasync text and as Python text, both over ``j``."""
    const = st.integers(-3, 11).map(str)
    op = st.sampled_from(["<", "<=", ">", ">=", "==", "!="])
    compare = st.tuples(op, const, st.booleans()).map(
        lambda t: (f"j {t[0]} {t[1]}", f"j {t[0]} {t[1]}") if t[2] else (f"{t[1]} {t[0]} j", f"{t[1]} {t[0]} j")
    )

    def extend(inner: st.SearchStrategy[tuple[str, str]]) -> st.SearchStrategy[tuple[str, str]]:
        both = st.tuples(inner, st.sampled_from(["&&", "||"]), inner).map(
            lambda t: (f"({t[0][0]} {t[1]} {t[2][0]})", f"({t[0][1]} {PY_OPS[t[1]]} {t[2][1]})")
        )
        return both | inner.map(lambda c: (f"!({c[0]})", f"(not {c[1]})"))

    return st.recursive(compare, extend, max_leaves=5)


@settings(max_examples=300, deadline=None, database=None)
@given(conditions())
def test_what_a_guard_proves_holds_for_every_value_that_passes_it(cond: tuple[str, str]) -> None:
    text, python = cond
    body = (
        f"if {text} {{ x[j] = 1.0; }} else {{ h[j] = 1; }}\n"
        f"if {text} && x[j] > 0.0 {{ h[0] = 2; }}\n"
        f"if {text} {{ return; }}\nm[0, j] = 1.0;"
    )
    found = task(GATHER + body)
    assert [a.split(":")[0] for a in found] == ["at", "x", "h", "x", "h", "m"]
    passes = [j for j in range(-20, 31) if eval(python, {"j": j})]  # noqa: S307 (our own text)
    fails = [j for j in range(-20, 31) if j not in passes]
    inside = range(8)
    for k, reached in ((1, passes), (2, fails), (3, passes), (5, fails)):
        assert found[k].endswith("checked") or all(j in inside for j in reached), (text, found)


LOCAL_INDEX = """
group pipe for g in 0..4 {
    local buffer slot_of: i64[2];
    local channel full: i64[2];
    task loader {
        for k in 0..6 {
            let t: i64 = (g as i64) * 6 + (k as i64);
            if t < N { WRITE }
            full.send(k % 2).await;
        }
        full.close();
    }
    task main {
        for await s in full {
            let t = slot_of[s];
            x[t] = 1.0;
        }
    }
}
"""


def local_index(write: str) -> list[str]:
    return accesses(plan(parse(HEAD + LOCAL_INDEX.replace("WRITE", write), "p.gasync")), "main")


def test_a_local_buffer_every_write_of_which_has_a_range_gives_its_loads_that_range() -> None:
    """``slot_of`` is written only where ``t < N`` (the condition narrows ``t``, 0..24, to 0..8)
    and starts as zeros: every value a load of it gives lies in 0..8, so ``x[t]`` is proven."""
    assert local_index("slot_of[k % 2] = t;") == ["pipe.slot_of: proven", "x: proven"]


@pytest.mark.parametrize(
    "write",
    [
        "slot_of[k % 2] = t + 1;",  # one value past x's end (t + 1 reaches N)
        "slot_of[k % 2] += t;",  # a compound assignment: its value grows with the buffer's
        "slot_of[k % 2] = at[k];",  # a value loaded from a buffer the host may fill
        "atomic_add(slot_of[k % 2], 1);",  # an atomic writes what it adds up
    ],
)
def test_a_local_buffer_with_a_write_out_of_range_or_unknown_is_not_trusted(write: str) -> None:
    assert local_index(write) == ["pipe.slot_of: proven", "x: checked"]
