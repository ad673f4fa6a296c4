"""Allocate a program's device arrays, launch the executor kernel, read results back.

This code is the same for both backends: it runs in a process where Numba's
CUDA target is either the GPU or the simulator, decided before Numba was
imported (runtime/backends.py). On the GPU the grid is co-resident (no more blocks than
``max_cooperative_grid_blocks``), since executors spin on each other; the simulator runs one
block, since it runs blocks one after another."""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gasync.codegen import LANES, Generated
from gasync.runtime import cubins, groupgrid, hostgc, kernelargs, outputs, prepared, simmath, slab
from gasync.runtime.errors import InputError, RunError, worded
from gasync.runtime.exits import check_exit, is_out_of_memory, out_of_memory
from gasync.runtime.hoststate import device_state, host_arrays  # noqa: F401  (launch.host_arrays: scripts, prepared.py)
from gasync.runtime.module import load
from gasync.runtime.options import Result, RunOptions
from gasync.runtime.runstats import device_label, span_ms
from gasync.runtime.state import EVENT_WORDS, Ctl, Exit, Ring, Stat, TraceCol

WARPS_PER_BLOCK = 4


@dataclass
class Launched:
    """A finished kernel: its arrays by name, its grid, where its time went, and how it was launched."""

    device: dict[str, Any]
    grid: tuple[int, int, int]  # executors, blocks, threads per block
    compile_s: float
    prepare_s: float  # the compiled kernel in hand to the launch call: the state built, or reset
    launch_s: float  # the launch call (the GPU: asynchronous)
    kernel_s: float  # the launch call to the end of the kernel
    path: str = ""  # "prepared", or "compiled kernel: <why not prepared>" (the GPU only)
    call: str = ""  # a prepared launch's call: "cuLaunchKernel", or "cuda.core launch: <why not>"
    kernel_from: str = ""  # the GPU: "Numba" (compiled, or Numba's cache), or "kept cubin" (runtime/cubins.py)
    release: Callable[[], None] = lambda: None  # hands a prepared launch back


def execute(gen: Generated, options: RunOptions, sim: bool) -> Result:
    """Run ``gen`` on the current Numba CUDA target and collect its results."""
    from numba import cuda

    t0 = time.perf_counter()
    groupgrid.check_executor(gen.plan, options.executor)
    if not sim and gen.plan.groups:
        groupgrid.check_shared(gen, groupgrid.shared_limit(cuda))
    module, path = load(gen, options.cache_dir, options.cache_max_bytes)
    kernel = kernel_of(module, options)
    timeout_ns = np.int64(int(options.timeout_s * 1e9))
    mode = np.int64(1 if options.executor == "spin" else 0)
    try:
        if sim:
            run = _launch_sim(cuda, gen, options, module, kernel, (timeout_ns, mode))
        else:
            run = _launch_gpu(cuda, gen, options, module, str(path), (timeout_ns, mode))
    except Exception as exc:
        raise out_of_memory(gen, exc) if is_out_of_memory(exc) else exc from None
    try:
        return _collect(cuda, gen, options, run, str(path), t0, sim, getattr(module, "BOUNDS_SITES", ()))
    finally:
        run.release()  # after the results were copied out of the kept state


KERNEL_NAMES = ("gasync_kernel", "gasync_spin_kernel")  # (codegen/kernel.py) the queue executor's, the spin's


def kernel_of(module: Any, options: RunOptions) -> Any:
    """The generated module's kernel for ``options``' executor (codegen/kernel.py: one each,
    so a run compiles only its own)."""
    return getattr(module, KERNEL_NAMES[options.executor == "spin"])


