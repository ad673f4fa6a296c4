"""The per-task profile of a traced run, computed from its RawTrace on the host.

For each task (all its instances together):

- ``instances``: the task's instance count; ``polls``: POLL events of them;
- ``busy_us``: the time its polls took, summed;
- ``wait_us``: the time its instances spent suspended between one poll and
  the next, summed; ``waiting_on`` splits it by the await point they were
  suspended at (the state label, ``s1 line 51: select { ... }``), largest
  first. Time before an instance's first poll (``after``, or no executor
  free yet) is not a wait on anything the task awaits, and is left out;
- ``wakes``: WAKE events that woke one of its instances;
- ``longest_poll_us``: the longest single poll.

Times are microseconds of the device clock, rounded to nanoseconds. A trace
that dropped events gives a profile of the events it kept.

:func:`peaks` gives, for the whole run, the largest value of each counter the
device sampled as polls ended (``RawTrace.counters``): the run queue's length,
the instances in flight and each channel's occupancy, with the channel's
capacity beside it (a channel that stays full is the pipeline's bottleneck).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gasync.runtime.trace import CHANNEL, INFLIGHT, QUEUE, RawTrace, counter_name, task_of

COLUMNS = ("task", "instances", "polls", "busy", "waiting", "wakes", "longest poll")  # as tables show it


@dataclass(frozen=True)
class TaskProfile:
    instances: int
    polls: int = 0
    busy_us: float = 0.0
    wait_us: float = 0.0
    wakes: int = 0
    longest_poll_us: float = 0.0
    waiting_on: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "instances": self.instances,
            "polls": self.polls,
            "busy_us": self.busy_us,
            "wait_us": self.wait_us,
            "wakes": self.wakes,
            "longest_poll_us": self.longest_poll_us,
            "waiting_on": dict(self.waiting_on),
        }


def profile(raw: RawTrace) -> dict[str, TaskProfile]:
    """Task name -> its profile, tasks in the plan's order."""
    polls: dict[str, int] = {}
    busy: dict[str, int] = {}
    longest: dict[str, int] = {}
    waits: dict[str, dict[str, int]] = {}
    wakes: dict[str, int] = {}
    last: dict[int, tuple[int, int]] = {}  # instance -> (end of its last poll, the state it left it in)
    for _, _, inst, _, b, t0, t1, _ in sorted(raw.polls(), key=lambda e: e[5]):
        task = task_of(raw, inst)
        if task is None:
            continue
        polls[task] = polls.get(task, 0) + 1
        busy[task] = busy.get(task, 0) + (t1 - t0)
        longest[task] = max(longest.get(task, 0), t1 - t0)
        if inst in last:
            end, state = last[inst]
            label = raw.states.get(task, {}).get(state, f"s{state}")
            mine = waits.setdefault(task, {})
            mine[label] = mine.get(label, 0) + max(0, t0 - end)
        last[inst] = (t1, b)
    for e in raw.wakes():
        task = task_of(raw, e[2])
        if task is not None:
            wakes[task] = wakes.get(task, 0) + 1
    out = {}
    for name, _, count in raw.tasks:
        on = sorted(waits.get(name, {}).items(), key=lambda kv: (-kv[1], kv[0]))
        out[name] = TaskProfile(
            instances=count,
            polls=polls.get(name, 0),
            busy_us=_us(busy.get(name, 0)),
            wait_us=_us(sum(t for _, t in on)),
            wakes=wakes.get(name, 0),
            longest_poll_us=_us(longest.get(name, 0)),
            waiting_on={label: _us(t) for label, t in on},
        )
    return out


def peaks(raw: RawTrace) -> dict[str, tuple[int, int | None]]:
    """Counter name -> (its largest value, the channel's capacity or None): the run queue and
    in flight first, then every channel in the plan's order (0 for one no traced poll used);
    empty for a trace without counters (a version 1 file)."""
    if not raw.counters:
        return {}
    top = {k: 0 for k in (QUEUE, INFLIGHT, *(CHANNEL + c for c in range(len(raw.channels))))}
    for _, k, v in raw.counters:
        top[k] = max(top.get(k, 0), v)
    return {counter_name(raw, k): (v, raw.channels[k - CHANNEL][1] if k >= CHANNEL else None) for k, v in top.items()}


def _us(ns: int) -> float:
    return round(ns / 1000.0, 3)


def duration(us: float) -> str:
    """Microseconds in the unit that reads best: 850 ns, 12.5 us, 3.20 ms, 1.50 s."""
    if us < 1:
        return f"{us * 1000:.0f} ns"
    if us < 1000:
        return f"{us:.3g} us" if us < 100 else f"{us:.0f} us"
    if us < 1_000_000:
        return f"{us / 1000:.3g} ms" if us < 100_000 else f"{us / 1000:.0f} ms"
    return f"{us / 1e6:.3g} s"
