"""B3's peers: the loop of bench/programs/b3_converge*.gasync written by hand, five ways.

The work: x = 0.5 x + 0.5 target over N f64 with x = 1 and target = 0, the
residual max |x - target|, repeated while it is >= tol. Every step halves x
exactly, so the residual after k steps is exactly 2^-k and the loop runs
exactly :func:`converge_steps` steps. Each function below checks that (the
step count, x == 2^-k everywhere, the last residual) after every solve and
raises on a difference, so a wrong run never becomes a row.

- :func:`persistent_converge`: one block of 1024 threads runs the whole loop
  inside one Numba kernel (a shared-memory max, ``cuda.syncthreads()`` between
  steps): the floor, B3's headline denominator (gpu-notes: 1.70 us/step).
- :func:`numba_converge_host`: a Numba launch per step, the residual copied to
  pinned memory, the test on the host.
- :func:`cupy_converge_host`: the same with a CuPy RawKernel (one block, a
  warp-shuffle max): the host loop at its cheapest (gpu-notes: 16-22 us/step).
- :func:`graph_converge`: one launch of a CUDA graph whose conditional WHILE
  node runs the step and a test that calls ``cudaGraphSetConditional(h, 0)``
  once the residual is < tol: two kernels, or one fused kernel. Built with
  cuda.bindings' driver API (the node needs the context explicitly there, and
  kernel nodes take the CUfunction of a module compiled with NVRTC).

GPU only, except that the persistent kernel also runs on the simulator
(tests/bench/test_baselines_sim.py); CuPy and cuda.bindings are imported
inside the functions that need them. Each returns the seconds of each timed
solve (launch + synchronisation, after one untimed solve) and the steps.
"""

from __future__ import annotations

import time
from functools import cache
from typing import Any

import graph_while
import numpy as np
from numba import cuda, float64

PERSISTENT_THREADS = 1024  # one block: the most threads it may have
STEP_THREADS = 1024  # the CUDA C step kernels' block (a multiple of 32)
MAX_STEPS = 100_000  # as MAX_ITERS in the programs: a bound, never reached here

Solves = tuple[list[float], int]


def converge_steps(tol: float) -> int:
    """Steps of B3's loop: the residual after k steps is exactly 2^-k; the loop stops once it is < tol."""
    k = 1
    while 2.0**-k >= tol:
        k += 1
    return k


def check_solve(label: str, x: np.ndarray[Any, Any], steps: int, resid: float, tol: float) -> None:
    """Raise unless a solve took converge_steps(tol) steps and left x == 2^-k and the residual 2^-k."""
    k = converge_steps(tol)
    if steps != k:
        raise AssertionError(f"{label}: {steps} steps, expected {k}")
    if not np.array_equal(x, np.full(x.size, 2.0**-k)):
        raise AssertionError(f"{label}: x != 2^-{k} after {k} steps")
    if resid != 2.0**-k:
        raise AssertionError(f"{label}: residual {resid}, expected 2^-{k}")


# ---------------------------------------------------------------- the persistent kernel (Numba)


@cache
def _persistent_kernel() -> Any:
    @cuda.jit
    def converge_block(x, target, tol, max_steps, out_steps, out_resid):
        # one block loops until convergence; blockDim.x is a power of two (the tree below)
        red = cuda.shared.array(PERSISTENT_THREADS, float64)
        t = cuda.threadIdx.x
        nt = cuda.blockDim.x
        k = 0
        r = 0.0
        while True:
            m = 0.0
            i = t
            while i < x.size:
                v = 0.5 * x[i] + 0.5 * target[i]
                x[i] = v
                m = max(m, abs(v - target[i]))
                i += nt
            red[t] = m
            cuda.syncthreads()
            s = nt // 2
            while s > 0:
                if t < s:
                    red[t] = max(red[t], red[t + s])
                cuda.syncthreads()
                s //= 2
            r = red[0]
            k += 1
            cuda.syncthreads()  # every thread has read red[0] before the next step writes red
            if not (r >= tol) or k >= max_steps:
                break
        if t == 0:
            out_steps[0] = k
            out_resid[0] = r

    return converge_block


