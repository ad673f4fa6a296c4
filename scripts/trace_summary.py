"""What each task's instances spend their time on, from a traced run: ``summarize(raw)``.

For every task, medians over its instances of: the polls an instance takes, the time inside
them (lane 0's poll), its life (first poll's start to last poll's end), and the gaps between
its polls (what its warp ran meanwhile: a parallel loop, naps, or waiting for an executor);
and, over the run, how many instances were alive at once at most (concurrency). Used by
scripts/matmul_probe.py ``--trace`` and group_probe.py ``--trace``; the same numbers for any
traced run (``Result.trace``)."""

from __future__ import annotations

from collections import defaultdict
from itertools import pairwise
from statistics import median
from typing import Any

from gasync.runtime.trace import POLL, task_of


def summarize(raw: Any) -> list[str]:
    """Lines of a table, one per task: polls, busy and life per instance (us), median gap."""
    polls: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for kind, _ex, inst, _a, _b, t0, t1, _c in raw.events:
        if kind == POLL:
            polls[inst].append((t0, t1))
    by_task: dict[str, list[int]] = defaultdict(list)
    for inst in polls:
        by_task[task_of(raw, inst) or f"#{inst}"].append(inst)
    out = ["| task | instances | polls an instance | in its polls, us | life, us | gap between polls, us |"]
    out.append("| --- | ---: | ---: | ---: | ---: | ---: |")
    for task in sorted(by_task):
        rows = [sorted(polls[i]) for i in by_task[task]]
        n = median(len(r) for r in rows)
        busy = median(sum(t1 - t0 for t0, t1 in r) for r in rows) / 1e3
        life = median(r[-1][1] - r[0][0] for r in rows) / 1e3
        gaps = [b[0] - a[1] for r in rows for a, b in pairwise(r)]
        gap = median(gaps) / 1e3 if gaps else 0.0
        out.append(f"| {task} | {len(rows)} | {n:g} | {busy:.2f} | {life:.1f} | {gap:.2f} |")
    spans = sorted((r[0][0], +1) for r in polls.values()) + sorted((r[-1][1], -1) for r in polls.values())
    alive = most = 0
    for _t, d in sorted(spans):
        alive += d
        most = max(most, alive)
    out.append(f"at most {most} task instances alive at once; {raw.dropped} events dropped")
    return out