def _launch_sim(
    cuda: Any, gen: Generated, options: RunOptions, module: Any, kernel: Any, scalars: tuple[Any, Any]
) -> Launched:
    """The simulated launch blocks: the host's signals come from timer threads."""
    from gasync.runtime import simblock  # (the simulator's own module: not on the GPU)

    simblock.install()  # a thread that fails ends the block at once
    executors = max(options.executors or groupgrid.sim_executors(gen.plan), groupgrid.group_warps(gen.plan))
    blocks, threads = 1, executors * LANES
    host = host_arrays(gen, executors, options.inputs, options.trace_capacity)
    schedule = _signal_schedule(gen, options, host)
    device, hostsig = _allocate(cuda, host, sim=True)
    module.math = simmath.MATH  # IEEE answers where Python's math raises, as on the GPU
    args = device_state(module, device)
    at_launch(schedule, hostsig)
    t2 = time.perf_counter()
    timers = [threading.Timer(delay, hostsig.__setitem__, (k, 1)) for delay, k in schedule if delay > 0]
    for t in timers:
        t.start()
    kernel[blocks, threads, 0, gen.dynamic_shared](args, *scalars)
    launch_s = time.perf_counter() - t2
    for t in timers:
        t.cancel()
    return Launched(device, (executors, blocks, threads), 0.0, 0.0, launch_s, time.perf_counter() - t2)


def _launch_gpu(
    cuda: Any, gen: Generated, options: RunOptions, module: Any, path: str, scalars: tuple[Any, Any]
) -> Launched:
    """The prepared launch (runtime/prepared.py) where it can run, else the compiled kernel's own."""
    pending = np.zeros(max(len(gen.plan.signals), 1), np.int32)
    schedule = _signal_schedule(gen, options, {"HOSTPEND": pending})  # an unknown name fails before any work
    host_outputs = outputs.output_kind(options.inputs, options.outputs) == "host"
    initial = prepared.initial_values(gen.plan)
    key = prepared.key_of(path, id(cuda.current_context()), options, gen.trace, host_outputs, initial)
    entry, why = prepared.CACHE.checkout(key) if key else (None, "a host input is not C-contiguous")
    compile_s, t1, device = 0.0, time.perf_counter(), None
    if entry is None:
        sig, compile_s, grid, kern = _compile(cuda, gen, options, module, scalars, path)
        t1 = time.perf_counter()
        host = host_arrays(gen, grid[0], options.inputs, options.trace_capacity)
        host["HOSTPEND"][:] = pending
        if not why:
            entry, device, why = _prepare(cuda, gen, options, module, (sig, kern), grid, host, host_outputs)
        if entry is None:
            # its grid, block, stream and dynamic shared memory, as cuda.core takes them
            cfg = kernel_of(module, options)[grid[1], grid[2], 0, gen.dynamic_shared]
            if getattr(kern, "kept", False):  # a kept kernel (runtime/cubins.py): Numba's own, compiled now
                _numba_compile(kernel_of(module, options), gen, sig)
            return _launch_compiled(cuda, module, cfg, sig, grid, host, schedule, scalars, (compile_s, t1), why)
        assert key is not None
        prepared.CACHE.insert(key, entry)  # checked out to this run until it is released
    try:
        if device is None:
            device = entry.reset(options.inputs)
        at_launch(schedule, entry.hostsig)
        t2 = time.perf_counter()
        entry.launch(*scalars)
        launch_s = time.perf_counter() - t2
        _deliver(schedule, entry.hostsig, t2)
        cuda.synchronize()
        kernel_s = time.perf_counter() - t2
    except BaseException:
        prepared.CACHE.release(entry)
        raise
    grid = (entry.executors, entry.blocks, entry.threads)

    def release() -> None:
        prepared.CACHE.release(entry)

    return Launched(device, grid, compile_s, t2 - t1, launch_s, kernel_s, "prepared", release=release,
                    call=entry.args.call, kernel_from="kept cubin" if entry.args.kept else "Numba")  # fmt: skip


def _prepare(cuda: Any, gen: Generated, options: RunOptions, module: Any, compiled: tuple[Any, Any],
             grid: tuple[int, int, int], host: dict[str, Any], host_outputs: bool) -> tuple[Any, Any, str]:  # fmt: skip
    """A new prepared launch for this run, and its arrays; or (None, None, why not).
    ``compiled``: the signature, and the compiled (or kept: runtime/cubins.py) kernel."""
    buffers = {b.name for b in gen.plan.buffers}
    layout = slab.plan_layout(host, slab.roles_of(host, options.inputs, buffers, host_outputs))
    to_device, state_of = functools.partial(_to_device, cuda), functools.partial(device_state, module)
    sig, kern = compiled
    target = prepared.Target(kernel_of(module, options), sig, grid, to_device, state_of, gen.dynamic_shared, kern)
    return prepared.build(cuda, target, layout, host, options.inputs)


