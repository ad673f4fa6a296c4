"""Code generation: a Plan becomes the Python source of one Numba-CUDA module.

``generate(plan)`` returns a :class:`Generated`: the module's text and what
the runtime needs to allocate its arrays. Nothing here writes files,
compiles or launches (runtime/ does). The module holds, in order: constants
(frame bases, signal numbers, the queue mask), plain device functions for
everything that never suspends, one poll state machine per suspending async
fn and per task (machine.py, poll.py), one device function per ``parallel
for`` body, and the executor kernel (kernel.py). Every device array travels
in one argument ``G``, a namedtuple of runtime/state.py's groups (``G.sched``,
``G.wait``, ...), then ``G.TRACE``, then the program's buffers and shared
scalars (``G.B_<name>``, ``G.S_<name>``); the module defines its class,
``State``, and generated code reads each array where it uses it. Every name the module
takes from the program is ``<tag>_<identifier>``, apart from its own names, and the file's
path and source lines in its docstring and comments are inert text (codegen/names.py).
"""

from __future__ import annotations

import hashlib
import keyword
from dataclasses import dataclass

from gasync import __version__
from gasync.codegen import groupkernel, groups, kernel, narrow, services, tasktable, warppoll
from gasync.codegen.blocks import emit_plain
from gasync.codegen.bounds import Checks
from gasync.codegen.flatten import flatten_plan
from gasync.codegen.jobs import JobWidths
from gasync.codegen.machine import Shared, UnsupportedError, source_line
from gasync.codegen.names import inert
from gasync.codegen.parallel import emit_parallel_body
from gasync.codegen.pinned import state_arrays
from gasync.codegen.poll import emit_block, emit_poll
from gasync.codegen.shapes import ChannelShapes
from gasync.dsl.diagnostics import GasyncError
from gasync.planner.model import FrameLayout, Plan

JOB_SLOTS = 64
LANES = 32


class UnsupportedConstructError(GasyncError):
    """A construct the code generator of this version cannot compile yet."""

    code = "E0401"


@dataclass(frozen=True)
class Generated:
    plan: Plan
    source: str
    digest: str  # sha256 of the source: the module's file name
    arrays: tuple[str, ...]  # G's fields after runtime/state.py's STATE_FIELDS: buffers, then shared scalars
    frame_words: tuple[int, int]  # (int words, float words) for all task instances
    frame_bases: tuple[tuple[str, int, int], ...]  # (task, first int word, first float word)
    queue_capacity: int
    pargs: tuple[int, int]  # per-executor words of parallel-for arguments (int, float)
    jobargs: tuple[int, int]  # per-job words of bulk-for arguments (0, 0: no bulk for)
    resources: int  # things a task can wait on: signals, then each channel's receive and send sides
    trace: bool = False  # the kernel records polls and wakes into TRACE
    job_width: int = 1  # bulk job rows per instance (codegen/jobs.py)
    largest_dispatch: tuple[str, int] = ("", 0)  # the function with the most labelled blocks, and how many
    internal_states: tuple[tuple[str, int, str], ...] = ()  # (task, state, label): Shared.internal_states
    # per task (the plan's order), the channels whose occupancy its traced polls record (trace_channels)
    trace_channels: tuple[tuple[int, ...], ...] = ()

    @property
    def trace_words(self) -> int:
        """The words of a TRACE row: runtime/state.py's TRACE_WORDS, then the widest task's channels."""
        from gasync.runtime.state import TRACE_WORDS  # (not at the top: the runtime package imports codegen)

        return TRACE_WORDS + max((len(c) for c in self.trace_channels), default=0)

    checked: bool = True  # buffer accesses not proven in range are checked at run time (codegen/bounds.py)
    check_sites: int = 0  # the accesses the module tests at run time (its BOUNDS_SITES rows; 0 unchecked)
    # bytes of dynamic shared memory a block takes: its groups' locals where static arrays cannot
    # hold them (codegen/groups.py, dynamic_shared), else 0
    dynamic_shared: int = 0
    counted: tuple[str, ...] = ()  # the counted channels (codegen/counted.py): no ring, values by ticket

    def gpu_compile_estimate_s(self) -> float:
        """A rough estimate of Numba-CUDA's compile time for the largest dispatch loop: its
        passes grow with the square of the blocks (scripts/ptx_check.py on nested ifs: 6.7 s a
        kernel at 82 blocks, 24 s at 232, about 4 s of it the rest of the kernel)."""
        return 20.0 * (self.largest_dispatch[1] / 232) ** 2


