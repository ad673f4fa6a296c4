"""The concurrent-write check: plain writes to one buffer by tasks that may run at once.

Two different tasks may run at once when neither is reachable from the other
along ``after`` edges (channels and signals order single events, not whole
tasks, so they do not count). Two of their writes race when the elements
they can touch overlap (:mod:`gasync.planner.footprints`); instances of one
task are assumed to write disjoint parts, as the spec says, so a task never
races with itself.

Cost is linear in the program for the common cases. Reachability is one
bitset per task (a Python int, bit k for the task numbered k), from one sweep
in topological order and one in reverse, and only when some buffer has two
writer tasks. Each buffer's writes are then swept once in order of their
first element, with the set of writes still "open": a write that starts
while an open write of a concurrent task covers its first element overlaps
it. Every write is marked racing at most once, so the sweep costs
O(W log W) comparisons plus one bitset operation per write.

The result is one diagnostic per buffer, naming the tasks with a racing
write (at most :data:`NAMED` of them, then a count) and pointing at the
first racing write of each named task.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator

from gasync.dsl.diagnostics import GasyncError, Note
from gasync.planner.effects import Effects
from gasync.planner.errors import ConcurrentWriteError, ConcurrentWriteWarning
from gasync.planner.footprints import Write
from gasync.planner.model import TaskDef
from gasync.planner.symbols import Symbols

NAMED = 5  # a diagnostic names at most this many tasks (4 and a count when there are more)

Item = tuple[int, int, int, Write]  # (first element, end, task number, write)


def concurrent_writes(
    syms: Symbols, tasks: list[TaskDef], effects: dict[str, Effects], strict: bool
) -> list[GasyncError]:
    """One diagnostic per buffer that tasks which may run at once both write, in declaration order."""
    writers = _writes_by_buffer(syms, tasks, effects)
    if not writers:
        return []
    unordered = _concurrent_masks(tasks)
    out: list[GasyncError] = []
    for buf, items in writers.items():
        racing = _racing(items, unordered)
        if racing:
            out.append(_diagnostic(buf, racing, tasks, strict, unordered))
    return out


def _writes_by_buffer(syms: Symbols, tasks: list[TaskDef], effects: dict[str, Effects]) -> dict[str, list[Item]]:
    """Each buffer written by two tasks or more, with every write as a linear element range."""
    items: dict[str, list[Item]] = {}
    for t in tasks:
        if t.count == 0:  # a task over an empty range never runs, so it writes nothing
            continue
        for buf, writes in effects[t.name].writes.items():
            shape = syms.buffers[buf].shape
            for w in writes:
                lo, hi = w.linear(shape)
                if lo < hi:
                    items.setdefault(buf, []).append((lo, hi, t.index, w))
    return {buf: items[buf] for buf in syms.buffers if buf in items and len({i[2] for i in items[buf]}) > 1}


def _concurrent_masks(tasks: list[TaskDef]) -> list[int]:
    """For task k, the bitset of tasks that may run at once with it (k itself excluded)."""
    number = {t.name: t.index for t in tasks}
    before = [0] * len(tasks)  # ancestors along `after`
    after = [0] * len(tasks)  # descendants
    succs: list[list[int]] = [[] for _ in tasks]
    for t in tasks:  # topological order: every predecessor is done already
        for p in t.after:
            k = number[p]
            before[t.index] |= before[k] | (1 << k)
            succs[k].append(t.index)
    for t in reversed(tasks):
        for s in succs[t.index]:
            after[t.index] |= after[s] | (1 << s)
    full = (1 << len(tasks)) - 1
    return [full & ~(before[k] | after[k] | (1 << k)) for k in range(len(tasks))]


def _racing(items: list[Item], unordered: list[int]) -> list[Item]:
    """The writes that overlap a write of a task that may run at once with theirs."""
    items.sort(key=lambda i: (i[0], i[1], i[2]))
    open_ends: list[tuple[int, int]] = []  # (end, position in items) of the open writes
    open_count: dict[int, int] = {}  # task -> open writes
    open_mask = 0  # tasks with an open write
    unmarked: dict[int, set[int]] = {}  # task -> open writes not yet marked racing
    unmarked_mask = 0
    racing: set[int] = set()
    for pos, (lo, hi, task, _) in enumerate(items):
        while open_ends and open_ends[0][0] <= lo:  # writes that end before this one starts
            _, old = heapq.heappop(open_ends)
            t = items[old][2]
            open_count[t] -= 1
            if not open_count[t]:
                open_mask &= ~(1 << t)
            if old in unmarked.get(t, ()):
                unmarked[t].discard(old)
                if not unmarked[t]:
                    unmarked_mask &= ~(1 << t)
        if open_mask & unordered[task]:
            racing.add(pos)
            for t in _bits(unmarked_mask & unordered[task]):
                racing.update(unmarked.pop(t))
                unmarked_mask &= ~(1 << t)
        heapq.heappush(open_ends, (hi, pos))
        open_count[task] = open_count.get(task, 0) + 1
        open_mask |= 1 << task
        if pos not in racing:
            unmarked.setdefault(task, set()).add(pos)
            unmarked_mask |= 1 << task
    return [items[p] for p in sorted(racing)]


def _bits(mask: int) -> Iterator[int]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _racing_pairs(racing: list[Item], order: list[int], unordered: list[int]) -> list[tuple[int, int]]:
    """The pairs of ``order``'s tasks that may run at once and write overlapping elements."""
    ranges: dict[int, list[tuple[int, int]]] = {}
    for lo, hi, task, _ in racing:
        ranges.setdefault(task, []).append((lo, hi))
    return [
        (a, b)
        for n, a in enumerate(order)
        for b in order[n + 1 :]
        if unordered[a] >> b & 1 and any(lo < h and l2 < hi for lo, hi in ranges[a] for l2, h in ranges[b])
    ]