def _compile(cuda: Any, gen: Generated, options: RunOptions, module: Any, scalars: tuple[Any, Any],
             path: str) -> tuple[Any, float, tuple[int, int, int], Any]:  # fmt: skip
    """The kernel's signature, compile time, grid and compiled kernel: compiled first (or loaded
    from Numba's cache, or kept: runtime/cubins.py), since the grid size depends on the kernel."""
    kernel = kernel_of(module, options)
    one = host_arrays(gen, 1, options.inputs)
    probe = device_state(module, {k: _to_device(cuda, v) for k, v in one.items()})
    t1 = time.perf_counter()
    sig = tuple(kernel.typeof_pyval(a) for a in (probe, *scalars))
    name, device = KERNEL_NAMES[options.executor == "spin"], cuda.get_current_device() if cubins.ENABLED else None
    kept = cubins.load(cuda, Path(path), name, sig) if cubins.ENABLED else None
    if kept is not None:
        kern = kernelargs.stand_in(kept)
        try:
            grid = _grid(cubins.Asked(kept, device), gen, options)
            if gen.dynamic_shared:
                kernelargs.opt_in_shared(kern, gen.dynamic_shared)
            return sig, time.perf_counter() - t1, grid, kern
        except LookupError:  # a block size or device the record has not seen: compile
            pass
    kern = _numba_compile(kernel, gen, sig)
    compile_s = time.perf_counter() - t1
    grid = _grid(kern, gen, options)
    if cubins.ENABLED:
        blocks = kern.max_cooperative_grid_blocks(grid[2], gen.dynamic_shared)
        cubins.save(Path(path), name, sig, kern, device, grid[2], gen.dynamic_shared, blocks)
    return sig, compile_s, grid, kern


def _numba_compile(kernel: Any, gen: Generated, sig: Any) -> Any:
    """``kernel`` compiled for ``sig`` through Numba's on-disk cache (specialize() would not use it)."""
    from gasync.pipeline import deep  # Numba types a chain of awaits as a chain of calls

    with hostgc.sparse():  # few collections while Numba builds objects that live until it ends
        deep(kernel.compile, sig)
    if gen.dynamic_shared:  # before the occupancy query, which counts only what the kernel may take
        kernelargs.opt_in_shared(kernel.overloads[sig], gen.dynamic_shared)
    return kernel.overloads[sig]


def _launch_compiled(cuda: Any, module: Any, cfg: Any, sig: Any, grid: tuple[int, int, int], host: dict[str, Any],
                     schedule: list[tuple[float, int]], scalars: tuple[Any, Any], times: tuple[float, float],
                     why: str) -> Launched:  # fmt: skip
    """The compiled kernel's own launch, past the dispatcher's look-up by argument types (it
    types each of G's arrays on every call); it marshals G's arrays on every call. Used
    where a prepared launch is not (runtime/prepared.py lists when, ``why`` says which)."""
    compile_s, t1 = times
    device, hostsig = _allocate(cuda, host, sim=False)
    args = device_state(module, device)
    at_launch(schedule, hostsig)
    t2 = time.perf_counter()
    # Asynchronous: no host arrays among the arguments.
    cfg.dispatcher.overloads[sig].launch((args, *scalars), cfg.griddim, cfg.blockdim, cfg.stream, cfg.sharedmem)
    launch_s = time.perf_counter() - t2
    _deliver(schedule, hostsig, t2)
    cuda.synchronize()
    kernel_s = time.perf_counter() - t2
    return Launched(device, grid, compile_s, t2 - t1, launch_s, kernel_s, f"compiled kernel: {why}")


def _allocate(cuda: Any, host: dict[str, Any], sim: bool) -> tuple[dict[str, Any], Any]:
    """Every array on the device, new; HOSTSIG in host-mapped memory (returned too: the host sets it)."""
    device = {k: _to_device(cuda, v) for k, v in host.items() if k != "HOSTSIG"}
    hostsig = cuda.mapped_array(host["HOSTSIG"].shape, np.int32)  # the host writes, the kernel reads
    hostsig[:] = 0
    device["HOSTSIG"] = hostsig if sim else cuda.as_cuda_array(hostsig)
    return device, hostsig


