"""Property: channels deliver every value exactly once, whatever the shape of the pipeline.

Hypothesis picks producers (how many, how many values each, an optional late
start), the channel's capacity, and consumers that either drain the channel with
``for await`` until it is closed, or take an exact number of values with a
``select`` over two channels, or with a ``join`` of receives. The simulated
kernel must finish (no lost wake leaves a task waiting: that would be reported as
a deadlock) with the sum and count of what was received equal to what was sent.
This covers one-waiter wakes (a value wakes one receiver, a freed slot one
sender, a wake not used is passed on) and the wake-all fallback (a join of two
receives of one channel).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import gasync


@st.composite
def pipelines(draw: st.DrawFn) -> tuple[str, int, int]:
    """(program text, expected total, expected count)."""
    producers = draw(st.integers(1, 4))
    per = draw(st.integers(1, 12))
    cap = draw(st.integers(1, 4))
    late = draw(st.booleans())  # producers start after the consumers wait
    kind = draw(st.sampled_from(["for_await", "select", "join"]))
    n = producers * per
    nap = "sleep(300_000).await; " if late else ""
    lines = ["shared total: i64 = 0;", "shared count: i64 = 0;", f"channel a: i64[{cap}];"]
    if kind == "for_await":
        consumers = draw(st.integers(1, 6))
        lines += [
            f"task p for i in 0..{producers} {{ {nap}for k in 0..{per} {{ a.send((i * 1000 + k) as i64).await; }} }}",
            "task closer after p { a.close(); }",
            f"task c for j in 0..{consumers} {{ for await v in a {{ total.fetch_add(v); count.fetch_add(1); }} }}",
        ]
        values = [i * 1000 + k for i in range(producers) for k in range(per)]
        return "\n".join(lines) + "\n", sum(values), n
    # exact takers: producers alternate channels; every value is taken once
    lines.append(f"channel b: i64[{cap}];")
    lines.append(
        f"task p for i in 0..{producers} {{ {nap}for k in 0..{per} {{"
        f" if (i + k) % 2 == 0 {{ a.send((i * 1000 + k) as i64).await; }}"
        f" else {{ b.send((i * 1000 + k) as i64).await; }} }} }}"
    )
    values = [i * 1000 + k for i in range(producers) for k in range(per)]
    if kind == "select":
        takers = [t for t in range(1, 7) if n % t == 0]
        consumers = draw(st.sampled_from(takers))
        lines.append(
            f"task c for j in 0..{consumers} {{ for t in 0..{n // consumers} {{ select {{"
            " v = a.recv() => { total.fetch_add(v); } v = b.recv() => { total.fetch_add(v); } }"
            " count.fetch_add(1); } }"
        )
        return "\n".join(lines) + "\n", sum(values), n
    # join: each consumer takes pairs, one from each channel
    on_a = sum(1 for i in range(producers) for k in range(per) if (i + k) % 2 == 0)
    on_b = n - on_a
    pairs = min(on_a, on_b)
    lines.append(
        f"task c for j in 0..{pairs} {{ let (x, y) = join(a.recv(), b.recv()).await;"
        " total.fetch_add(x + y); count.fetch_add(2); }"
    )
    # the values left over on the longer channel are taken one by one
    rest, chan = (on_a - pairs, "a") if on_a > on_b else (on_b - pairs, "b")
    if rest:
        lines.append(
            f"task r for j in 0..{rest} {{ let v = {chan}.recv().await; total.fetch_add(v); count.fetch_add(1); }}"
        )
    return "\n".join(lines) + "\n", sum(values), n


@pytest.mark.sim
@pytest.mark.timeout(600)
@settings(
    max_examples=12,
    deadline=None,
    phases=[Phase.generate],  # each example is a simulated kernel: report it whole, don't shrink for minutes
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(case=pipelines(), executors=st.integers(1, 8))
def test_every_value_sent_is_received_once(case: tuple[str, int, int], executors: int) -> None:
    text, total, count = case
    res = gasync.compile_source(text, "<pipeline>").run(backend="sim", timeout=120, executors=executors)
    assert (res.shared["total"], res.shared["count"]) == (total, count), text