def _diagnostic(buf: str, racing: list[Item], tasks: list[TaskDef], strict: bool, unordered: list[int]) -> GasyncError:
    """One diagnostic for ``buf``: the tasks in the order of their first racing write,
    pointing at the last named one's and with a note at each other named one's; where some of
    them are ordered (``a`` before ``b``, both racing ``c``), the pairs that race."""
    first: dict[int, Write] = {}
    for _, _, task, w in sorted(racing, key=lambda i: (i[3].span.line, i[3].span.column)):
        first.setdefault(task, w)
    order = [tasks[k].name for k in first]
    writes = list(first.values())
    named = order if len(order) <= NAMED else order[: NAMED - 1]
    if len(order) == 2:
        message = f"tasks '{order[0]}' and '{order[1]}' may run at once and both write buffer '{buf}'"
        advice = f"order them with 'after {order[0]}', or write with atomic_add and friends"
    else:
        listed = ", ".join(f"'{n}'" for n in named[:-1])
        tail = f"'{named[-1]}'" if len(named) == len(order) else f"'{named[-1]}' and {len(order) - len(named)} more"
        message = f"{len(order)} tasks that may run at once write buffer '{buf}': {listed}"
        message += f", {tail}" if len(named) < len(order) else f" and {tail}"
        pairs = _racing_pairs(racing, list(first), unordered)
        if len(pairs) < len(order) * (len(order) - 1) // 2 and len(pairs) <= NAMED:  # some are ordered
            listed = ", ".join(f"'{tasks[a].name}' and '{tasks[b].name}'" for a, b in pairs)
            message = f"tasks that may run at once write buffer '{buf}': {listed}"
        advice = "order them with 'after', or write with atomic_add and friends"
    groups = {tasks[k].group for k in first}
    if len(groups) == 1 and None not in groups:  # one group instance's tasks: no 'after' among them
        advice = (  # (a channel orders single values, not whole tasks: it does not end the race for this check)
            "a group's tasks start together and have no 'after': let one of them write it (the other"
            " sends it what to write through a local channel), or write with atomic_add and friends"
        )
    elif groups != {None}:  # a group's task has no 'after' of its own (E0222): its group has
        advice = _group_advice([tasks[k] for k in first])
    notes = [Note(f"'{n}' writes '{buf}' here", w.span) for n, w in zip(named[:-1], writes, strict=False)]
    cls = ConcurrentWriteError if strict else ConcurrentWriteWarning
    return cls(message, writes[len(named) - 1].span, (*notes, Note(advice)))


def _group_advice(racing: list[TaskDef]) -> str:
    """How to order racing tasks some of which belong to groups: by ``after`` on the groups."""
    if len(racing) == 2:
        first, second = racing
        pred = first.group if first.group is not None else first.name
        if second.group is None:  # a plain task may name a group's task
            return f"order them with 'after {first.name}', or write with atomic_add and friends"
        whose = " and ".join(f"'{t.name}' is in group '{t.group}'" for t in racing if t.group is not None)
        return (
            f"order them with 'group {second.group} ... after {pred}' ({whose}; a group's task has no"
            " 'after' of its own), or write with atomic_add and friends"
        )
    names = ", ".join(dict.fromkeys(f"'{t.group}'" for t in racing if t.group is not None))
    return (
        f"order them with 'after', given to the group for a group's task (groups {names}),"
        " or write with atomic_add and friends"
    )