def at_launch(schedule: list[tuple[float, int]], hostsig: Any) -> None:
    """Set each --signal of delay 0 before the launch: every executor looks at the host's
    signals before its first poll (codegen/kernel.py), so the first poll sees it set."""
    for delay, k in schedule:
        if delay <= 0:
            hostsig[k] = 1


def _deliver(schedule: list[tuple[float, int]], hostsig: Any, t2: float) -> None:
    """Set each later --signal in host-mapped memory at its time after the launch call began (``t2``)."""
    for delay, k in schedule:
        if delay <= 0:
            continue
        time.sleep(max(0.0, t2 + delay - time.perf_counter()))
        hostsig[k] = 1


def _collect(
    cuda: Any,
    gen: Generated,
    options: RunOptions,
    run: Launched,
    path: str,
    t0: float,
    sim: bool,
    sites: tuple[Any, ...],
) -> Result:
    """The run's results and stats from its device arrays; raises what its exit code says
    (``sites``: the module's bounds-check sites, for a fault's wording)."""
    device = run.device
    executors, blocks, threads = run.grid
    back = {k: outputs.to_host(device[k]) for k in ("CTL", "ST", "STATS", "SIG", "WAITON", "QHT")}
    if int(back["CTL"][Ctl.EXIT]) != Exit.OK:  # the state words say where each waits (runtime/exits.py)
        # and the closed flags: a recv from a closed channel never completes, the report says so
        back.update({k: outputs.to_host(device[k]) for k in ("FI", "CHCLOSED") if k in device})
    trace = _trace(gen, device["TRACE"], back["CTL"], executors, sim) if gen.trace else None
    stats = {
        "backend": "sim" if sim else "cuda",
        "executor": options.executor,
        "executors": executors,
        "blocks": blocks,
        "threads_per_block": threads,
        "tasks": len(gen.plan.tasks),
        "instances": gen.plan.instances,
        "polls": int(back["STATS"][:, Stat.POLLS].sum()),
        "wakes": int(back["QHT"][Ring.TAIL]),  # instances put on the run queue: woken while waiting, or yielding
        "closed_sends": int(back["CTL"][Ctl.CLOSED_SENDS]),
        "idle_spins": int(back["STATS"][:, Stat.IDLE].sum()),
        "waits_in_place": int(back["STATS"][:, Stat.SPUN].sum()),  # channel awaits that did not suspend
        # the SMs of the executors that polled (the simulator's are all 0)
        "sms": sorted({int(sm) for sm in back["STATS"][back["STATS"][:, Stat.POLLS] > 0, Stat.SMID]}),
        "frame_bytes": 8 * sum(gen.frame_words),
        "compile_s": round(run.compile_s, 4),
        "kernel_ms": round(run.kernel_s * 1e3, 3),
        "launch_ms": round(run.launch_s * 1e3, 3),  # the launch call's own time (the GPU: asynchronous)
        # the longest executor's own time, first look to exit: kernel_ms less launch and teardown
        "device_ms": round(float(back["STATS"][:, Stat.ELAPSED_NS].max()) / 1e6, 3),
        # the first executor's first look to the last one's exit (one clock: %globaltimer on the
        # GPU): kernel_ms less this is the launch call, the kernel's start and its teardown
        "span_ms": span_ms(back["STATS"]),
        "total_s": round(time.perf_counter() - t0, 4),
        "module": path,
        "device": "simulator" if sim else device_label(cuda),
    }
    if not sim:
        stats["prepare_ms"] = round(run.prepare_s * 1e3, 3)  # the state built or reset, before the launch call
        stats["launch_path"] = run.path
        stats["launch_call"] = run.call or "the compiled kernel's own launch"
        stats["kernel_from"] = run.kernel_from or "Numba"
        from gasync.runtime import linked  # (imported here: a simulated run's process never loads Numba's compiler)

        stats["helpers"] = dict(linked.STATS)  # gasync's helper signatures read, compiled, or Numba's alone
    try:
        check_exit(gen, back, options, sites, blocks)
    except RunError as exc:  # the trace up to the stop goes with it (gasync run --trace writes it)
        exc.trace = trace
        raise
    kind = outputs.output_kind(options.inputs, options.outputs)
    given = options.inputs
    return Result(
        buffers={b.name: outputs.convert(device[f"B_{b.name}"], kind, given.get(b.name)) for b in gen.plan.buffers},
        shared={s.name: _shared_value(s.ty, outputs.to_host(device[f"S_{s.name}"])[0]) for s in gen.plan.shared},
        signals={s.name: bool(back["SIG"][k]) for k, s in enumerate(gen.plan.signals)},
        stats=stats,
        trace=trace,
    )