def generate(plan: Plan, trace: bool = False, checked: bool = True, ring_capacity: int = 0) -> Generated:
    """Render ``plan`` as a Numba-CUDA module; ``trace`` records every poll and wake on the device;
    ``checked`` checks each buffer access that the planner did not prove in range; ``ring_capacity``
    (a power of two) sets the slots of the run queue, each wait list and the sleepers' ring: 0 gives
    room for every instance, so that none can fill; a smaller one is for tests of the full-ring errors."""
    plan = flatten_plan(plan)
    arrays = state_arrays(plan)
    frames = {fr.fn: fr for fr in plan.frames}
    suspends = {f.name: f.suspends and f.kind == "async" for f in plan.functions}
    shared = Shared(
        plan,
        suspends,
        frames,
        has_sleep=uses_sleep(plan),
        trace=trace,
        warp=warppoll.warp_groups(plan, trace),
        wake_one_ok=channel_wakes_one(plan, suspends),
        jobs=JobWidths(plan, suspends),
        shapes=ChannelShapes.of(plan),
        trace_channels=trace_channels(plan) if trace else (),
        checks=Checks(plan, checked),
    )
    try:
        body = _functions(shared)
    except UnsupportedError as exc:
        raise UnsupportedConstructError(exc.what, exc.span) from None  # type: ignore[arg-type]
    bases, ni, nf = _frame_bases(plan, frames)
    capacity = 1
    while capacity < plan.instances + 1 and not ring_capacity:
        capacity *= 2
    capacity = ring_capacity or capacity
    pi = max([2, *(p.n_int for p in shared.parallel)])
    pf = max([1, *(p.n_float for p in shared.parallel)])
    bulk = [p for p in shared.parallel if p.bulk]
    jobargs = (max([2, *(p.n_int for p in bulk)]), max([1, *(p.n_float for p in bulk)])) if bulk else (0, 0)
    head = _header(plan, bases, capacity, bool(bulk), arrays, shared.wait_in_place, shared.shapes, shared.checks)
    free = tuple(t for t in plan.tasks if t.group is None)  # the executor's; groups run pinned
    tail = [
        *services.services(shared),
        "",
        "",
        *tasktable.task_dispatch(shared, free),
        "",
        "",
        *tasktable.claimable(free),
        "",
        "",
        *kernel.run_parallel(shared),
        "",
        "",
        *tasktable.tables(plan, has_service=shared.has_service, traced=trace),
        "",
    ]
    if plan.groups:
        tail += [*groupkernel.module_parts(shared), "", "", groupkernel.with_groups(plan, kernel.executor(shared))]
    else:
        tail.append(kernel.executor(shared))
    source = narrow.narrow_state("\n".join([*head, *body, *tail]).rstrip() + "\n")
    digest = hashlib.sha256(source.encode()).hexdigest()[:20]
    resources = len(plan.signals) + 2 * len(plan.channels)
    return Generated(
        plan,
        source,
        digest,
        arrays,
        (ni, nf),
        tuple(bases),
        capacity,
        (pi, pf),
        jobargs,
        resources,
        trace,
        shared.job_width,
        max(shared.dispatch_sizes, key=lambda x: x[1], default=("", 0)),
        tuple(shared.internal_states),
        shared.trace_channels,
        checked,
        len(shared.checks.sites) if checked else 0,
        groups.dynamic_shared(plan) if plan.groups else 0,
        tuple(shared.shapes.counted),
    )


def uses_sleep(plan: Plan) -> bool:
    from gasync.planner import ir
    from gasync.planner.walk import stmts_in

    def futs(f: ir.Future) -> list[ir.Future]:
        if isinstance(f, ir.Join):
            return [x for sub in f.futures for x in futs(sub)]
        return [f]

    for fn in [*plan.functions, *(t.body for t in plan.tasks)]:
        for st in stmts_in(fn.body):
            found = (
                [st.future]
                if isinstance(st, ir.AwaitS)
                else [a.future for a in st.arms]
                if isinstance(st, ir.Select)
                else []
            )
            if any(isinstance(x, ir.Sleep) for f in found for x in futs(f)):
                return True
    return False


