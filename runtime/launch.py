"""Allocate a program's device arrays, launch the executor kernel, read results back.

This code is the same for both backends: it runs in a process where Numba's
CUDA target is either the GPU or the simulator, decided before Numba was
imported (runtime/backends.py). On the GPU the grid is co-resident (no more
blocks than ``max_cooperative_grid_blocks``), since executors spin on each
other; the simulator runs one block, since it runs blocks one after another.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from gasync.codegen import LANES, Generated
from gasync.runtime import buffers
from gasync.runtime.errors import DeadlockError, DeviceError, RunTimeoutError
from gasync.runtime.module import load
from gasync.runtime.options import Result, RunOptions

WARPS_PER_BLOCK = 4
STATE_NAMES = {0: "waiting", 1: "queued", 2: "running", 3: "woken", 4: "done"}


def host_arrays(gen: Generated, executors: int, inputs: dict[str, Any]) -> dict[str, Any]:
    """Every array of G, initialised, on the host (inputs may already be device arrays)."""
    plan = gen.plan
    n = plan.instances
    ni, nf = gen.frame_words
    pi, pf = gen.pargs
    ctl = np.zeros(8, np.int64)
    ctl[2] = sum(t.count for t in plan.tasks if not t.after)  # CTL_INFLIGHT: ready fresh instances
    counts = {t.name: t.count for t in plan.tasks}
    arrays: dict[str, Any] = {
        "FI": np.zeros(ni, np.int64),
        "FF": np.zeros(nf, np.float64),
        "ST": np.zeros(max(n, 1), np.int32),
        "QSEQ": np.arange(gen.queue_capacity, dtype=np.int64),
        "QDATA": np.zeros(gen.queue_capacity, np.int32),
        "QHT": np.zeros(2, np.int64),
        "CTL": ctl,
        "CMD": np.zeros((executors, 4), np.int64),
        "PARGS_I": np.zeros((executors, pi), np.int64),
        "PARGS_F": np.zeros((executors, pf), np.float64),
        "SIG": np.zeros(max(len(plan.signals), 1), np.int32),
        "STATS": np.zeros((executors, 4), np.int64),
        "CURSOR": np.zeros(max(len(plan.tasks), 1), np.int64),
        "PRED": np.array([sum(counts[p] for p in t.after) for t in plan.tasks] or [0], np.int64),
    }
    for b in plan.buffers:
        arrays[f"B_{b.name}"] = inputs[b.name] if b.init == "input" else buffers.initial(b)
    for s in plan.shared:
        arrays[f"S_{s.name}"] = np.array([s.init], buffers.dtype_of(s.ty))
    return arrays


def execute(gen: Generated, options: RunOptions, sim: bool) -> Result:
    """Run ``gen`` on the current Numba CUDA target and collect its results."""
    from numba import cuda

    t0 = time.perf_counter()
    module, path = load(gen, options.cache_dir)
    kernel = module.gasync_kernel
    timeout_ns = np.int64(int(options.timeout_s * 1e9))
    mode = np.int64(1 if options.executor == "spin" else 0)
    compile_s = 0.0
    if sim:
        executors = options.executors or 2
        blocks, threads = 1, executors * LANES
    else:
        # compile first (or load from Numba's cache): the grid size depends on the kernel
        one = host_arrays(gen, 1, options.inputs)
        probe = tuple(_to_device(cuda, one[k]) for k in gen.arrays)
        t1 = time.perf_counter()
        kernel = kernel.specialize(probe, timeout_ns, mode)
        compile_s = time.perf_counter() - t1
        executors, blocks, threads = _grid(kernel, gen, options)
    host = host_arrays(gen, executors, options.inputs)
    device = {k: _to_device(cuda, v) for k, v in host.items()}
    args = tuple(device[k] for k in gen.arrays)
    t2 = time.perf_counter()
    kernel[blocks, threads](args, timeout_ns, mode)
    cuda.synchronize()
    kernel_s = time.perf_counter() - t2
    back = {k: _to_host(device[k]) for k in ("CTL", "ST", "STATS", "SIG")}
    stats = {
        "backend": "sim" if sim else "cuda",
        "executor": options.executor,
        "executors": executors,
        "blocks": blocks,
        "threads_per_block": threads,
        "tasks": len(gen.plan.tasks),
        "instances": gen.plan.instances,
        "polls": int(back["STATS"][:, 0].sum()),
        "idle_spins": int(back["STATS"][:, 1].sum()),
        "frame_bytes": 8 * sum(gen.frame_words),
        "compile_s": round(compile_s, 4),
        "kernel_ms": round(kernel_s * 1e3, 3),
        "total_s": round(time.perf_counter() - t0, 4),
        "module": str(path),
    }
    _check_exit(gen, back, options)
    return Result(
        buffers={b.name: _to_host(device[f"B_{b.name}"]) for b in gen.plan.buffers},
        shared={s.name: _to_host(device[f"S_{s.name}"])[0].item() for s in gen.plan.shared},
        signals={s.name: bool(back["SIG"][k]) for k, s in enumerate(gen.plan.signals)},
        stats=stats,
    )


def _to_device(cuda: Any, arr: Any) -> Any:
    if isinstance(arr, np.ndarray):
        return cuda.to_device(arr)
    return cuda.as_cuda_array(arr)  # already on the device: no host copy


def _to_host(arr: Any) -> np.ndarray[Any, Any]:
    return arr.copy_to_host() if hasattr(arr, "copy_to_host") else np.asarray(arr)


def _grid(spec: Any, gen: Generated, options: RunOptions) -> tuple[int, int, int]:
    threads = WARPS_PER_BLOCK * LANES
    kern = next(iter(spec.overloads.values()))
    max_blocks = int(kern.max_cooperative_grid_blocks(threads))
    want = options.executors or max(1, gen.plan.instances)
    blocks = max(1, min(max_blocks, -(-want // WARPS_PER_BLOCK)))
    return blocks * WARPS_PER_BLOCK, blocks, threads


def _check_exit(gen: Generated, back: dict[str, Any], options: RunOptions) -> None:
    code = int(back["CTL"][1])
    if code == 1 or (code == 2 and int(back["CTL"][0]) >= gen.plan.instances):
        return  # (a deadline that passed as the last instance finished is no timeout)
    unfinished = _unfinished(gen, back["ST"])
    if code == 2:
        raise RunTimeoutError(f"the run exceeded --timeout {options.timeout_s:g}s; unfinished: {unfinished}")
    if code == 4:
        raise DeadlockError(f"deadlock: no task can make progress; waiting: {unfinished}")
    raise DeviceError(f"the executor stopped with code {code}; unfinished: {unfinished}")


def _unfinished(gen: Generated, st: np.ndarray[Any, Any]) -> str:
    parts = []
    for t in gen.plan.tasks:
        states = st[t.first_instance : t.first_instance + t.count]
        left = [k for k, s in enumerate(states) if s != 4]
        if left:
            label = (
                t.name
                if t.count == 1
                else f"{t.name}[{', '.join(map(str, left[:8]))}{', ...' if len(left) > 8 else ''}]"
            )
            parts.append(f"{label} ({STATE_NAMES.get(int(states[left[0]]), '?')})")
    return ", ".join(parts) or "none"