def _trace(gen: Generated, dev: Any, ctl: np.ndarray[Any, Any], executors: int, sim: bool) -> Any:
    """The device's event buffer as a RawTrace (events in time order, and the polls' counters)."""
    from gasync.runtime.trace import RawTrace, counters_of, state_labels

    rows = outputs.to_host(dev)
    n = int(ctl[Ctl.TRACE_N])  # events recorded, including those that did not fit
    kept = rows[: min(n, len(rows))]
    kept = kept[np.argsort(kept[:, TraceCol.T0], kind="stable")]
    plan = gen.plan
    # (a counted channel has no ring: the trace says so by name)
    channels = [(ch.name + (" (counted)" if ch.name in gen.counted else ""), ch.capacity) for ch in plan.channels]
    lists = kept.tolist()  # Python ints, row by row
    return RawTrace(
        events=[tuple(row[:EVENT_WORDS]) for row in lists],  # type: ignore[misc]
        dropped=max(0, n - len(rows)),
        capacity=len(rows),
        tasks=[(t.name, t.first_instance, t.count) for t in plan.tasks],
        states=state_labels(plan, gen.internal_states),
        executors=executors,
        backend="sim" if sim else "cuda",
        channels=channels,
        counters=counters_of(lists, [t.first_instance + t.count for t in plan.tasks], gen.trace_channels, channels),
        groups=[(t.name, g.name, t.per_copy, g.start) for t in plan.tasks if (g := plan.group_of(t)) is not None],
        unranged=[g.name for g in plan.groups if g.var is None],
    )


def _shared_value(ty: str, word: Any) -> Any:
    return bool(word) if ty == "bool" else word.item()


def _signal_schedule(gen: Generated, options: RunOptions, host: dict[str, Any]) -> list[tuple[float, int]]:
    """(delay, signal index) for each --signal, in time order; marks them pending for the kernel."""
    index = {sig.name: k for k, sig in enumerate(gen.plan.signals)}
    out = []
    for name, delay in options.signals.items():
        if name not in index:
            detail = f"the program has no signal named '{name}'"
            raise worded(InputError(f"signals['{name}']: {detail}"), f"--signal {name}: {detail}")
        host["HOSTPEND"][index[name]] = 1
        out.append((float(delay), index[name]))
    return sorted(out)


def _to_device(cuda: Any, arr: Any) -> Any:
    if isinstance(arr, np.ndarray):
        return cuda.to_device(arr)
    if hasattr(arr, "copy_to_host"):
        return arr  # a Numba device array (the simulator's too, which has no __cuda_array_interface__)
    return cuda.as_cuda_array(arr)  # already on the device: no host copy


def _grid(kern: Any, gen: Generated, options: RunOptions) -> tuple[int, int, int]:
    # a program with groups: blocks of its largest instance's warps (a block runs one instance at
    # a time, and warps beyond its tasks only wait at the block's meeting: B8's two-warp groups
    # in blocks of four left half an SM's resident warps idle)
    grouped = groupgrid.group_warps(gen.plan)
    per_block = max(options.warps_per_block or grouped or WARPS_PER_BLOCK, grouped)
    threads = per_block * LANES
    max_blocks = int(kern.max_cooperative_grid_blocks(threads, gen.dynamic_shared))
    if max_blocks < 1 and gen.plan.groups:
        raise groupgrid.fit_error(gen.plan, per_block, int(kern.regs_per_thread))
    # one warp per task instance, and the whole GPU when a bulk for spreads chunks over idle warps
    whole = max_blocks * per_block
    want = options.executors or (whole if gen.jobargs != (0, 0) else max(1, gen.plan.instances))
    blocks = max(1, min(max_blocks, -(-want // per_block)))
    return blocks * per_block, blocks, threads
