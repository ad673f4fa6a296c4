"""What gasync is compared with: plain Numba kernels and CuPy CUDA graphs.

Everything here is meant for a real GPU. CuPy is imported inside the
functions, since the simulator smoke test imports this module on machines
without it; Numba's ``cuda`` is a module global (it imports without a GPU),
so that the simulator, which swaps that global, can also run the kernels
(tests/bench/test_baselines_sim.py).

Each function returns a list of samples (seconds per unit of work, one per
repetition); the caller takes the median. B3's peers (the same loop to
convergence written by hand) are in converge.py, as B2's are in pingpong.py.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np
from numba import cuda, float32

TINY_CUDA = r"""
extern "C" __global__ void one(int* out, int i) { out[i] = i; }
"""


def _quiet() -> None:
    # a grid of one block warns on every launch; that is the point here
    warnings.filterwarnings("ignore", message=".*Grid size .* under-utilization")


@cache
def _numba_kernels() -> dict[str, Any]:
    @cuda.jit
    def one(out, i):
        out[i] = i

    @cuda.jit
    def affine(x, y):
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < x.size:
            y[i] = float32(2.0) * x[i] + float32(1.0)
            i += stride

    @cuda.jit
    def hold(out, turns):
        # one thread busy for a dependent chain of ``turns`` steps (~5 ns each on an H100): what a
        # timed kernel queues behind (affine_device_ms)
        acc = 0
        for i in range(turns):
            acc = (acc * 3 + i) % 1000003
        out[0] = acc

    @cuda.jit
    def affine_flat(x, y):
        i = cuda.grid(1)
        if i < x.size:
            y[i] = float32(2.0) * x[i] + float32(1.0)

    @cuda.jit
    def affine_warps(x, y, per_warp):
        # warp w streams [w * per_warp, (w + 1) * per_warp): 4 coalesced loads in flight per lane,
        # all before their stores (x and y may alias, so the compiler keeps that order)
        lane = cuda.threadIdx.x % 32
        lo = cuda.grid(1) // 32 * per_warp
        hi = min(lo + per_warp, x.size)
        i = lo + lane
        while i + 96 < hi:
            a, b, c, d = x[i], x[i + 32], x[i + 64], x[i + 96]
            y[i] = float32(2.0) * a + float32(1.0)
            y[i + 32] = float32(2.0) * b + float32(1.0)
            y[i + 64] = float32(2.0) * c + float32(1.0)
            y[i + 96] = float32(2.0) * d + float32(1.0)
            i += 128
        while i < hi:
            y[i] = float32(2.0) * x[i] + float32(1.0)
            i += 32

    @cuda.jit
    def fill_ramp(x, period, scale):
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < x.size:
            x[i] = float32(i % period) * scale
            i += stride

    @cuda.jit
    def fill(x, value):
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < x.size:
            x[i] = value
            i += stride

    return {
        "one": one,
        "grid-stride": affine,
        "one thread per element": affine_flat,
        "per-warp contiguous": affine_warps,
        "fill_ramp": fill_ramp,
        "hold": hold,
        "fill": fill,
    }


def numba_launch_per_task(launches: int, reps: int) -> list[float]:
    """Seconds per launch of a one-thread Numba kernel that writes out[i] = i."""
    _quiet()
    one = _numba_kernels()["one"]
    out = cuda.device_array(launches, np.int32)
    one[1, 1](out, 0)  # JIT and module load, untimed
    cuda.synchronize()
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for i in range(launches):
            one[1, 1](out, i)
        cuda.synchronize()
        samples.append((time.perf_counter() - t0) / launches)
    _expect_ramp(out.copy_to_host(), "numba per-launch baseline")
    return samples


def cupy_launch_per_task(launches: int, reps: int) -> list[float]:
    """Seconds per launch of a one-thread CuPy RawKernel (no graph)."""
    import cupy as cp

    kern = cp.RawKernel(TINY_CUDA, "one")
    out = cp.zeros(launches, cp.int32)
    kern((1,), (1,), (out, np.int32(0)))
    cp.cuda.Device().synchronize()
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for i in range(launches):
            kern((1,), (1,), (out, np.int32(i)))
        cp.cuda.Device().synchronize()
        samples.append((time.perf_counter() - t0) / launches)
    _expect_ramp(cp.asnumpy(out), "cupy per-launch baseline")
    return samples


def cupy_graph_per_node(nodes: int, reps: int, replays: int = 5) -> list[float]:
    """Seconds per node of replaying a captured CUDA graph of ``nodes`` tiny kernels."""
    import cupy as cp

    kern = cp.RawKernel(TINY_CUDA, "one")
    out = cp.zeros(nodes, cp.int32)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        kern((1,), (1,), (out, np.int32(0)))  # module load outside the capture
        stream.synchronize()
        stream.begin_capture()
        for i in range(nodes):
            kern((1,), (1,), (out, np.int32(i)))
        graph = stream.end_capture()
    graph.upload(stream)
    graph.launch(stream)
    stream.synchronize()
    _expect_ramp(cp.asnumpy(out), "cupy graph baseline")
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(replays):
            graph.launch(stream)
        stream.synchronize()
        samples.append((time.perf_counter() - t0) / (replays * nodes))
    return samples


def device_input(n: int) -> tuple[Any, Any]:
    """Device arrays x (a ramp of exact f32 values) and y (filled with -1), made on the GPU."""
    k = _numba_kernels()
    x = cuda.device_array(n, np.float32)
    y = cuda.device_array(n, np.float32)
    k["fill_ramp"][_sm_count() * 8, 256](x, 1024, float32(0.5))
    fill(y, -1.0)
    return x, y


def fill(arr: Any, value: float) -> None:
    """Set every element of a float32 device array to ``value``."""
    _numba_kernels()["fill"][_sm_count() * 8, 256](arr, float32(value))
    cuda.synchronize()


# The hand-written y = 2x + 1 kernels (keys of _numba_kernels): each one's row name and launch, for the notes.
AFFINE = {
    "grid-stride": ("numba grid-stride kernel", "SMs x 8 blocks of 256 threads loop over the array"),
    "per-warp contiguous": (
        "numba per-warp contiguous kernel",
        "SMs x 8 blocks of 128 threads (32 warps per SM); each warp streams one contiguous range,"
        " 4 loads in flight per lane",
    ),
    "one thread per element": ("numba one thread per element", "N / 256 blocks of 256 threads"),
}
WARP_RANGE_ALIGN = 128  # elements: a warp's 4 loads of 32 lanes, so every range starts on a whole turn


def affine_launch(kind: str, n: int) -> tuple[int, int, tuple[Any, ...]]:
    """(blocks, threads per block, extra arguments) of the hand-written kernel ``kind`` over ``n`` elements."""
    sms = _sm_count()
    if kind == "grid-stride":
        return sms * 8, 256, ()
    if kind == "per-warp contiguous":
        blocks, threads = sms * 8, 128
        warps = blocks * threads // 32
        per_warp = -(-n // warps)
        per_warp = -(-per_warp // WARP_RANGE_ALIGN) * WARP_RANGE_ALIGN
        return blocks, threads, (np.int64(per_warp),)
    if kind == "one thread per element":
        return -(-n // 256), 256, ()
    raise ValueError(f"unknown affine kernel {kind!r}: expected one of {', '.join(AFFINE)}")


def numba_affine(x: Any, y: Any, reps: int, kind: str = "grid-stride") -> list[float]:
    """Seconds per run (launch + sync) of the hand-written Numba kernel y = 2x + 1 named ``kind`` (see AFFINE)."""
    affine = _numba_kernels()[kind]
    blocks, threads, extra = affine_launch(kind, x.shape[0])
    affine[blocks, threads](x, y, *extra)  # JIT, untimed
    cuda.synchronize()
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        affine[blocks, threads](x, y, *extra)
        cuda.synchronize()
        samples.append(time.perf_counter() - t0)
    return samples


def affine_device_ms(x: Any, y: Any, reps: int, kind: str = "grid-stride", hold: int = 200_000) -> list[float]:
    """GPU milliseconds per run of the hand-written kernel ``kind``, its launch call left out
    (:func:`device_ms`): beside gasync's ``span_ms`` (first look to last exit), a little more
    than the same work would read there."""
    affine = _numba_kernels()[kind]
    blocks, threads, extra = affine_launch(kind, x.shape[0])
    return device_ms(lambda: affine[blocks, threads](x, y, *extra), reps, hold=hold)


def device_ms(launch: Callable[[], Any], reps: int, before: Callable[[], Any] | None = None,
              hold: int = 200_000) -> list[float]:  # fmt: skip
    """GPU milliseconds of each of ``reps`` calls of ``launch`` (one kernel launch), its launch
    call left out: two CUDA events around it, all queued behind a one-thread kernel that keeps
    the GPU busy (``hold`` steps: ~1 ms on an H100, against a launch call of ~0.05 ms), so the
    GPU meets the start event, the kernel and the end event back to back (timed alone, an event
    pair would also time the host's launch call). It times the kernel's start on the GPU, its run
    and its end. ``before`` (a launch too) runs after the busy kernel, outside the events."""
    busy = _numba_kernels()["hold"]
    word = cuda.device_array(1, np.int64)
    busy[1, 1](word, 1)  # JIT, untimed
    cuda.synchronize()
    samples = []
    for _ in range(reps):
        start, end = cuda.event(), cuda.event()
        busy[1, 1](word, hold)
        if before is not None:
            before()
        start.record()
        launch()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end))
    return samples


def check_affine(x: Any, y: Any, label: str) -> None:
    """y == 2x + 1 on a strided sample and at both ends (a full host compare of 1 GiB is slow)."""
    n = x.shape[0]
    step = max(1, n // 65536) + 1
    xs, ys = _sampled(x, step), _sampled(y, step)
    if not np.array_equal(ys, 2 * xs + 1):
        bad = int(np.flatnonzero(ys != 2 * xs + 1)[0]) * step
        raise AssertionError(f"{label}: y[{bad}] is wrong")


def _sampled(arr: Any, step: int) -> np.ndarray[Any, Any]:
    host = arr if isinstance(arr, np.ndarray) else arr.copy_to_host()
    return np.concatenate([host[::step], host[-1:]])


def _sm_count() -> int:
    return int(cuda.get_current_device().MULTIPROCESSOR_COUNT)


def _expect_ramp(host: np.ndarray[Any, Any], label: str) -> None:
    if not np.array_equal(host, np.arange(host.size, dtype=host.dtype)):
        raise AssertionError(f"{label}: out[i] != i")
