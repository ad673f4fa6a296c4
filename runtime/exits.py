"""Why a run stopped, in words: a deadlock's waiting tasks, a timeout, a bounds fault, a full
ring. runtime/launch.py calls :func:`check_exit` with the control words it copied back."""

from __future__ import annotations

from typing import Any

import numpy as np

from gasync.codegen import Generated
from gasync.dsl.ast import Span
from gasync.dsl.diagnostics import NOSPAN, Note
from gasync.planner import ir
from gasync.planner.symbols import CHANNEL_SLOT_BYTES
from gasync.runtime.buffers import DTYPES
from gasync.runtime.errors import (
    BoundsError,
    DeadlockError,
    DeviceError,
    RunTimeoutError,
    bounds_error,
    members_label,
    worded,
)
from gasync.runtime.framewaits import FrameWalk, await_points
from gasync.runtime.hints import timeout_notes
from gasync.runtime.options import RunOptions
from gasync.runtime.state import GAVE_UP, Ctl, Exit, Sched

STATE_NAMES = {Sched.IDLE: "waiting", Sched.QUEUED: "queued", Sched.RUNNING: "running", Sched.NOTIFIED: "woken",
               Sched.DONE: "done", Sched.FRESH: "not started"}  # fmt: skip


def check_exit(
    gen: Generated, back: dict[str, Any], options: RunOptions, sites: tuple[Any, ...] = (), blocks: int = 0
) -> None:
    """Raise the error of a run that did not end well; ``blocks``: the launch's (0: not known)."""
    ctl = back["CTL"]
    code = int(ctl[Ctl.EXIT])
    gave_up = code == Exit.TIMEOUT and int(ctl[Ctl.DETAIL]) == GAVE_UP
    if code == Exit.OK or (code == Exit.TIMEOUT and int(ctl[Ctl.DONE]) >= gen.plan.instances and not gave_up):
        return  # (a deadline that passed as the last instance finished is no timeout)
    if code == Exit.BOUNDS and 0 <= int(ctl[Ctl.FAULT_SITE]) < len(sites):
        raise _bounds_error(gen, ctl, sites[int(ctl[Ctl.FAULT_SITE])])
    closed = closed_channels(gen, back.get("CHCLOSED"))
    waiting = _waiting(gen, back["ST"], back["WAITON"], options.executor == "spin", back.get("FI"), closed)
    listing = "\n".join(f"  {line}" for line in waiting) or "  (none)"
    if code == Exit.TIMEOUT:
        tail = f"{options.timeout_s:g}s; unfinished tasks:\n{listing}"
        if gave_up and not waiting:  # the loop left, and its task finished (decision 24)
            after = "a loop still running at the deadline gave up, and its task then finished on the values it had"
            tail = f"{options.timeout_s:g}s; unfinished tasks: none, as {after}"
        notes = timeout_notes(gen, back["ST"], back["SIG"], options, blocks)
        if options.executor == "spin":
            notes = (
                Note(
                    "the spin executor cannot tell a deadlock from a wait: it stops at the timeout, 30 s"
                    " where none is given; the queue executor (the default) reports a deadlock at once"
                ),
                *notes,
            )
        if gave_up:  # (its task may then have finished, on the values the loop had)
            loop = "a loop in a plain fn or a parallel loop (its range or its body's)"
            notes = (Note(f"{loop} was still running at the deadline"), *notes)
        spin = back["WAITON"] if options.executor == "spin" else None
        notes = (*notes, *_wait_places(gen, back["ST"], back.get("FI"), spin))
        error = RunTimeoutError(f"the run exceeded its timeout of {tail}", NOSPAN, notes)
        raise worded(error, f"the run exceeded --timeout {tail}")
    if code == Exit.DEADLOCK and not waiting:
        # every instance finished: the deadlock check read in flight as 0 while one ran, so an
        # executor's count is wrong (a task after empty ones was once never counted: hoststate)
        raise DeviceError(
            "internal error in the executor: it reported a deadlock, yet every task finished "
            f"(exit code {code}; its count of instances in flight was wrong; please report it)"
        )
    if code == Exit.DEADLOCK:
        places = (*_closed_notes(closed, listing), *_wait_places(gen, back["ST"], back.get("FI")))
        raise DeadlockError(
            f"deadlock: no task can make progress, and nothing can wake these:\n{listing}", NOSPAN, places
        )
    lost = {
        Exit.QUEUE_FULL: "the run queue had no free slot",
        Exit.WAITLIST_FULL: "a wait list had no free slot",
        Exit.SLEEPERS_FULL: "the sleepers' ring had no free slot",
        Exit.JOBS_FULL: "every bulk job slot was taken when a bulk for was posted",
    }
    if code in lost:
        who = _instance(gen, int(ctl[Ctl.DETAIL]))
        raise DeviceError(
            f"internal error in the executor: {lost[Exit(code)]} for {who}, so a wake would have been lost "
            f"(exit code {code}; please report it); unfinished tasks:\n{listing}"
        )
    raise DeviceError(f"the executor stopped with code {code}; unfinished tasks:\n{listing}")


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether a launch failed for want of memory (NumPy's MemoryError, or the CUDA driver's)."""
    return isinstance(exc, MemoryError) or "CUDA_ERROR_OUT_OF_MEMORY" in str(exc)


def state_sizes(gen: Generated) -> list[tuple[int, str]]:
    """Bytes of the run's state by what holds them, largest first: each buffer, channel and
    task's frames (a task of many instances: a mutated group or range size, which no buffer shows)."""
    plan = gen.plan
    sizes = [(b.size * np.dtype(DTYPES[b.elem]).itemsize, f"buffer '{b.name}'") for b in plan.buffers]
    sizes += [(c.capacity * CHANNEL_SLOT_BYTES, f"channel '{c.name}'") for c in plan.channels]
    sizes += [(plan.task_frame_bytes(t), f"task '{t.name}' ({t.count:,} instances)") for t in plan.tasks]
    return sorted(sizes, reverse=True)


