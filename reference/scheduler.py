"""Round-robin scheduling of task instances, honouring ``after``, on a virtual clock.

The ready queue is FIFO. A task's instances are queued, in index order, as
soon as every instance of each task it comes ``after`` has finished (tasks
without ``after`` at the start, in the Plan's topological order). Each poll
takes the first ready instance, advances the clock by ``poll_ns`` and runs
the instance until it finishes or waits: a ``yield_now`` puts it at the back
of the queue, anything else parks it with what it waits on. After the poll,
every parked instance waiting on a resource the poll changed is queued again
(in the order they parked), and so is every sleeper whose time has come.
When nothing is ready the clock jumps to the next sleeper or host signal;
when there is none of those either, the unfinished instances are deadlocked.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from gasync.planner.model import Plan, TaskDef
from gasync.reference.errors import DeadlockError, StepLimitError
from gasync.reference.futures import Poll, poll
from gasync.reference.groups import enter
from gasync.reference.machine import Machine
from gasync.reference.world import Waiting, World
from gasync.runtime.errors import BoundsError, bounds_error, members_label


@dataclass
class Instance:
    task: TaskDef
    k: int  # 0-based index within the task
    gen: Poll
    waits: tuple[Waiting, ...] = ()


class Scheduler:
    def __init__(self, plan: Plan, world: World, host_signals: dict[str, int], poll_ns: int):
        self.plan = plan
        self.world = world
        self.machine = Machine(plan, world)
        self.host_signals = sorted((t, name) for name, t in host_signals.items())
        self.poll_ns = poll_ns
        self.ready: deque[Instance] = deque()
        self.parked: dict[int, Instance] = {}
        self.finished = {t.name: 0 for t in plan.tasks}
        self.started: set[str] = set()
        self.polls = 0
        self.running: Instance | None = None

    def run(self) -> None:
        self._start_tasks()
        try:
            while not self._all_done():
                self._deliver_due()
                if not self.ready and not self._advance_clock():
                    listing = "\n".join(f"  {line}" for line in self.waiting()) or "  (none)"
                    raise DeadlockError(f"deadlock: no task can make progress, and nothing can wake these:\n{listing}")
                if self.ready:
                    self._poll(self.ready.popleft())
        except StepLimitError as exc:
            listing = "\n".join(f"  {line}" for line in self.waiting())
            raise StepLimitError(f"{exc.message}; unfinished tasks:\n{listing}") from None

    def _poll(self, inst: Instance) -> None:
        self.world.now += self.poll_ns
        self.polls += 1
        self.running = inst
        enter(self.world.buffers, self.world.channels, inst.task, inst.k)
        try:
            done, waits = poll(inst.gen)
        except BoundsError as exc:  # the first fault stops the run, naming its instance
            who = f"task {members_label(self.plan, inst.task, [inst.k])}"
            raise bounds_error(exc.buffer, exc.shape, exc.dimension - 1, exc.index, exc.span, who) from None
        self.running = None
        if done:
            self._finish(inst)
        elif any(w.kind == "yield" for w in waits):
            self.ready.append(inst)
        else:
            inst.waits = waits
            self.parked[id(inst)] = inst
        self._wake(self.world.events)
        self.world.events.clear()

    def _wake(self, events: list[Waiting]) -> None:
        changed = {(e.kind, e.name) for e in events}
        for key, inst in list(self.parked.items()):
            if any((w.kind, w.name) in changed for w in inst.waits):
                del self.parked[key]
                self.ready.append(inst)

    def _deliver_due(self) -> None:
        """Host signals and sleepers whose time has come."""
        while self.host_signals and self.host_signals[0][0] <= self.world.now:
            self.world.set_signal(self.host_signals.pop(0)[1])
        for key, inst in list(self.parked.items()):
            if any(w.kind == "sleep" and w.until <= self.world.now for w in inst.waits):
                del self.parked[key]
                self.ready.append(inst)
        self._wake(self.world.events)
        self.world.events.clear()

    def _advance_clock(self) -> bool:
        """Jump to the next sleeper's or host signal's time; False if there is none."""
        times = [w.until for inst in self.parked.values() for w in inst.waits if w.kind == "sleep"]
        times += [t for t, _ in self.host_signals[:1]]
        if not times:
            return False
        self.world.now = max(self.world.now, min(times))
        return True

    # ---- tasks ----
    def _start_tasks(self) -> None:
        """Queue the instances of every task whose predecessors have all finished."""
        changed = True
        while changed:
            changed = False
            for t in self.plan.tasks:
                if t.name in self.started or not all(self._task_done(p) for p in t.after):
                    continue
                self.started.add(t.name)
                changed = changed or t.count == 0
                self.ready.extend(Instance(t, k, self.machine.task(t, k)) for k in range(t.count))

    def _task_done(self, name: str) -> bool:
        task = next(t for t in self.plan.tasks if t.name == name)
        return name in self.started and self.finished[name] == task.count

    def _finish(self, inst: Instance) -> None:
        self.finished[inst.task.name] += 1
        if self.finished[inst.task.name] == inst.task.count:
            self._start_tasks()

    def _all_done(self) -> bool:
        return all(self._task_done(t.name) for t in self.plan.tasks)

    def _describe(self, w: Waiting) -> str:
        """A wait in the runtime's words; a recv from a closed global channel says so (it never
        completes there: decision 16)."""
        ch = dict.get(self.world.channels, w.name) if w.kind == "recv" else None
        return w.describe() + (" (closed)" if ch is not None and ch.closed else "")

    def waiting(self) -> list[str]:
        """One line per unfinished task, instances grouped by what they wait on (the runtime's words)."""
        parked = {(i.task.name, i.k): i for i in self.parked.values()}
        queued = {(i.task.name, i.k) for i in self.ready}
        running = (self.running.task.name, self.running.k) if self.running else None
        lines = []
        for t in self.plan.tasks:
            groups: dict[str, list[int]] = {}
            for k in range(t.count):
                if (t.name, k) in parked:
                    what = "waits on " + " and ".join(self._describe(w) for w in parked[t.name, k].waits)
                elif (t.name, k) in queued:
                    what = "ready"
                elif (t.name, k) == running:
                    what = "running"
                elif t.name not in self.started:
                    pending = [p for p in t.after if not self._task_done(p)]
                    what = "not started" + (f": it runs after {', '.join(pending)}" if pending else "")
                else:
                    continue  # finished
                groups.setdefault(what, []).append(k)
            for what, ks in groups.items():
                lines.append(f"task {members_label(self.plan, t, ks)} {what}")
        return lines
