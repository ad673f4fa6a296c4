"""A CUDA graph whose one node is a device-side WHILE loop, from Python (cuda.bindings), for B3's baseline.

CuPy 14.2 has no conditional-graph API (gpu-notes), so this builds one with
cuda.bindings' driver API:

1. NVRTC compiles the CUDA C to a cubin for the device's own architecture
   (a cubin, not PTX: a newer NVRTC's PTX does not load on an older driver,
   while its cubin does);
2. ``cuGraphConditionalHandleCreate(graph, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT)``:
   the condition is 1 at the start of every launch, so the body runs at least once;
3. ``cuGraphAddNode`` of a ``CU_GRAPH_COND_TYPE_WHILE`` node of size 1, which
   returns its empty body graph in ``conditional.phGraph_out[0]``;
4. kernel nodes in that body, in a chain, each a CUfunction of the module with
   its arguments marshalled by hand (an array of pointers to one cell per
   argument, as ``kernelParams`` wants); a kernel of the body calls
   ``cudaGraphSetConditional(handle, 0)`` to end the loop;
5. ``cuGraphInstantiate``, then ``cuGraphLaunch`` on the caller's stream.

Every call's status is checked and a failure raises :class:`GraphError`
naming the call, so a graph that cannot be built is an error, never a number.
GPU only; the NVRTC step (:func:`nvrtc_cubin`) also runs without one
(tests/bench/test_baseline_ptx.py).
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

import numpy as np

ARG_TYPES = {"ptr": np.uint64, "i32": np.int32, "u64": np.uint64, "f64": np.float64}
# ("handle", anything): the WHILE node's condition handle, filled in by add_kernel


class GraphError(RuntimeError):
    """A CUDA, NVRTC or graph call that failed: the call and its status."""


def _ok(result: tuple[Any, ...], what: str) -> Any:
    """The values of a cuda.bindings call after its status (one value, a tuple of them, or None)."""
    status, *values = result
    if int(status) != 0:  # CUDA_SUCCESS, cudaSuccess and NVRTC_SUCCESS are all 0
        raise GraphError(f"{what} failed: {getattr(status, 'name', status)}")
    return values[0] if len(values) == 1 else (tuple(values) if values else None)


def nvrtc_cubin(source: str, name: str, compute_capability: str) -> bytes:
    """The cubin NVRTC makes of ``source`` for sm_<compute_capability> (e.g. "90"); GraphError with the log."""
    from cuda.bindings import nvrtc

    prog = _ok(nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], []), "nvrtcCreateProgram")
    try:
        opts = [f"--gpu-architecture=sm_{compute_capability}".encode(), b"-std=c++17"]
        (status,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        if int(status) != 0:
            size = _ok(nvrtc.nvrtcGetProgramLogSize(prog), "nvrtcGetProgramLogSize")
            log = b" " * size
            _ok(nvrtc.nvrtcGetProgramLog(prog, log), "nvrtcGetProgramLog")
            raise GraphError(f"NVRTC could not compile {name}: {log.decode(errors='replace').strip()}")
        size = _ok(nvrtc.nvrtcGetCUBINSize(prog), "nvrtcGetCUBINSize")
        cubin = b" " * size
        _ok(nvrtc.nvrtcGetCUBIN(prog, cubin), "nvrtcGetCUBIN")
        return cubin
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def kernel_params(args: list[tuple[str, Any]], handle: int) -> tuple[np.ndarray[Any, Any], list[Any]]:
    """``kernelParams`` for ``args`` ((kind, value) pairs, kinds of ARG_TYPES or "handle"): an array of the
    addresses of one cell per argument, and the cells (which must outlive the node's creation)."""
    cells = []
    for kind, value in args:
        if kind == "handle":
            cells.append(np.array([handle], np.uint64))  # cudaGraphConditionalHandle: unsigned long long
        elif kind in ARG_TYPES:
            cells.append(np.array([value], ARG_TYPES[kind]))
        else:
            raise ValueError(f"unknown kernel argument kind {kind!r}: expected one of {', '.join(ARG_TYPES)}, handle")
    return np.array([c.ctypes.data for c in cells], np.uint64), cells


class WhileGraph:
    """A graph of one WHILE node; ``add_kernel`` appends a kernel to its body, ``launch`` runs it once.

    Use as a context manager: on exit the executable graph, the graph and the module are destroyed.
    """

    def __init__(self, cubin: bytes) -> None:
        from cuda.bindings import __version__ as bindings_version
        from cuda.bindings import driver, runtime

        self._driver = driver
        self._edge_data = int(bindings_version.split(".")[0]) >= 13  # 13 gave cuGraphAddNode its edge data
        _ok(runtime.cudaFree(0), "cudaFree(0)")  # the runtime's primary context, current on this thread
        self.ctx = _ok(driver.cuCtxGetCurrent(), "cuCtxGetCurrent")
        if not int(self.ctx):
            raise GraphError("no current CUDA context")
        self._image = np.frombuffer(cubin, np.uint8).copy()
        self.module = _ok(driver.cuModuleLoadData(self._image.ctypes.data), "cuModuleLoadData (the cubin)")
        self.graph = _ok(driver.cuGraphCreate(0), "cuGraphCreate")
        self.exec: Any = None
        self._keep: list[Any] = []
        self._last: list[Any] = []
        flags = driver.CU_GRAPH_COND_ASSIGN_DEFAULT
        self.handle = _ok(driver.cuGraphConditionalHandleCreate(self.graph, self.ctx, 1, flags), "handle")
        params = driver.CUgraphNodeParams()
        params.type = driver.CUgraphNodeType.CU_GRAPH_NODE_TYPE_CONDITIONAL
        params.conditional.handle = self.handle
        params.conditional.type = driver.CUgraphConditionalNodeType.CU_GRAPH_COND_TYPE_WHILE
        params.conditional.size = 1
        params.conditional.ctx = self.ctx
        if self._edge_data:
            _ok(driver.cuGraphAddNode(self.graph, None, None, 0, params), "cuGraphAddNode (WHILE)")
        else:
            _ok(driver.cuGraphAddNode(self.graph, None, 0, params), "cuGraphAddNode (WHILE)")
        self.body = params.conditional.phGraph_out[0]
        if not int(self.body):
            raise GraphError("cuGraphAddNode (WHILE) returned no body graph")

    def add_kernel(self, name: str, threads: int, args: list[tuple[str, Any]]) -> None:
        """Append kernel ``name`` of the module, one block of ``threads``, after the body's last node."""
        d = self._driver
        func = _ok(d.cuModuleGetFunction(self.module, name.encode()), f"cuModuleGetFunction({name})")
        ptrs, cells = kernel_params(args, int(self.handle))
        self._keep += [ptrs, cells]
        p = d.CUDA_KERNEL_NODE_PARAMS()
        p.func = func
        p.gridDimX, p.gridDimY, p.gridDimZ = 1, 1, 1
        p.blockDimX, p.blockDimY, p.blockDimZ = threads, 1, 1
        p.sharedMemBytes = 0
        p.kernelParams = ptrs.ctypes.data
        p.extra = 0
        node = _ok(d.cuGraphAddKernelNode(self.body, self._last, len(self._last), p), f"cuGraphAddKernelNode({name})")
        self._last = [node]

    def instantiate(self) -> None:
        if not self._last:
            raise GraphError("the WHILE node's body has no kernel")
        self.exec = _ok(self._driver.cuGraphInstantiate(self.graph, 0), "cuGraphInstantiate")

    def launch(self, stream: int) -> None:
        """Launch on the stream whose handle is ``stream`` (e.g. a CuPy stream's ``ptr``); the caller syncs."""
        _ok(self._driver.cuGraphLaunch(self.exec, self._driver.CUstream(stream)), "cuGraphLaunch")

    def __enter__(self) -> WhileGraph:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        d = self._driver
        if self.exec is not None:
            d.cuGraphExecDestroy(self.exec)
        d.cuGraphDestroy(self.graph)
        d.cuModuleUnload(self.module)
