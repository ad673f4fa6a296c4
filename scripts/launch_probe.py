"""Where a run's fixed time goes on the GPU (issue 11, S0/S5): launch call, device time, the rest.

For B1 (1M tiny tasks), B5 (bulk for over 2^28) and an empty bulk program, three runs
each through ``Program.run``, with prepared launches (runtime/prepared.py, the default)
and without (the compiled kernel's own launch): ``kernel_ms`` (host wall time, launch to
synchronize), ``launch_ms`` (the launch call alone, which returns before the kernel
ends), ``prepare_ms`` (the state reset or built), ``device_ms`` (the longest executor's
first look to its exit). Then the launch paths side by side on the same arrays: the
dispatcher's (it types every array of G on each call), the compiled kernel's (it
marshals them on each call), the parameters marshalled once by hand, and a prepared
launch (the reset before each launch timed apart).
Usage (device machine): python3 scripts/launch_probe.py
"""

from __future__ import annotations

import functools
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import run as bench_run  # noqa: E402

bench_run.ensure_importable()

import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

import gasync  # noqa: E402
from gasync.runtime import launch, prepared, slab  # noqa: E402

CASES = {
    "B1 1M tasks": (ROOT / "bench/programs/b1_tasks.gasync", {"N": 1 << 20}, {}),
    "B5 2^28": (ROOT / "bench/programs/b5_bulk.gasync", {"N": 1 << 28}, "xy"),
    "bulk over 1": (ROOT / "bench/programs/b5_bulk.gasync", {"N": 1}, "xy"),
}


def main() -> None:
    for label, (path, defines, inputs) in CASES.items():
        prog = gasync.compile(path, defines=defines)
        n = defines["N"]
        ins = {}
        if inputs:
            ins = {"x": cuda.to_device(np.arange(n, dtype=np.float32)), "y": cuda.device_array(n, np.float32)}
        prog.run(backend="cuda", inputs=ins)  # compile and warm
        for entries in (prepared.MAX_ENTRIES, 0):  # Program.run with prepared launches, then without
            prepared.CACHE.max_entries = entries
            for _ in range(3):
                s = prog.run(backend="cuda", inputs=ins).stats
                print(
                    f"{label}: kernel_ms {s['kernel_ms']} launch_ms {s['launch_ms']} prepare_ms {s['prepare_ms']} "
                    f"device_ms {s['device_ms']} executors {s['executors']} launch_path {s['launch_path']!r}",
                    flush=True,
                )
        prepared.CACHE.max_entries = prepared.MAX_ENTRIES
        prepared.CACHE.clear()
        # the dispatcher's path on the same kind of arrays, for comparison
        gen = prog.generated
        module, _ = launch.load(gen, None)
        kernel = module.gasync_kernel
        sig = next(iter(kernel.overloads))
        executors, blocks, threads = launch._grid(kernel.overloads[sig], gen, launch.RunOptions())
        host = launch.host_arrays(gen, executors, ins)
        dev = {k: launch._to_device(cuda, v) for k, v in host.items()}
        args = launch.device_state(module, dev)
        kern = kernel.overloads[sig]
        full = (args, np.int64(0), np.int64(0))
        prep = []
        for _ in range(3):
            t = time.perf_counter()
            kernelargs: list[object] = []
            for ty, v in zip(kern.argument_types, full, strict=True):
                kern._prepare_args(ty, v, 0, [], kernelargs)
            prep.append(round((time.perf_counter() - t) * 1e3, 3))
        print(f"{label}: marshalling {len(kernelargs)} kernel parameters (ms): {prep}", flush=True)
        from numba.cuda.dispatcher import LaunchConfig
        from numba.cuda.dispatcher import launch as core_launch

        cufunc = kern._codelibrary.get_cufunc()
        cfg = kernel[blocks, threads]
        entry = _prepared(gen, module, sig, (executors, blocks, threads), ins)
        for how in ("dispatcher", "overload", "prebuilt", "prepared"):
            times, resets = [], []
            try:
                for _ in range(3):
                    t = time.perf_counter()
                    if how == "prepared":
                        entry.reset(ins)  # ends with a synchronize
                    else:
                        for k, v in launch.host_arrays(gen, executors, ins).items():
                            if isinstance(v, np.ndarray):
                                dev[k].copy_to_device(v)
                        cuda.synchronize()
                    resets.append(round((time.perf_counter() - t) * 1e3, 3))
                    t = time.perf_counter()
                    if how == "dispatcher":
                        kernel[blocks, threads](*full)
                    elif how == "overload":
                        kern.launch(full, cfg.griddim, cfg.blockdim, cfg.stream, 0)
                    elif how == "prebuilt":  # the parameters marshalled once, straight to cuda.core's launch
                        config = LaunchConfig(grid=(blocks, 1, 1), block=(threads, 1, 1), shmem_size=0)
                        core_launch(cfg.stream, config, cufunc.kernel, *kernelargs)
                    else:  # runtime/prepared.py's launch: what Program.run does now
                        entry.launch(np.int64(0), np.int64(0))
                    t_call = time.perf_counter() - t
                    cuda.synchronize()
                    times.append((round(t_call * 1e3, 3), round((time.perf_counter() - t) * 1e3, 3)))
            except Exception as exc:  # a probe of Numba's internals: say what failed and go on
                print(f"{label}: {how}: {type(exc).__name__}: {exc}", flush=True)
                continue
            print(
                f"{label}: {how} launch call / launch to sync (ms): {times}; state set before (ms): {resets}",
                flush=True,
            )
        entry.free()


def _prepared(gen: Any, module: Any, sig: Any, grid: tuple[int, int, int], ins: dict[str, Any]) -> Any:
    """A prepared launch of ``gen`` on ``grid``, as launch.execute builds one (results to the host)."""
    host = launch.host_arrays(gen, grid[0], ins)
    roles = slab.roles_of(host, ins, {b.name for b in gen.plan.buffers}, host_outputs=True)
    layout = slab.plan_layout(host, roles)
    to_device, state_of = functools.partial(launch._to_device, cuda), functools.partial(launch.device_state, module)
    target = prepared.Target(module.gasync_kernel, sig, grid, to_device, state_of)
    entry, _, why = prepared.build(cuda, target, layout, host, ins)
    if entry is None:
        raise SystemExit(f"no prepared launch: {why}")
    image, zero = layout.region(slab.Role.IMAGE), layout.region(slab.Role.ZERO)
    print(
        f"prepared: {len(layout.of(*slab.SLAB))} arrays in one slab of {layout.total_bytes} bytes; a reset copies "
        f"{image[1] - image[0]} bytes device to device, zeroes {zero[1] - zero[0]} (one memset), copies "
        f"{len(layout.of(slab.Role.HOST_INPUT))} host inputs in; {len(entry.params)} kernel parameters",
        flush=True,
    )
    return entry


if __name__ == "__main__":
    main()