def trace_channels(plan: Plan) -> tuple[tuple[int, ...], ...]:
    """For each task, the channels it sends or receives on (its async fns' included), by
    index in the plan's order: those whose occupancy its traced polls record (a channel
    changes only in the polls of the tasks that use it; runtime/state.py, Trace)."""
    from gasync.planner.effects import task_effects

    effects = task_effects(plan)
    used = [effects[t.name].sends | effects[t.name].recvs for t in plan.tasks]
    return tuple(tuple(c for c, ch in enumerate(plan.channels) if ch.name in mine) for mine in used)


def channel_wakes_one(plan: Plan, suspends: dict[str, bool]) -> bool:
    """Whether a channel's send or receive may wake one waiter instead of all.

    Waking one is right when a woken waiter is sure to try the channel again, or to
    pass the wake on if it completes otherwise. Every await of a send or receive
    does (codegen/futures.py), and so does a select whose arm is a send or receive.
    A select arm that is an async block, a join or a suspending async fn may hold
    a channel's place in line deep inside and drop it when another arm wins; and two
    futures of one join that wait on the same channel side share one place in line,
    which the first to complete would drop for both. With either in the program,
    every channel wakes all its waiters, as before.
    """
    from gasync.planner import ir
    from gasync.planner.walk import stmts_in

    def opaque(f: ir.Future) -> bool:  # may wait on channels inside, out of sight here
        return isinstance(f, ir.AsyncBlock | ir.Join) or (isinstance(f, ir.AsyncCall) and suspends.get(f.fn, True))

    def joins(f: ir.Future) -> list[ir.Join]:
        return [f, *(j for sub in f.futures for j in joins(sub))] if isinstance(f, ir.Join) else []

    for fn in [*plan.functions, *(t.body for t in plan.tasks)]:
        for st in stmts_in(fn.body):
            if isinstance(st, ir.Select) and any(opaque(arm.future) for arm in st.arms):
                return False
            futures = [st.future] if isinstance(st, ir.AwaitS) else []
            futures += [arm.future for arm in st.arms] if isinstance(st, ir.Select) else []
            for j in (j for f in futures for j in joins(f)):
                sides = [(type(f), f.chan) for f in j.futures if isinstance(f, ir.Send | ir.Recv)]
                hidden = sum(1 for f in j.futures if opaque(f))
                if len(set(sides)) < len(sides) or (hidden and hidden + len(sides) >= 2):
                    return False
    return True


def _functions(shared: Shared) -> list[str]:
    plan = shared.plan
    out: list[str] = []
    for fn in plan.functions:
        lines = emit_poll(shared, fn, None) if shared.suspends[fn.name] else emit_plain(shared, fn)
        out += [*lines, "", ""]
    for t in plan.tasks:
        out += [*emit_poll(shared, t.body, t), "", ""]
    done = 0
    while done < len(shared.blocks):  # async blocks (which may hold more blocks)
        block, fn_name = shared.blocks[done]
        out += [*emit_block(shared, block, fn_name), "", ""]
        done += 1
    for loop in shared.parallel:
        out += [*emit_parallel_body(shared, loop), "", ""]
    return out


def _frame_bases(plan: Plan, frames: dict[str, FrameLayout]) -> tuple[list[tuple[str, int, int]], int, int]:
    bases = []
    ni = nf = 0
    for t in plan.tasks:
        fr = frames[t.name]
        bases.append((t.name, ni, nf))
        ni += t.count * fr.n_int
        nf += t.count * fr.n_float
    return bases, max(ni, 1), max(nf, 1)


