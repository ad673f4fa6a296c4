"""The interpreter's global state: buffers, shared scalars, signals, channels, the clock.

Everything a task can change outside its own frame lives in one
:class:`World`. Changing a resource that tasks wait on (a value into a
channel, a slot freed, a channel closed, a signal set) records the resource
in ``events``; the scheduler wakes every task waiting on it after the poll
(every waiter, not one: a woken task that finds nothing to do waits again,
so waking too many is only slower, never wrong).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gasync.planner.model import Plan
from gasync.reference.errors import StepLimitError
from gasync.reference.groups import Scoped
from gasync.reference.values import Value, scalar
from gasync.runtime.buffers import initial


@dataclass(frozen=True)
class Waiting:
    """What a pending future waits for: ``kind`` is 'recv', 'send', 'signal', 'sleep' or 'yield'.

    ``name`` is the channel or signal; ``until`` the virtual time a sleep ends.
    """

    kind: str
    name: str = ""
    until: int = 0

    def describe(self) -> str:
        """In the runtime's words, as a deadlock report names it."""
        if self.kind == "recv":
            return f"recv from channel {self.name}"
        if self.kind == "send":
            return f"send on channel {self.name} (full)"
        if self.kind == "signal":
            return f"signal {self.name}"
        return f"{self.kind} until {self.until} ns" if self.kind == "sleep" else self.kind


@dataclass
class Channel:
    capacity: int
    values: deque[Value] = field(default_factory=deque)
    closed: bool = False


class World:
    """Buffers (NumPy arrays of the declared dtype), shared scalars, signals, channels,
    virtual time in ns, and the counters a run reports."""

    def __init__(self, plan: Plan, inputs: dict[str, np.ndarray[Any, Any]], max_steps: int):
        self.plan = plan
        given = {b.name: inputs[b.name].copy() if b.init == "input" else initial(b) for b in plan.buffers}
        self.buffers = Scoped(given, lambda name: initial(plan.buffer(name)))  # reference/groups.py
        self.buffer_types = {b.name: b.elem for b in (*plan.buffers, *(b for g in plan.groups for b in g.buffers))}
        self.shared: dict[str, Value] = {s.name: scalar(s.init, s.ty) for s in plan.shared}
        self.shared_types = {s.name: s.ty for s in plan.shared}
        self.signals = {s.name: False for s in plan.signals}
        self.channels = Scoped(
            {c.name: Channel(c.capacity) for c in plan.channels}, lambda n: Channel(plan.channel(n).capacity)
        )
        self.events: list[Waiting] = []
        self.now = 0
        self.steps = 0
        self.max_steps = max_steps
        self.closed_sends = 0

    def step(self) -> None:
        """Count one statement or loop turn; past the limit the run stops."""
        self.steps += 1
        if self.steps > self.max_steps:
            raise StepLimitError(f"the reference run passed its limit of {self.max_steps} steps")

    # ---- signals ----
    def set_signal(self, name: str) -> None:
        if not self.signals[name]:
            self.signals[name] = True
            self.events.append(Waiting("signal", name))

    # ---- channels ----
    def try_send(self, name: str, value: Value) -> bool:
        """Send ``value`` if there is room; on a closed channel drop it (decision 17)."""
        ch = self.channels[name]
        if ch.closed:
            self.closed_sends += 1
            return True
        if len(ch.values) >= ch.capacity:  # a channel keeps exactly its capacity (decision 18)
            return False
        ch.values.append(value)
        self.events.append(Waiting("recv", name))
        return True

    def try_recv(self, name: str) -> tuple[bool, Value]:
        """(True, the oldest value), or (False, None) when the channel is empty."""
        ch = self.channels[name]
        if not ch.values:
            return False, None
        self.events.append(Waiting("send", name))
        return True, ch.values.popleft()

    def drained(self, name: str) -> bool:
        """Closed and empty: where ``for await`` ends (and ``recv`` never completes)."""
        ch = self.channels[name]
        return ch.closed and not ch.values

    def close(self, name: str) -> None:
        ch = self.channels[name]
        if not ch.closed:
            ch.closed = True
            self.events += [Waiting("recv", name), Waiting("send", name)]