def persistent_converge(n: int, tol: float, reps: int, threads: int = PERSISTENT_THREADS) -> Solves:
    """The hand-written floor: the whole loop in one launch of one block of ``threads`` threads."""
    if threads & (threads - 1) or not 32 <= threads <= PERSISTENT_THREADS:
        raise ValueError(f"the persistent kernel takes a power of two from 32 to {PERSISTENT_THREADS} threads")
    kernel = _persistent_kernel()
    ones = np.ones(n, np.float64)
    x = cuda.to_device(ones)
    target = cuda.to_device(np.zeros(n, np.float64))
    steps = cuda.to_device(np.zeros(1, np.int64))
    resid = cuda.to_device(np.zeros(1, np.float64))
    samples = []
    for rep in range(reps + 1):  # the first: JIT and module load, untimed
        x.copy_to_device(ones)
        cuda.synchronize()
        t0 = time.perf_counter()
        kernel[1, threads](x, target, tol, MAX_STEPS, steps, resid)
        cuda.synchronize()
        if rep:
            samples.append(time.perf_counter() - t0)
        k = int(steps.copy_to_host()[0])
        check_solve("B3 hand-written persistent kernel", x.copy_to_host(), k, float(resid.copy_to_host()[0]), tol)
    return samples, k


# ---------------------------------------------------------------- the Numba host loop


@cache
def _relax_kernel() -> Any:
    @cuda.jit
    def relax(x, target, resid, slot):
        # one step of B3: x = 0.5 x + 0.5 target, max |x - target| into resid[slot];
        # thread 0 clears the other slot (last step's, already read) for the next step
        i = cuda.grid(1)
        if i == 0:
            resid[1 - slot] = 0.0
        if i < x.size:
            v = 0.5 * x[i] + 0.5 * target[i]
            x[i] = v
            cuda.atomic.max(resid, slot, abs(v - target[i]))

    return relax