def _header(
    plan: Plan,
    bases: list[tuple[str, int, int]],
    capacity: int,
    has_bulk: bool,
    arrays: tuple[str, ...],
    wait_in_place: bool,
    shapes: ChannelShapes,
    checks: Checks | None,
) -> list[str]:
    out = [
        f'"""Generated by gasync {__version__} from {inert(plan.path)} -- do not edit.',
        "",
        "Each async fn and task below is a state machine: poll_<name> resumes at the",
        "state saved in word 0 of its frame and returns 1 (READY) or 0 (PENDING).",
        '"""',
        "",
        "import math",
        "from collections import namedtuple",
        "",
        "import numpy as np",
        "from numba import boolean, cuda, float32, float64, int32, int64, uint32, uint64  # noqa: F401",
        "",
        "from gasync.runtime import deviceexec as dx",
        "from gasync.runtime import devicelib as dl",
        "from gasync.runtime import devicesync as dsync",
        "from gasync.runtime import devicevec as dv",
        *groupkernel.header(plan),
    ]
    sites = checks.table() if checks is not None else []
    if sites:
        out.append("from gasync.runtime import devicebounds as db")
    if any(_keyword_in(ext.module, ext.attr) for ext in plan.externs):
        out.append("import importlib")
    for ext in plan.externs:
        if _keyword_in(ext.module, ext.attr):  # (`from class import x` would not parse)
            out.append(f'ext_{ext.name} = getattr(importlib.import_module("{ext.module}"), "{ext.attr}")')
        else:
            out.append(f"from {ext.module} import {ext.attr} as ext_{ext.name}")
    out += ["", f"LANES = {LANES}", f"TOTAL_INSTANCES = {plan.instances}", f"N_INST = {max(plan.instances, 1)}"]
    out += [f"QMASK = {capacity - 1}", f"WMASK = {capacity - 1}", f"SMASK = {capacity - 1}"]
    out += [f"TMASK = {capacity - 1}  # a channel's ticket table: more words than instances"]
    out += [f"N_SIGNALS = {len(plan.signals)}", f"HAS_BULK = {has_bulk}"]
    # service (codegen/services.py) has work only with signals or sleepers: without, Numba
    # drops its calls (each would pass G, which costs compiling: scripts/typing_probe.py)
    out += [f"HAS_SERVICE = {bool(plan.signals) or uses_sleep(plan)}"]
    # an idle executor sleeps at most this long (ns) between looks for work: short when a
    # few tasks hand work to each other (latency), longer when thousands of warps would
    # otherwise hammer the same counters
    out += [f"IDLE_BACKOFF_MAX = {256 if plan.instances <= 64 else 4096}"]
    out += [f"WAIT_IN_PLACE = {wait_in_place}  # a channel await may wait in the poll (state.py)"]
    if wait_in_place:
        # how long it lets queued work wait for an idle executor before it runs it itself: two
        # idle pauses on the GPU; the simulator's threads take turns at the GIL, far slower
        out += ["QUEUE_STALL_NS = 5_000_000 if dl.SIM else 2 * IDLE_BACKOFF_MAX + 1000"]
    for name, bi, bf in bases:
        out.append(f"FB_I_{name} = {bi}")
        out.append(f"FB_F_{name} = {bf}")
    for k, sig in enumerate(plan.signals):
        out.append(f"SIGNAL_{sig.name} = {k}  # also its wait-list resource")
    for c, ch in enumerate(plan.channels):
        out.append(f"CH_{ch.name} = {c}")
        out.append(f"CAP_{ch.name} = {ch.capacity}")
        out += shapes.constants(ch.name)
        out.append(f"RES_RECV_{ch.name} = {len(plan.signals) + 2 * c}")
        out.append(f"RES_SEND_{ch.name} = {len(plan.signals) + 2 * c + 1}")
    for c in plan.consts:
        out.append(f"# const {c.name}: {c.ty} = {c.value}")
    out += sites
    if plan.groups:
        out += ["", "", *groups.declarations(plan)]
    from gasync.runtime.state import STATE_FIELDS  # (not at the top: the runtime package imports codegen)

    fields = ", ".join(f'"{f}"' for f in (*STATE_FIELDS, *arrays))
    out += [
        "",
        "# G, every function's state: the executor's groups of arrays (runtime/state.py: G.sched.ST, ...),",
        "# the trace, then this program's buffers and shared scalars",
        f'State = namedtuple("State", ({fields}))',
        "",
        "",
    ]
    return out


def _keyword_in(module: str, attr: str) -> bool:
    """Whether a part of an extern fn's path (identifiers: planner/symbols.py) is a Python keyword."""
    return any(keyword.iskeyword(part) for part in (*module.split("."), attr))


__all__ = ["Generated", "UnsupportedConstructError", "generate", "source_line"]
