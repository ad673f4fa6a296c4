"""Where a prepared launch's call goes (bench/NOTES.md, the twenty-first session): run 37 measured
it at ~0.07 ms with the direct launch and with cuda.core's alike, so the ~310 parameters'
conversion is not it. This times each step of ``Prepared.launch`` on B4's program (the two
scalars' marshalling, the update of the kept pointers, the launch itself), then the driver's
launch of the same kernel on the same pointers back to back (no reset, no synchronize between:
what the driver call alone costs), then a one-parameter Numba kernel's launch, in one process,
and a cProfile of ten runs' launch calls. First, the tree's own launch call; with the driver's
calls after a reset, one with Python's collector off (run 58: no different, so the collector is
not the call's 35-70 us after a reset).

Usage on the device: python3 scripts/launch_parts_probe.py [RUNS]"""

from __future__ import annotations

import cProfile
import gc
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import gasync
from gasync.runtime import kernelargs, prepared

ROOT = Path(__file__).resolve().parent.parent


def _median_us(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1e6:8.1f} us"


def driver_calls(entry: prepared.Prepared, runs: int, before: Callable[[], object], gc_off: bool = False) -> str:
    """The median of the driver's launch call alone on ``entry``'s kept parameters, each call
    after ``before()`` and a synchronize (the first call left out); ``gc_off``: with Python's
    collector disabled over the call."""
    from numba import cuda

    took = []
    for _ in range(runs):
        before()
        cuda.synchronize()
        if gc_off:
            gc.disable()
        t0 = time.perf_counter()
        entry.args.launch(entry.stream, entry.params)
        took.append(time.perf_counter() - t0)
        gc.enable()
        cuda.synchronize()
    return _median_us(took[1:])


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    kernelargs.DIRECT = True
    prog = gasync.compile(ROOT / "bench/programs/b4_loader.gasync", defines={"N": 1 << 20, "TILE": 65536, "C": 16})
    inputs = {"x": np.ones(1 << 20, np.float32), "y": np.zeros(1 << 20, np.float32)}
    prepared.CACHE.clear()
    got = [prog.run(backend="cuda", inputs=inputs).stats for _ in range(runs)]
    own = [st["launch_ms"] / 1e3 for st in got]
    kernel = [st["kernel_ms"] / 1e3 for st in got]
    print(f"the tree's launch call: {_median_us(own[1:])}; to sync {_median_us(kernel[1:])}")
    prepared.CACHE.clear()
    parts: dict[str, list[float]] = {"marshal timeout": [], "marshal mode": [], "update": [], "driver launch": []}
    seen: list[prepared.Prepared] = []
    original = prepared.Prepared.launch

    def timed(self: prepared.Prepared, timeout_ns: object, mode: object) -> None:
        t0 = time.perf_counter()
        timeout = self.args.marshal(self.sig[1], timeout_ns, self.stream)
        t1 = time.perf_counter()
        m = self.args.marshal(self.sig[2], mode, self.stream)
        t2 = time.perf_counter()
        self.params[-2:] = [*timeout, *m]
        self.args.update(len(self.params) - 2, self.params[-2:])
        t3 = time.perf_counter()
        self.args.launch(self.stream, self.params)
        t4 = time.perf_counter()
        for name, dt in zip(parts, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
            parts[name].append(dt)
        seen.append(self)

    prepared.Prepared.launch = timed  # type: ignore[method-assign]
    try:
        calls = []
        for _ in range(runs):
            calls.append(prog.run(backend="cuda", inputs=inputs).stats["launch_ms"] / 1e3)
    finally:
        prepared.Prepared.launch = original  # type: ignore[method-assign]
    entry = seen[-1]
    print(f"launch path: {entry.args.call}; {len(entry.params)} parameters; grid {entry.blocks} x {entry.threads}")
    print(f"the call as it stood in run 40, in parts (stats launch_ms): {_median_us(calls[1:])}")
    for name, xs in parts.items():
        print(f"  {name:30s} {_median_us(xs[1:])}")

    # the driver's launch alone, back to back on the kept pointers (the kernel ends at once: mode
    # and timeout as the last run left them; each launch queues behind the one before)
    from numba import cuda

    entry.reset(inputs)
    print(f"driver launch, GPU idle before each: {driver_calls(entry, runs, lambda: None)}")
    queued: list[float] = []
    t0 = time.perf_counter()
    for _ in range(runs):
        t1 = time.perf_counter()
        entry.args.launch(entry.stream, entry.params)
        queued.append(time.perf_counter() - t1)
    t_all = time.perf_counter() - t0
    cuda.synchronize()
    print(f"driver launch, queued back to back: {_median_us(queued[1:])} (all {runs}: {t_all * 1e3:.2f} ms)")

    # the driver's call alone after a whole reset (which synchronizes), then after one more
    # operation of one kind and a synchronize: is the call slow after any reset, or after the
    # last operation on the stream being a copy, a memset or an allocation, and fast after a kernel?
    @cuda.jit
    def one(out):  # type: ignore[no-untyped-def]
        out[0] = 1

    out = cuda.device_array(1, np.int32)
    one[1, 32](out)
    scratch = cuda.device_array(1 << 20, np.float32)
    scratch2 = cuda.device_array(1 << 20, np.float32)
    host = np.ones(1 << 20, np.float32)
    extra = {
        "nothing more": lambda: None,
        "a one-thread kernel": lambda: one[1, 32](out),
        "a memset of 4 MB": lambda: scratch.gpu_data.memset(0, scratch.nbytes),
        "a device-to-device copy of 4 MB": lambda: scratch2.copy_to_device(scratch),
        "a host-to-device copy of 4 MB": lambda: scratch.copy_to_device(host),
        "a new 4 KB device array": lambda: cuda.device_array(1024, np.float32),
    }
    for name, op in extra.items():
        took = driver_calls(entry, runs, lambda op=op: (entry.reset(inputs), op()))
        print(f"reset, then {name:32s} driver launch {took}")
    took = driver_calls(entry, runs, lambda: entry.reset(inputs), gc_off=True)
    print(f"reset, then {'nothing more, the collector off':32s} driver launch {took}")

    # no reset: only another kernel between two launches (does the driver's call slow down when
    # the function changes, whatever the memory?), and the packed parameters after a reset
    for label, packed, reset in (("a one-thread kernel, no reset", False, False),
                                 ("a reset, the parameters packed", True, True)):  # fmt: skip
        kernelargs.PACKED = packed
        prepared.CACHE.clear()
        prepared.Prepared.launch = timed  # type: ignore[method-assign]  (to hold the new entry)
        try:
            prog.run(backend="cuda", inputs=inputs)
        finally:
            prepared.Prepared.launch = original  # type: ignore[method-assign]
        other = seen[-1]
        other.reset(inputs)
        before = (lambda e=other: e.reset(inputs)) if reset else (lambda: one[1, 32](out))
        print(f"then {label:40s} driver launch {driver_calls(other, runs, before)} ({other.args.call})")
    kernelargs.PACKED = False

    cuda.synchronize()
    small: list[float] = []
    for _ in range(runs):
        t0 = time.perf_counter()
        one[1, 32](out)
        small.append(time.perf_counter() - t0)
        cuda.synchronize()
    print(f"one-parameter Numba kernel launch:  {_median_us(small[1:])}")

    prof = cProfile.Profile()
    prof.enable()
    for _ in range(10):
        prog.run(backend="cuda", inputs=inputs)
    prof.disable()
    stats = pstats.Stats(prof)
    stats.sort_stats("tottime").print_stats(18)


if __name__ == "__main__":
    main()
