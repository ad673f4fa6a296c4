"""Run by test_prepared.py in a child process (no GPU, no simulator): runtime/launch.py's GPU
path, prepared and not, on a CPU stand-in for CUDA.

Device memory is host memory here. Numba's own device arrays, views, copies and
marshalling run as on the GPU, over a fake driver whose copies and memsets are
``memmove``/``memset``; cuda.core's launch is replaced by a fake kernel that rebuilds
every array of G from its parameters (pointer, shape, strides), checks that the state it
finds is exactly ``launch.host_arrays``' (every run starts fresh), writes
``y = 2x + 1``, and then scribbles over the rest of the state, as a run that went wrong
could. A timeout of 7 ns makes it report a deadlock. Prints one JSON object of facts.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import sys
from types import SimpleNamespace
from typing import Any

import numpy as np
from numba import cuda
from numba.cuda import dispatcher, types
from numba.cuda.cudadrv import devicearray, devices, driver
from numba.cuda.typing.typeof import Purpose, typeof

import gasync
from gasync.runtime import launch, prepared
from gasync.runtime.errors import DeadlockError
from gasync.runtime.options import RunOptions
from gasync.runtime.state import GROUPS, Ctl, Exit, Stat

SOURCE = """
const N: i64 = 64;
buffer x: f32[N] = input;
buffer r: f64[8] = random(7);
buffer y: f32[N] = zeros;
shared total: i64 = 0;
task t { parallel for i in 0..N { y[i] = 2.0 * x[i] + 1.0; } }
"""
EXECUTORS, BLOCKS, THREADS = 8, 2, 128
KEEP: list[Any] = []  # the fake device memory


class FakeDriver:
    def cuMemcpyDtoD(self, dst: Any, src: Any, n: int) -> None:
        ctypes.memmove(int(dst), int(src), int(n))

    cuMemcpyHtoD = cuMemcpyDtoH = cuMemcpyDtoD

    def cuMemsetD8(self, dst: Any, byte: int, n: int) -> None:
        ctypes.memset(int(dst), int(byte), int(n))


def memory(n: int) -> Any:
    buf = np.zeros(n + 512, np.uint8)
    KEEP.append(buf)
    return driver.MemoryPointer(None, driver.binding.CUdeviceptr((buf.ctypes.data + 255) // 256 * 256), n)


def to_device(arr: Any) -> Any:
    dev = devicearray.from_array_like(arr, gpu_data=memory(max(arr.nbytes, 1)))
    if arr.nbytes:
        dev.copy_to_device(arr)
    return dev


def as_cuda_array(arr: Any) -> Any:
    mem = driver.MemoryPointer(None, driver.binding.CUdeviceptr(arr.ctypes.data), arr.nbytes)
    return devicearray.from_array_like(arr, gpu_data=mem)


FACTS: dict[str, Any] = {"stale": [], "synchronized": 0}
RUN: dict[str, Any] = {}  # what the fake kernel is to find: this run's inputs


def synchronize() -> None:
    FACTS["synchronized"] += 1


def install() -> None:
    driver.driver = FakeDriver()
    devices._runtime = SimpleNamespace(ensure_context=contextlib.nullcontext)
    devices.get_context = lambda *a, **k: None
    context = SimpleNamespace(deallocations=SimpleNamespace(clear=lambda: None))
    cuda.device_array = lambda n, dtype: devicearray.DeviceNDArray((n,), (1,), np.dtype(dtype), gpu_data=memory(n))
    cuda.to_device, cuda.as_cuda_array, cuda.synchronize = to_device, as_cuda_array, synchronize
    cuda.mapped_array = lambda shape, dtype: np.zeros(shape, dtype)
    cuda.current_context = lambda: context
    gpu = SimpleNamespace(name=b"stand-in", PCI_DOMAIN_ID=0, PCI_BUS_ID=0x19, PCI_DEVICE_ID=0)
    cuda.get_current_device = lambda: gpu
    dispatcher.launch = lambda stream, config, function, *params: fake_kernel(list(params))


def names_of(module: Any) -> list[str]:
    return [f for _, group in GROUPS for f in group._fields] + list(module.State._fields[len(GROUPS) :])


def leaf_types(ty: Any) -> list[Any]:
    return [t for member in ty for t in leaf_types(member)] if isinstance(ty, types.BaseTuple) else [ty]


def arrays_of(params: list[Any]) -> dict[str, np.ndarray[Any, Any]]:
    """G's arrays, rebuilt from the kernel's parameters as the device would read them."""
    out, at = {}, 0
    for name, ty in zip(names_of(RUN["module"]), leaf_types(RUN["sig"][0]), strict=True):
        nd = ty.ndim
        size, itemsize, ptr = params[at + 2 : at + 5]
        shape, strides = tuple(params[at + 5 : at + 5 + nd]), tuple(params[at + 5 + nd : at + 5 + 2 * nd])
        dtype = np.dtype(str(ty.dtype))
        assert dtype.itemsize == itemsize, name
        if size == 0:
            out[name] = np.zeros(shape, dtype)
        else:
            raw = (ctypes.c_char * (size * itemsize)).from_address(ptr)  # C-contiguous: size x itemsize bytes
            out[name] = np.ndarray(shape, dtype, buffer=raw, strides=strides)
        at += 5 + 2 * nd
    assert at == len(params) - 2, (at, len(params))
    return out


def fake_kernel(params: list[Any]) -> None:
    g = arrays_of(params)
    want = launch.host_arrays(RUN["gen"], EXECUTORS, RUN["inputs"], RunOptions().trace_capacity)
    for name, arr in want.items():
        if not np.array_equal(np.asarray(g[name]), launch.outputs.to_host(arr)):
            FACTS["stale"].append(f"run {RUN['n']}: {name}")
    g["B_y"][:] = 2.0 * g["B_x"] + 1.0
    g["S_total"][0] = 5
    for name, arr in g.items():
        if name not in ("B_x", "B_y", "S_total", "CTL", "STATS", "QHT", "SIG"):
            arr.view(np.uint8)[...] = 0x5A  # what a run leaves behind
    g["CTL"][:] = 77
    deadlock = params[-2].value == 7
    g["CTL"][Ctl.EXIT] = Exit.DEADLOCK if deadlock else Exit.OK
    g["CTL"][Ctl.DONE] = 0 if deadlock else 1
    g["CTL"][Ctl.CLOSED_SENDS] = 0
    g["STATS"][:] = 0
    g["STATS"][0, Stat.POLLS] = 3
    g["QHT"][:] = 0
    g["ST"][:] = 0
    g["WAITON"][:] = 0


class FakeKernel:
    """The dispatcher: its typing, its launch configuration, its one overload."""

    def __init__(self, sig: tuple[Any, ...]) -> None:
        kern = SimpleNamespace(extensions=[], debug=False, cooperative=False)
        kern._codelibrary = SimpleNamespace(get_cufunc=lambda: SimpleNamespace(kernel="the kernel"))
        kern._prepare_args = lambda *a: dispatcher._Kernel._prepare_args(kern, *a)
        kern.launch = lambda args, griddim, blockdim, stream, sharedmem: self.marshalled(kern, args)
        self.overloads = {sig: kern}

    @staticmethod
    def marshalled(kern: Any, args: tuple[Any, ...]) -> None:
        params: list[Any] = []
        for ty, val in zip(RUN["sig"], args, strict=True):
            kern._prepare_args(ty, val, 0, [], params)
        fake_kernel(params)

    @staticmethod
    def typeof_pyval(val: Any) -> Any:
        return typeof(val, Purpose.argument)

    def __getitem__(self, grid: tuple[int, ...]) -> Any:
        """A launch configuration: grid, block, and (as the launch gives them) stream and dynamic shared memory."""
        sharedmem = grid[3] if len(grid) > 3 else 0
        return SimpleNamespace(stream=0, griddim=(grid[0], 1, 1), blockdim=(grid[1], 1, 1), sharedmem=sharedmem,
                               dispatcher=self)  # fmt: skip


def run(n: int, x: Any, **options: Any) -> Any:
    RUN.update(n=n, inputs={"x": x})
    opts = RunOptions(backend="cuda", inputs={"x": x}, cache_dir=sys.argv[1], **options)
    return launch.execute(RUN["gen"], opts, sim=False)


def main() -> None:
    install()
    gen = gasync.compile_source(SOURCE, "child.gasync").generated
    module, _ = launch.load(gen, sys.argv[1])
    host = launch.host_arrays(gen, 1, {"x": np.zeros(64, np.float32)})
    sig = (typeof(launch.device_state(module, {k: to_device(v) for k, v in host.items()}), Purpose.argument),)
    sig += (typeof(np.int64(0), Purpose.argument),) * 2
    module.gasync_kernel = FakeKernel(sig)
    RUN.update(gen=gen, module=module, sig=sig)
    launch._compile = lambda *a: (sig, 0.0, (EXECUTORS, BLOCKS, THREADS), module.gasync_kernel.overloads[sig])
    xs = [np.arange(64, dtype=np.float32) * k for k in range(1, 9)]
    a, b = run(1, xs[0]), run(2, xs[1])
    FACTS["host"] = [a.stats["launch_path"], b.stats["launch_path"], prepared.CACHE.hits, prepared.CACHE.misses]
    FACTS["device"] = a.stats["device"]
    FACTS["host_right"] = all(
        np.array_equal(r.buffers["y"], 2 * x + 1) and r.shared["total"] == 5 for r, x in ((a, xs[0]), (b, xs[1]))
    )
    try:
        run(3, xs[2], timeout_s=7e-9)
        FACTS["deadlock"] = "no error"
    except DeadlockError as exc:
        FACTS["deadlock"] = str(exc).splitlines()[0]
    c = run(4, xs[3])
    FACTS["after_deadlock"] = [c.stats["launch_path"], bool(np.array_equal(c.buffers["y"], 2 * xs[3] + 1))]
    d, e = run(5, xs[4], outputs="device"), run(6, xs[5], outputs="device")
    FACTS["device_outputs"] = [
        d.stats["launch_path"],
        e.stats["launch_path"],
        bool(np.array_equal(d.buffers["y"].copy_to_host(), 2 * xs[4] + 1)),  # not overwritten by run 6
        bool(np.array_equal(e.buffers["y"].copy_to_host(), 2 * xs[5] + 1)),
    ]
    dx, dx2 = to_device(xs[6]), to_device(xs[7])
    f, g = run(7, dx), run(8, dx2)
    FACTS["device_inputs"] = [
        f.buffers["x"] is dx and g.buffers["x"] is dx2,
        bool(np.array_equal(f.buffers["y"].copy_to_host(), 2 * xs[6] + 1)),
        bool(np.array_equal(g.buffers["y"].copy_to_host(), 2 * xs[7] + 1)),
    ]
    prepared.CACHE.max_entries = 0
    h = run(9, xs[0])
    FACTS["compiled"] = [h.stats["launch_path"], bool(np.array_equal(h.buffers["y"], a.buffers["y"]))]
    FACTS["same_stats"] = {k: h.stats[k] == a.stats[k] for k in ("polls", "wakes", "executors", "blocks", "instances")}
    FACTS["stat_keys"] = sorted(set(a.stats) - set(h.stats)) + sorted(set(h.stats) - set(a.stats))
    FACTS["prepare_ms"] = "prepare_ms" in a.stats and "prepare_ms" in h.stats
    print(json.dumps(FACTS))


if __name__ == "__main__":
    main()