def numba_converge_host(n: int, tol: float, reps: int) -> Solves:
    """The host loop with Numba: per step one launch of N/256 blocks, a copy of the residual to pinned memory,
    a test."""
    relax = _relax_kernel()
    ones = np.ones(n, np.float64)
    x = cuda.to_device(ones)
    target = cuda.to_device(np.zeros(n, np.float64))
    resid = cuda.to_device(np.zeros(2, np.float64))
    host = cuda.pinned_array(2, np.float64)
    blocks, threads = -(-n // 256), 256
    relax[blocks, threads](x, target, resid, 0)  # JIT and module load, untimed
    cuda.synchronize()
    samples, steps = [], 0
    for _ in range(reps):
        x.copy_to_device(ones)
        resid.copy_to_device(np.zeros(2, np.float64))
        cuda.synchronize()
        t0 = time.perf_counter()
        slot, steps = 0, 0
        while True:
            relax[blocks, threads](x, target, resid, slot)
            resid.copy_to_host(host)  # synchronous: waits for the step
            steps += 1
            if not (host[slot] >= tol) or steps >= MAX_STEPS:
                break
            slot ^= 1
        samples.append(time.perf_counter() - t0)
        check_solve("B3 numba host loop", x.copy_to_host(), steps, float(host[slot]), tol)
    return samples, steps


# ---------------------------------------------------------------- CUDA C: the CuPy loop and the graph

STEP_CUDA = r"""
// B3's step as one block: each thread relaxes its elements; a warp-shuffle max, then one
// warp combines the warps' maxima. The block's max is valid in thread 0.
__device__ double relax_block(double* x, const double* target, int n) {
    __shared__ double warp_max[32];
    double m = 0.0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        double v = 0.5 * x[i] + 0.5 * target[i];
        x[i] = v;
        m = fmax(m, fabs(v - target[i]));
    }
    for (int o = 16; o > 0; o >>= 1) m = fmax(m, __shfl_down_sync(0xffffffffu, m, o));
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_max[warp] = m;
    __syncthreads();
    if (warp == 0) {
        m = lane < (int)(blockDim.x >> 5) ? warp_max[lane] : 0.0;
        for (int o = 16; o > 0; o >>= 1) m = fmax(m, __shfl_down_sync(0xffffffffu, m, o));
    }
    return m;
}

extern "C" __global__ void relax_step(double* x, const double* target, double* resid, int n) {
    double m = relax_block(x, target, n);
    if (threadIdx.x == 0) resid[0] = m;
}
"""

# The declaration cuda_device_runtime_api.h makes; written out so that NVRTC needs no include path
# (with the header and -I, NVRTC 13.5 gives the same cubin to the byte).
GRAPH_CUDA = (
    STEP_CUDA
    + r"""
typedef __device_builtin__ unsigned long long cudaGraphConditionalHandle;
extern "C" __device__ __cudart_builtin__ void cudaGraphSetConditional(cudaGraphConditionalHandle handle,
                                                                      unsigned int value);

// One step done: count it, and end the WHILE loop once the residual is < tol (as the programs'
// `while resid >= TOL`) or at max_steps. Called by one thread only (racing calls are undefined).
__device__ void count_and_test(double r, unsigned long long* steps, double tol, unsigned long long max_steps,
                               cudaGraphConditionalHandle loop) {
    unsigned long long k = steps[0] + 1;
    steps[0] = k;
    if (!(r >= tol) || k >= max_steps) cudaGraphSetConditional(loop, 0);
}

extern "C" __global__ void test_step(const double* resid, unsigned long long* steps, double tol,
                                     unsigned long long max_steps, cudaGraphConditionalHandle loop) {
    count_and_test(resid[0], steps, tol, max_steps, loop);
}

extern "C" __global__ void relax_step_test(double* x, const double* target, double* resid, int n,
                                           unsigned long long* steps, double tol, unsigned long long max_steps,
                                           cudaGraphConditionalHandle loop) {
    double m = relax_block(x, target, n);
    if (threadIdx.x == 0) {
        resid[0] = m;
        count_and_test(m, steps, tol, max_steps, loop);
    }
}
"""
)


def cupy_converge_host(n: int, tol: float, reps: int) -> Solves:
    """The host loop with CuPy: per step one RawKernel launch (one block), an async copy of the residual to
    pinned memory, a stream synchronisation, the test."""
    import cupy as cp

    step = cp.RawModule(code=STEP_CUDA).get_function("relax_step")
    pinned = cp.cuda.alloc_pinned_memory(8)
    host = np.frombuffer(pinned, np.float64, 1)
    stream = cp.cuda.Stream(non_blocking=True)
    samples, steps = [], 0
    with stream:  # every fill and copy on this stream too: it does not wait for the default stream
        x = cp.empty(n, cp.float64)
        target = cp.zeros(n, cp.float64)
        resid = cp.zeros(1, cp.float64)
        args = (x, target, resid, np.int32(n))
        for rep in range(reps + 1):  # the first: compile and module load, untimed
            x.fill(1.0)
            stream.synchronize()
            t0 = time.perf_counter()
            steps = 0
            while True:
                step((1,), (STEP_THREADS,), args)
                cp.cuda.runtime.memcpyAsync(
                    host.ctypes.data, resid.data.ptr, 8, cp.cuda.runtime.memcpyDeviceToHost, stream.ptr
                )
                stream.synchronize()
                steps += 1
                if not (host[0] >= tol) or steps >= MAX_STEPS:
                    break
            if rep:
                samples.append(time.perf_counter() - t0)
            check_solve("B3 CuPy host loop", cp.asnumpy(x), steps, float(host[0]), tol)
    return samples, steps


GRAPH_BODIES = {  # graph_converge's ``body``: the kernels of the WHILE node's body, in order
    "step + test kernels": ("relax_step", "test_step"),
    "one fused kernel": ("relax_step_test",),
}


def graph_converge(n: int, tol: float, reps: int, body: str) -> Solves:
    """One launch of a CUDA graph per solve: a WHILE node (condition 1 at each launch) whose body runs the
    kernels GRAPH_BODIES[body]; the test kernel sets the condition to 0, on the device, to stop."""
    import cupy as cp

    names = GRAPH_BODIES[body]
    stream = cp.cuda.Stream(non_blocking=True)
    cubin = graph_while.nvrtc_cubin(GRAPH_CUDA, "b3_graph.cu", cp.cuda.Device().compute_capability)
    with stream, graph_while.WhileGraph(cubin) as g:  # fills and copies on the graph's stream
        x = cp.empty(n, cp.float64)
        target = cp.zeros(n, cp.float64)
        resid = cp.zeros(1, cp.float64)
        steps = cp.zeros(1, cp.uint64)
        step_args = [("ptr", x.data.ptr), ("ptr", target.data.ptr), ("ptr", resid.data.ptr), ("i32", n)]
        test_args = [("ptr", steps.data.ptr), ("f64", tol), ("u64", MAX_STEPS), ("handle", 0)]
        for name in names:
            if name == "relax_step":
                g.add_kernel(name, STEP_THREADS, step_args)
            elif name == "test_step":
                g.add_kernel(name, 1, [("ptr", resid.data.ptr), *test_args])
            else:
                g.add_kernel(name, STEP_THREADS, [*step_args, *test_args])
        g.instantiate()
        samples, k = [], 0
        for rep in range(reps + 1):  # the first: upload, untimed
            x.fill(1.0)
            steps.fill(0)
            stream.synchronize()
            t0 = time.perf_counter()
            g.launch(stream.ptr)
            stream.synchronize()
            if rep:
                samples.append(time.perf_counter() - t0)
            k = int(steps.get()[0])
            check_solve(f"B3 CUDA graph WHILE loop ({body})", cp.asnumpy(x), k, float(resid.get()[0]), tol)
    return samples, k
