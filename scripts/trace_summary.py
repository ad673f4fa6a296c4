"""What each task's instances spend their time on, from a traced run: ``summarize(raw)``.

The task profile of ``gasync run --trace`` (runtime/profile.py: polls, time in them, time
waiting, by await point), put per instance, with what the profile does not say: an instance's
median life (its first poll's start to its last poll's end) and how many instances were alive
at once at most. Used by scripts/matmul_probe.py ``--trace`` and group_probe.py ``--trace``."""

from __future__ import annotations

from statistics import median
from typing import Any

from gasync.runtime.profile import profile
from gasync.runtime.trace import task_of


def summarize(raw: Any) -> list[str]:
    """Lines of a table, one per task (times per instance, us), then the run's concurrency."""
    spans: dict[int, list[int]] = {}
    for _kind, _ex, inst, _a, _b, t0, t1, _c in raw.polls():
        span = spans.setdefault(inst, [t0, t1])
        span[0], span[1] = min(span[0], t0), max(span[1], t1)
    out = ["| task | instances | polls | in polls, us | waiting, us | waited on most | life (median), us |"]
    out.append("| --- | ---: | ---: | ---: | ---: | --- | ---: |")
    for task, p in profile(raw).items():
        lives = [t1 - t0 for inst, (t0, t1) in spans.items() if task_of(raw, inst) == task]
        if not lives:
            continue
        n = len(lives)
        most = next(iter(p.waiting_on), "-")
        out.append(
            f"| {task} | {n} | {p.polls / n:g} | {p.busy_us / n:.2f} | {p.wait_us / n:.2f} | {most} |"
            f" {median(lives) / 1e3:.1f} |"
        )
    alive = most_alive = 0
    for _t, d in sorted([(t0, 1) for t0, _ in spans.values()] + [(t1, -1) for _, t1 in spans.values()]):
        alive += d
        most_alive = max(most_alive, alive)
    out.append(f"at most {most_alive} task instances alive at once; {raw.dropped} events dropped")
    if spans:
        first = min(t0 for t0, _ in spans.values())
        starts = sorted(t0 - first for t0, _ in spans.values())
        ends = sorted(t1 - first for _, t1 in spans.values())
        lives = sorted(t1 - t0 for t0, t1 in spans.values())
        out.append("over all instances, us after the first poll (p10 / p50 / p90 / max): " + "; ".join(
            f"{name} {' / '.join(f'{_at(xs, q) / 1e3:.1f}' for q in (0.1, 0.5, 0.9, 1.0))}"
            for name, xs in (("first poll", starts), ("last poll's end", ends), ("life", lives))
        ))  # fmt: skip
    return out


def _at(xs: list[int], q: float) -> int:
    """The value at fraction ``q`` of the sorted ``xs`` (1.0: the largest)."""
    return xs[min(len(xs) - 1, int(q * len(xs)))]