def largest_state(sizes: list[tuple[int, str]]) -> str:
    """The three largest of ``state_sizes`` of a MiB or more, in GiB (empty if none is)."""
    return ", ".join(f"{what}: {n / 2**30:.1f} GiB" for n, what in sizes[:3] if n >= 1 << 20)


def out_of_memory(gen: Generated, exc: BaseException) -> DeviceError:
    """A run whose state did not fit in memory (the host's for the simulator, the device's
    on a GPU), naming the program's largest buffers, channels and tasks' frames."""
    largest = largest_state(state_sizes(gen))
    where = f"; the largest: {largest}" if largest else ""
    return DeviceError(f"not enough memory for the run's state ({type(exc).__name__}){where}")


# The most state a simulated run may have: its buffers are copied to the simulated device, back,
# and through a pickle to the caller's process, each in host memory, by one thread; past this a
# run would take minutes to end (or the machine's memory), so it is refused before it starts
SIM_MAX_STATE_BYTES = 1 << 30


def sim_state_check(gen: Generated) -> None:
    """A DeviceError before a simulated run whose state is over SIM_MAX_STATE_BYTES."""
    sizes = state_sizes(gen)
    total = sum(n for n, _ in sizes)
    if total > SIM_MAX_STATE_BYTES:
        raise DeviceError(
            f"not enough memory for the run's state on the simulator: {total / 2**30:.1f} GiB, over its "
            f"{SIM_MAX_STATE_BYTES / 2**30:g} GiB; the largest: {largest_state(sizes)}",
            notes=(Note("run it on a GPU (--backend cuda), or make it smaller (-D NAME=VALUE sets a const)"),),
        )


def _bounds_error(gen: Generated, ctl: np.ndarray[Any, Any], site: tuple[Any, ...]) -> BoundsError:
    """The first out-of-bounds access of the run, from its row of the module's BOUNDS_SITES
    (codegen/bounds.py) and CTL's FAULT words (runtime/state.py)."""
    buf, shape, spans, wide = site
    dim = int(ctl[Ctl.FAULT_DIM])
    index = int(ctl[Ctl.FAULT_INDEX])
    if wide[dim] and index < 0:
        index += 1 << 64  # a u64 index, read back as its int64 word
    who = _instance(gen, int(ctl[Ctl.DETAIL]))
    return bounds_error(buf, shape, dim, index, Span(*spans[dim]), who, int(ctl[Ctl.FAULTS]))


def _instance(gen: Generated, inst: int) -> str:
    """``task consumer[3]``, ``task main`` for a task of one instance, ``task t[1] in group g[0]``."""
    for t in gen.plan.tasks:
        if t.first_instance <= inst < t.first_instance + t.count:
            return f"task {members_label(gen.plan, t, [inst - t.first_instance])}"
    return f"instance {inst}"


