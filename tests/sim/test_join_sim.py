"""Joins and selects of every kind of future on the simulator, with exact results:
joins of futures that each run a ``bulk for`` (each job kept apart), joins inside
joins and inside select arms (each of the nine kinds of future in them), and a
select whose losing arm had posted a bulk job (the select waits for its chunks)."""

from __future__ import annotations

import numpy as np
import pytest

import gasync

pytestmark = [pytest.mark.sim, pytest.mark.timeout(120)]

RUN_TIMEOUT_S = 60.0


def run(source: str, **options: object) -> gasync.Result:
    prog = gasync.compile_source(source, "<join>", {})
    return prog.run(backend="sim", timeout=RUN_TIMEOUT_S, **options)  # type: ignore[arg-type]


# --- joins of bulk loops: issue 10's silent wrong result -------------------------------------------------------

TWO_BULK_FNS = """
buffer a: i32[8] = zeros;
buffer b: i32[8] = zeros;
async fn fa() { bulk for i in 0..8 { a[i] = 1; } }
async fn fb() { bulk for i in 0..8 { b[i] = 2; } }
task main { join(fa(), fb()).await; }
"""


@pytest.mark.parametrize(("executor", "executors"), [("queue", 1), ("queue", 3), ("spin", 2)])
def test_join_of_two_bulk_loops_runs_both(executor: str, executors: int) -> None:
    res = run(TWO_BULK_FNS, executor=executor, executors=executors)
    assert res.buffers["a"].tolist() == [1] * 8
    assert res.buffers["b"].tolist() == [2] * 8


BULK_SHAPES = """
buffer a: i32[300] = zeros;
buffer b: i32[300] = zeros;
buffer c: i32[300] = zeros;
buffer h: i64[600] = zeros;
async fn fa() { bulk for i in 0..300 { a[i] = 1; } }
async fn fb() { bulk for i in 0..300 { b[i] = 2; } }
async fn fc() { bulk for i in 0..300 { c[i] = 3; } }
async fn half(lo: i64, hi: i64, v: i64) { bulk for i in lo..hi { h[i] = v * i; } }
task three { join(fa(), join(fb(), fc())).await; }
task halves { join(half(0, 300, 5), half(300, 600, 7)).await; }
"""


def test_joins_of_three_bulk_loops_and_of_one_fn_on_two_halves() -> None:
    res = run(BULK_SHAPES, executors=3)
    assert res.buffers["a"].tolist() == [1] * 300
    assert res.buffers["b"].tolist() == [2] * 300
    assert res.buffers["c"].tolist() == [3] * 300
    i = np.arange(600)
    assert res.buffers["h"].tolist() == np.where(i < 300, 5 * i, 7 * i).tolist()


LOSING_BULK_ARM = """
buffer a: i32[2048] = zeros;
buffer b: i32[2048] = zeros;
buffer out: i32[2] = zeros;
signal go;
async fn fa() { bulk for i in 0..2048 { a[i] = a[i] + 1; } }
async fn fb() { bulk for i in 0..2048 { b[i] = b[i] + 2; } }
task setter { go.set(); }
task main {
    for k in 0..3 {
        select {
            _ = fa() => { out[0] += 1; }
            _ = go.wait() => { out[1] += 1; }
        }
        fb().await;
    }
}
"""


def test_a_select_waits_for_the_bulk_job_of_an_arm_that_lost() -> None:
    res = run(LOSING_BULK_ARM, executors=3)
    wins = res.buffers["out"].tolist()
    assert sum(wins) == 3
    # every bulk job that was posted ran to its end, and none was overwritten by a later one
    assert set(res.buffers["b"].tolist()) == {6}
    assert len(set(res.buffers["a"].tolist())) == 1
    assert res.buffers["a"][0] >= wins[0]


# --- joins inside joins and inside select arms, with each kind of future ---------------------------------------

KINDS = {  # kind -> (future, what it adds to out[k])
    "susp": ("fs({k}, 10)", 10),
    "plain": ("fp({k}, 20)", 20),
    "yield": ("yield_now()", 0),
    "sleep": ("sleep(1000)", 0),
    "send": ("c.send(5)", 0),
    "recv": ("d.recv()", 0),
    "wait": ("go.wait()", 0),
    "join": ("join(fs({k}, 30), yield_now())", 30),
    "block": ("async {{ fs({k}, 40).await; }}", 40),
}
NESTED_HEAD = """
buffer out: i64[{n}] = zeros;
buffer got: i32[2] = zeros;
signal go;
signal never;
channel c: i32[4];
channel d: i32[4];
async fn fs(slot: i64, x: i64) -> i64 {{ yield_now().await; atomic_add(out[slot], x); return x; }}
async fn fp(slot: i64, x: i64) -> i64 {{ atomic_add(out[slot], x); return x; }}
task setter {{ go.set(); }}
task feed {{ d.send(7).await; d.send(8).await; }}
task drain after nested_send, arm_send {{ got[0] = c.recv().await + c.recv().await; }}
task rest after nested_recv, arm_recv {{ got[1] = 1; }}
"""


def nested_program() -> tuple[str, list[int]]:
    """Per kind, a task that joins it inside a join, and one that joins it in a select arm."""
    lines, want = [], []
    for k, (kind, (fut, adds)) in enumerate(KINDS.items()):
        f = fut.format(k=2 * k)
        lines.append(
            f"task nested_{kind} {{ join(fs({2 * k}, 1), join({f}, fs({2 * k}, 2))).await; out[{2 * k}] += 100; }}"
        )
        g = fut.format(k=2 * k + 1)
        lines.append(
            f"task arm_{kind} {{ select {{ _ = never.wait() => {{ out[{2 * k + 1}] += 1000; }}"
            f" _ = join({g}, fs({2 * k + 1}, 2)) => {{ out[{2 * k + 1}] += 100; }} }} }}"
        )
        want += [103 + adds, 102 + adds]
    return NESTED_HEAD.format(n=2 * len(KINDS)) + "\n".join(lines) + "\n", want


def test_every_kind_of_future_in_a_nested_join_and_in_a_select_arm() -> None:
    source, want = nested_program()
    res = run(source, executors=3)
    assert res.buffers["out"].tolist() == want
    assert res.buffers["got"].tolist() == [10, 1]  # both sends arrived; both receives took one value each


def test_a_nested_join_binds_its_outer_values() -> None:
    res = run(
        """
        buffer out: i32[3] = zeros;
        async fn f(x: i32) -> i32 { yield_now().await; out[x] = x * 10; return x; }
        task main { let (a, _) = join(f(0), join(f(1), f(2))).await; out[0] = out[0] + a + 5; }
        """
    )
    assert res.buffers["out"].tolist() == [5, 10, 20]