def _resource(gen: Generated, r: int, closed: frozenset[str] = frozenset()) -> str:
    plan = gen.plan
    if r < len(plan.signals):
        return f"signal {plan.signals[r].name}"
    c, side = divmod(r - len(plan.signals), 2)
    name = plan.channels[c].name
    return _recv(f"channel {name}", name in closed) if side == 0 else f"send on channel {name} (full)"


def _recv(chan: str, closed: bool) -> str:
    """A receive a task waits on; from a channel closed and empty it never completes (decision 16)."""
    return f"recv from {chan}" + (" (closed)" if closed else "")


def _closed_notes(closed: frozenset[str], listing: str) -> tuple[Note, ...]:
    """Why a receive from a closed channel waits, for each one a deadlocked task names (in a
    deadlock it is empty too: a value there would have woken it)."""
    return tuple(
        Note(f"channel {name} is closed and empty: a recv() there never completes ('for await' ends there instead)")
        for name in sorted(closed)
        if f"channel {name} (closed)" in listing
    )


def closed_channels(gen: Generated, chclosed: np.ndarray[Any, Any] | None) -> frozenset[str]:
    """The global channels closed when the run stopped (CHCLOSED, copied back on a failure)."""
    if chclosed is None:
        return frozenset()
    return frozenset(c.name for k, c in enumerate(gen.plan.channels) if k < len(chclosed) and chclosed[k] != 0)


def _local_wait(gen: Generated, t: Any, k: int, code: int) -> str:
    g = gen.plan.group_of(t)
    assert g is not None
    name = g.channels[code // 2].name
    side = "send on local channel {} (full)" if code % 2 else "recv from local channel {}"
    return f"waits on {side.format(name)}"  # (the task's label names its group instance)


def _by_group(gen: Generated, names: list[str]) -> list[str]:
    """Task names, those of a group's tasks as ``group g`` (a task after a group waits for all of
    its tasks: the planner lists them), the others as they are."""
    out: list[str] = []
    for name in names:
        g = next((t.group for t in gen.plan.tasks if t.name == name), None)
        shown = f"group {g}" if g is not None else name
        if shown not in out:
            out.append(shown)
    return out


def _instances(gen: Generated, name: str) -> range:
    """The instance ids of task ``name``, or of every task of group ``name``."""
    ids = [
        i
        for t in gen.plan.tasks
        if name in (t.name, t.group)
        for i in range(t.first_instance, t.first_instance + t.count)
    ]
    return range(min(ids), max(ids) + 1) if ids else range(0)


def _await_points(gen: Generated, fi: np.ndarray[Any, Any] | None, closed: frozenset[str] = frozenset()) -> Any:
    """``(task, k) -> "recv from channel d and recv from local channel g.e"``: what instance k
    of a task waits on where its frame says (runtime/framewaits.py: a select's every arm, a
    join's futures not done yet, also inside the async fns and blocks it awaits; WAITON names
    only the one registered last), or None."""
    words = {s.name: f"signal {s.name}" for s in gen.plan.signals}
    local = {c.name for g in gen.plan.groups for c in g.channels}
    walk = FrameWalk(gen.plan, fi) if fi is not None else None
    bases = [b for _, b, _ in gen.frame_bases] + [gen.frame_words[0]]
    strides = {
        t.name: (bases[n], (bases[n + 1] - bases[n]) // t.count if t.count else 0) for n, t in enumerate(gen.plan.tasks)
    }

    def at(t: Any, k: int) -> str | None:
        base, stride = strides[t.name]
        if walk is None or stride <= 0:
            return None
        got = walk.task(t.body, base + k * stride)
        if got is None or all(isinstance(f, ir.Sleep) for f in got.leaves):
            return None  # (a task that only sleeps is "waiting")
        return " and ".join(dict.fromkeys(_arm(f, words, local, closed) for f in got.leaves)) or None

    return at


MAX_PLACES = 6  # await points shown as notes under a deadlock or a timeout


def _wait_places(
    gen: Generated, st: np.ndarray[Any, Any], fi: np.ndarray[Any, Any] | None, spin: Any = None
) -> tuple[Note, ...]:
    """A note at each await point where unfinished task instances are suspended (their state
    words, in the frames' int words ``fi``; a group's started ones are RUNNING, and so are all
    of the spin executor's once polled: ``spin``, its WAITON, says which wait on something,
    and between polls a state word is where the instance resumes), in task order,
    at most MAX_PLACES: ``task consumer[0, 1] waits here``, pointing at the ``.await``,
    ``select`` or ``for await``; where that awaits an async fn, a second note at the await
    point inside it where they wait (``task main waits here, inside async fn pick``)."""
    if fi is None:
        return ()
    walk = FrameWalk(gen.plan, fi)
    bases = [b for _, b, _ in gen.frame_bases] + [gen.frame_words[0]]
    notes = []
    for n, t in enumerate(gen.plan.tasks):
        if not t.count:
            continue
        stride = (bases[n + 1] - bases[n]) // t.count
        spans = {p.site: p.span for p in await_points(t.body.body)}
        at: dict[tuple[int, tuple[str, Span] | None], list[int]] = {}
        for k in range(t.count):
            word = bases[n] + k * stride
            s = st[t.first_instance + k]
            waits = t.group is not None or spin is not None and spin[t.first_instance + k] > 0
            suspended = s == 0 or waits and s not in (Sched.DONE, Sched.FRESH)
            if suspended and stride > 0 and word < len(fi) and int(fi[word]) in spans:
                got = walk.task(t.body, word)
                at.setdefault((int(fi[word]), got.inner if got is not None else None), []).append(k)
        for (site, inner), ks in sorted(at.items(), key=lambda kv: kv[1][0]):
            label = members_label(gen.plan, t, ks)
            notes.append(Note(f"task {label} waits here", spans[site]))
            if inner is not None:
                notes.append(Note(f"task {label} waits here, inside async fn {inner[0]}", inner[1]))
    if len(notes) > MAX_PLACES:
        notes[MAX_PLACES - 1 :] = [Note(f"and {len(notes) - MAX_PLACES + 1} more await points where tasks wait")]
    return tuple(notes)


def _arm(
    f: ir.Recv | ir.Send | ir.Wait | ir.Sleep, signals: dict[str, str], local: set[str], closed: frozenset[str]
) -> str:
    if isinstance(f, ir.Sleep):
        return "a sleep"
    if isinstance(f, ir.Recv | ir.Send):
        chan = f"local channel {f.chan}" if f.chan in local else f"channel {f.chan}"
        return _recv(chan, f.chan in closed) if isinstance(f, ir.Recv) else f"send on {chan} (full)"
    return signals.get(f.signal, f"signal {f.signal}")


def _waiting(
    gen: Generated,
    st: np.ndarray[Any, Any],
    waiton: np.ndarray[Any, Any],
    spin: bool = False,
    fi: np.ndarray[Any, Any] | None = None,
    closed: frozenset[str] = frozenset(),
) -> list[str]:
    """One line per unfinished task (instances grouped by what they wait on); ``spin``: the
    spin executor's run, whose instances stay RUNNING once polled (what they wait on is in WAITON);
    ``fi``: the frames' int words, whose state words say where each waits (a select's every
    arm: WAITON holds only the last one it registered on); ``closed``: the global channels
    closed when the run stopped."""
    lines = []
    where = _await_points(gen, fi, closed)
    for t in gen.plan.tasks:
        groups: dict[str, list[int]] = {}
        for k in range(t.count):
            inst = t.first_instance + k
            if st[inst] == Sched.DONE:
                continue
            at = where(t, k)
            if st[inst] == Sched.FRESH:
                pending = _by_group(gen, [a for a in t.after if any(st[i] != Sched.DONE for i in _instances(gen, a))])
                what = "not started" + (f": it runs after {', '.join(pending)}" if pending else "")
            elif at is not None and ((st[inst] == 0 or spin) and waiton[inst] >= 0 or t.group is not None):
                what = f"waits on {at}"
            elif st[inst] == 0 and waiton[inst] == 0:
                what = "waiting"
            elif waiton[inst] > 0 and (st[inst] == 0 or spin or t.group is not None):
                # (spin, and a group's pinned warps: RUNNING once polled, state.py)
                what = "waits on " + _resource(gen, int(waiton[inst]) - 1, closed)
            elif waiton[inst] <= -2 and t.group is not None:  # a group's pinned warp (codegen/groupkernel.py)
                what = _local_wait(gen, t, k, -2 - int(waiton[inst]))
            elif t.group is not None and waiton[inst] == 0:  # pinned: RUNNING from its start (a sleep, a yield)
                what = "waiting"
            else:
                what = STATE_NAMES.get(int(st[inst]), "?")
            groups.setdefault(what, []).append(k)
        for what, ks in groups.items():
            lines.append(f"task {members_label(gen.plan, t, ks)} {what}")
    return lines
