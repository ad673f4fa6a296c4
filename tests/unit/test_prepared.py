"""Prepared launches, host side (no GPU): the slab's layout and pristine bytes, each array's
role, the cache's key and its bounds (runtime/slab.py, runtime/prepared.py).

The last test runs Numba's own marshalling of G on the CPU, in a child process (this
tier imports no Numba): runtime/kernelargs.py's segments against ``_Kernel._prepare_args``
of the whole of G, on views of a fake device allocation.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import gasync
from gasync.runtime import kernelargs, launch, prepared, slab
from gasync.runtime.options import RunOptions
from gasync.runtime.slab import ALIGN, Role

ROOT = Path(gasync.__file__).resolve().parent
PROGRAM = """
const N: i64 = 64;
buffer x: f32[N] = input;
buffer m: i32[2, 3] = input;
buffer r: f64[N] = random(7);
buffer f: i32[4] = fill(3);
buffer io: i64[2, 4] = iota;
buffer y: f32[N] = zeros;
shared flag: bool = true;
shared total: i64 = 0;
signal go;
channel c: i32[4];
task t { bulk for i in 0..N { y[i] = x[i] * 2.0; } c.send(1).await; }
task u { let v = c.recv().await; total.fetch_add(v as i64); }
task w { go.wait().await; }
"""
INPUTS = {"x": np.arange(64, dtype=np.float32), "m": np.arange(6, dtype=np.int32).reshape(2, 3)}


class FakeDeviceArray:
    """Stands in for a CUDA array: it describes itself with ``__cuda_array_interface__``."""

    def __init__(self, shape: tuple[int, ...], typestr: str, strides: tuple[int, ...] | None = None) -> None:
        self.__cuda_array_interface__ = {
            "shape": shape,
            "typestr": typestr,
            "strides": strides,
            "data": (1 << 20, False),
        }


def _generated() -> Any:
    return gasync.compile_source(PROGRAM, "prepared.gasync").generated


def _host(executors: int = 8, inputs: dict[str, Any] | None = None) -> dict[str, Any]:
    return launch.host_arrays(_generated(), executors, INPUTS if inputs is None else inputs, 1 << 10)


def _layout(host: dict[str, Any], inputs: dict[str, Any], host_outputs: bool = True) -> slab.Layout:
    roles = slab.roles_of(host, inputs, {"x", "m", "r", "f", "io", "y"}, host_outputs)
    return slab.plan_layout(host, roles)


def test_roles_follow_values_inputs_and_where_results_go() -> None:
    host = _host()
    buffers = {"x", "m", "r", "f", "io", "y"}
    roles = slab.roles_of(host, INPUTS, buffers, host_outputs=True)
    assert roles["HOSTSIG"] is Role.MAPPED
    assert roles["B_x"] is roles["B_m"] is Role.HOST_INPUT
    assert roles["B_r"] is roles["B_f"] is roles["B_io"] is roles["S_flag"] is Role.IMAGE
    assert roles["B_y"] is roles["S_total"] is roles["FI"] is Role.ZERO
    # (ST starts FRESH, not 0: runtime/state.py)
    assert roles["QSEQ"] is roles["CTL"] is roles["EXS"] is roles["CMD"] is roles["CSEQ"] is roles["ST"] is Role.IMAGE
    device = {"x": FakeDeviceArray((64,), "<f4"), "m": INPUTS["m"]}
    roles = slab.roles_of(host, device, buffers, host_outputs=False)
    assert roles["B_x"] is Role.DEVICE_INPUT and roles["B_m"] is Role.FRESH_INPUT
    assert roles["B_r"] is roles["B_y"] is Role.FRESH  # given back as device arrays: new each run
    assert roles["S_total"] is Role.ZERO and roles["S_flag"] is Role.IMAGE  # copied back to the host


def test_the_slab_holds_regions_in_order_and_arrays_aligned_apart() -> None:
    host = _host()
    layout = _layout(host, INPUTS)
    inside = sorted(layout.of(*slab.SLAB), key=lambda s: s.offset)
    assert [r for r, _, _ in layout.regions] == list(slab.SLAB)
    assert {s.name for s in inside} == set(host) - {"HOSTSIG"}
    for s, nxt in zip(inside, inside[1:], strict=False):
        assert s.offset % ALIGN == 0 and s.offset + s.nbytes <= nxt.offset, (s, nxt)
    for role, start, end in layout.regions:
        assert all(start <= s.offset and s.offset + s.nbytes <= end for s in layout.of(role))
    assert layout.regions[0][1] == 0 and layout.regions[-1][2] == layout.total_bytes
    assert [s.role for s in inside] == sorted((s.role for s in inside), key=slab.SLAB.index)


@pytest.mark.parametrize("executors", [1, 8, 132 * 4])
def test_the_pristine_bytes_are_host_arrays_values(executors: int) -> None:
    host = _host(executors)
    layout = _layout(host, INPUTS)
    image = layout.image(host)
    assert image.size == layout.region(Role.IMAGE)[1]
    for s in layout.of(Role.IMAGE):
        got = image[s.offset : s.offset + s.nbytes].view(np.dtype(s.dtype)).reshape(s.shape)
        np.testing.assert_array_equal(got, host[s.name], err_msg=s.name)
    for s in layout.of(Role.ZERO):  # what the memset gives them
        assert not np.ascontiguousarray(host[s.name]).view(np.uint8).any(), s.name
    filled = np.zeros(image.size, bool)
    for s in layout.of(Role.IMAGE):
        filled[s.offset : s.offset + s.nbytes] = True
    assert not image[~filled].any()  # padding is zero


def test_a_slot_keeps_the_host_arrays_strides_as_to_device_would() -> None:
    host = _host(4)
    layout = _layout(host, INPUTS)
    for s in layout.of(*slab.SLAB):
        assert s.strides == host[s.name].strides and s.shape == host[s.name].shape, s.name
    assert layout.held_bytes == layout.total_bytes + layout.region(Role.IMAGE)[1]


def test_the_signals_the_host_will_set_are_in_the_image() -> None:
    host = _host()
    host["HOSTPEND"][0] = 1
    layout = _layout(host, INPUTS)
    assert next(s for s in layout.slots if s.name == "HOSTPEND").role is Role.IMAGE


def _options(**kw: Any) -> RunOptions:
    return RunOptions(**{"inputs": INPUTS, **kw})


def test_the_key_covers_what_the_layout_depends_on() -> None:
    def key(**kw: Any) -> prepared.Key | None:
        return prepared.key_of("m.py", 1, _options(**kw), traced=True, host_outputs=True)

    base = key()
    assert base == key() and hash(base) == hash(key())
    assert base == key(timeout_s=3.0)  # the kernel's scalars, not its state
    assert base == key(inputs={k: v.copy() for k, v in INPUTS.items()})  # other values, same layout
    other = [
        key(executors=4),
        key(warps_per_block=1),
        key(trace_capacity=1 << 12),
        key(signals={"go": 0.01}),
        key(executor="spin"),  # the module's other kernel (runtime/launch.py: kernel_of)
        key(inputs={**INPUTS, "x": np.arange(64, dtype=np.float64)}),
        key(inputs={**INPUTS, "x": FakeDeviceArray((64,), "<f4")}),
        prepared.key_of("n.py", 1, _options(), True, True),
        prepared.key_of("m.py", 2, _options(), True, True),
        prepared.key_of("m.py", 1, _options(), True, False),
    ]
    a, b = (
        gasync.compile_source(f"buffer b: i64[8] = {init};\ntask t {{ b[0] = 1; }}\n", "p.gasync")
        for init in ("iota", "zeros")
    )
    assert a.generated.source == b.generated.source  # one module: the host fills the buffer
    initial = [prepared.initial_values(p.plan) for p in (a, b)]
    other += [prepared.key_of("m.py", 1, _options(), True, True, init) for init in initial]
    assert all(k is not None and k != base for k in other)
    assert len(set(other)) == len(other)
    assert prepared.key_of("m.py", 1, _options(trace_capacity=8), False, True) == prepared.key_of(
        "m.py", 1, _options(trace_capacity=16), False, True
    )  # untraced: the trace is one row either way
    strided = FakeDeviceArray((64,), "<f4", (8,))
    assert key(inputs={**INPUTS, "x": strided}) != key(inputs={**INPUTS, "x": FakeDeviceArray((64,), "<f4")})
    assert key(inputs={**INPUTS, "m": np.zeros((3, 2), np.int32).T}) is None  # not C-contiguous: no prepared launch


@dataclass
class FakeEntry:
    nbytes: int
    lock: threading.Lock = field(default_factory=threading.Lock)
    freed: int = 0

    def free(self) -> None:
        self.freed += 1


def _key(n: int) -> prepared.Key:
    return prepared.Key(f"m{n}.py", 1, 0, 0, 0, (), True, ())


def _insert(cache: prepared.Cache, n: int, nbytes: int = 10) -> FakeEntry:
    entry = FakeEntry(nbytes)
    assert cache.checkout(_key(n)) == (None, "")
    entry.lock.acquire()  # built checked out
    cache.insert(_key(n), entry)
    cache.release(entry)
    return entry


def test_the_cache_hands_a_launch_to_one_run_at_a_time() -> None:
    cache = prepared.Cache(max_entries=2)
    entry = _insert(cache, 0)
    got, why = cache.checkout(_key(0))
    assert got is entry and why == ""
    busy, why = cache.checkout(_key(0))
    assert busy is None and "in use" in why
    cache.release(entry)
    assert cache.checkout(_key(0))[0] is entry
    assert (cache.hits, cache.misses) == (2, 1)


def test_the_least_recently_used_launch_is_evicted_and_freed() -> None:
    cache = prepared.Cache(max_entries=2)
    a, b = _insert(cache, 0), _insert(cache, 1)
    got, _ = cache.checkout(_key(0))  # a is now the most recently used
    cache.release(got)
    c = _insert(cache, 2)
    assert len(cache) == 2 and (a.freed, b.freed, c.freed) == (0, 1, 0)
    assert cache.checkout(_key(1)) == (None, "")


def test_the_byte_bound_evicts_and_refuses() -> None:
    cache = prepared.Cache(max_entries=8, max_bytes=100)
    a = _insert(cache, 0, 60)
    b = _insert(cache, 1, 60)
    assert len(cache) == 1 and a.freed == 1 and b.freed == 0 and cache.nbytes == 60
    assert cache.refuses(100) == "" and "over prepared.CACHE.max_bytes" in cache.refuses(101)


def test_an_evicted_launch_in_use_is_not_freed_under_its_run() -> None:
    cache = prepared.Cache(max_entries=1)
    a = _insert(cache, 0)
    got, _ = cache.checkout(_key(0))
    _insert(cache, 1)
    assert a.freed == 0 and len(cache) == 1  # gone from the cache; its run still has it
    cache.release(got)
    cache.clear()
    assert len(cache) == 0


def test_prepared_launches_can_be_turned_off() -> None:
    cache = prepared.Cache(max_entries=0)
    assert cache.checkout(_key(0)) == (None, "prepared launches are off (prepared.CACHE.max_entries is 0)")


CHILD = """
import json, sys
import numpy as np
from numba.cuda.cudadrv import devices, driver
from numba.cuda.cudadrv.devicearray import from_array_like
from numba.cuda.dispatcher import _Kernel
from numba.cuda.typing.typeof import Purpose, typeof
from types import SimpleNamespace
import gasync
from gasync.runtime import kernelargs, launch, slab
from gasync.runtime.module import load

devices.get_context = lambda *a, **k: None  # empty arrays ask for a context only to hold it
prog = gasync.compile_source(open(sys.argv[1]).read(), "prepared.gasync")
module, _ = load(prog.generated, sys.argv[2])
inputs = {"x": np.arange(64, dtype=np.float32), "m": np.arange(6, dtype=np.int32).reshape(2, 3)}
host = launch.host_arrays(prog.generated, 8, inputs, 1 << 10)
roles = slab.roles_of(host, inputs, {"x", "m", "r", "f", "io", "y"}, True)
layout = slab.plan_layout(host, roles)
BASE = 0x7F0000000000
base = driver.MemoryPointer(None, driver.binding.CUdeviceptr(BASE), layout.total_bytes)
kern = SimpleNamespace(extensions=[], debug=False, cooperative=False,
                       _codelibrary=SimpleNamespace(get_cufunc=lambda: SimpleNamespace(kernel=None)))
kern._prepare_args = lambda *a: _Kernel._prepare_args(kern, *a)
args = kernelargs.KernelArgs(kern, (2, 1, 1), (128, 1, 1), 0)
views = {s.name: args.view(base, s) for s in layout.of(*slab.SLAB)}
views["HOSTSIG"] = from_array_like(host["HOSTSIG"], gpu_data=base.view(0, 4))
# the arrays as cuda.to_device would make them (all on the same bytes: only their types are compared)
fresh = {k: from_array_like(v, gpu_data=base.view(0, max(v.nbytes, 1))) for k, v in host.items()}
g, g0 = launch.device_state(module, views), launch.device_state(module, fresh)
ty = typeof(g, Purpose.argument)
ctl = next(s for s in layout.slots if s.name == "CTL")
params, spans, types = args.segments(ty, g, 0)
out = {
    "same_type": ty == typeof(g0, Purpose.argument),
    "pointers": all(views[s.name].device_ctypes_pointer.value == (BASE + s.offset if s.nbytes else None)
                    for s in layout.of(*slab.SLAB)),
    "params": len(params),
    "expected": sum(5 + 2 * a.ndim for a in host.values()),
    "spans": [list(p) for p in sorted(spans.values())],
    "names": sorted(spans) == sorted(host),
    "ptr_in_segment": all(params[spans[s.name][0] + 4] == BASE + s.offset for s in layout.of(*slab.SLAB) if s.nbytes),
    "fingerprint": kernelargs.fingerprint(views["CTL"]) == (BASE + ctl.offset, (host["CTL"].size,), (8,)),
}
print(json.dumps(out))
"""


def test_segments_are_numbas_own_marshalling_of_g_on_the_cpu(tmp_path: Path) -> None:
    source = tmp_path / "prepared.gasync"
    source.write_text(PROGRAM)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}  # the CUDA target's classes
    res = subprocess.run(
        [sys.executable, "-c", CHILD, str(source), str(tmp_path / "cache")],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    spans = out.pop("spans")
    assert [a for a, _ in spans] == [0] + [b for _, b in spans[:-1]] and spans[-1][1] == out["params"]  # a partition
    assert out == {
        "same_type": True,  # the views type as the arrays cuda.to_device makes: the kernel's signature
        "pointers": True,  # each view at the slab's base plus its offset
        "params": out["expected"],  # 5 + 2 x ndim per array
        "expected": out["expected"],
        "names": True,  # a segment per array of G
        "ptr_in_segment": True,  # a segment's fifth parameter is its array's pointer
        "fingerprint": True,
    }


def test_the_gpu_path_on_a_cpu_stand_in_starts_every_run_fresh(tmp_path: Path) -> None:
    """tests/unit/prepared_child.py: launch.execute's GPU path with host memory as device memory,
    and a fake kernel that checks the state it is launched on and then scribbles over it."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    child = Path(__file__).with_name("prepared_child.py")
    res = subprocess.run(
        [sys.executable, str(child), str(tmp_path / "cache")], capture_output=True, text=True, timeout=300, env=env
    )
    assert res.returncode == 0, res.stderr[-3000:]
    facts = json.loads(res.stdout.strip().splitlines()[-1])
    assert facts["stale"] == []  # every run (9, one of them after a deadlock) found host_arrays' state
    assert facts["host"] == ["prepared", "prepared", 1, 1]  # built once, then reused
    assert facts["device"] == "stand-in (PCI 0000:19:00)"  # the run's stats name the GPU it ran on
    assert facts["host_right"] is True
    assert facts["deadlock"].startswith("deadlock: no task can make progress")
    assert facts["after_deadlock"] == ["prepared", True]
    assert facts["device_outputs"] == ["prepared", "prepared", True, True]  # run 5's y outlives run 6
    assert facts["device_inputs"] == [True, True, True]  # the caller's arrays, in place, re-marshalled
    assert facts["compiled"] == ["compiled kernel: prepared launches are off (prepared.CACHE.max_entries is 0)", True]
    assert all(facts["same_stats"].values()) and facts["stat_keys"] == [] and facts["prepare_ms"] is True


OPT_IN_CHILD = """
import ctypes
import json
from types import SimpleNamespace
from numba.cuda.cudadrv import driver as drv
from gasync.runtime import kernelargs
from gasync.runtime.errors import BackendError

calls = []
def refuse(*a):
    raise drv.CudaAPIError(1, "CUDA_ERROR_INVALID_VALUE")
drv.driver = SimpleNamespace(cuKernelSetAttribute=lambda *a: calls.append([a[0].name, *map(str, a[1:])]))
cufunc = SimpleNamespace(handle="the CUkernel", device=SimpleNamespace(id=3))
kern = SimpleNamespace(_codelibrary=SimpleNamespace(get_cufunc=lambda: cufunc))
kernelargs.opt_in_shared(kern, 98416)
drv.driver = SimpleNamespace(cuKernelSetAttribute=refuse)
try:
    kernelargs.opt_in_shared(kern, 300000)
    refused = "no error"
except BackendError as exc:
    refused = str(exc)
print(json.dumps({"calls": calls, "refused": refused}))
"""


def test_the_launch_opts_a_kernel_in_to_its_dynamic_shared_memory(tmp_path: Path) -> None:
    """runtime/kernelargs.py's ``opt_in_shared``, in a child process (Numba's CUDA target, its
    driver replaced): cuKernelSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes, CUkernel, device)."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    res = subprocess.run([sys.executable, "-c", OPT_IN_CHILD], capture_output=True, text=True, timeout=300, env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["calls"] == [["CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES", "98416",
                             "the CUkernel", "3"]]  # fmt: skip
    assert out["refused"] == (
        "the driver refused the kernel's 300000 bytes of dynamic shared memory a block (its groups' locals)"
        " (CudaAPIError: [1] CUDA_ERROR_INVALID_VALUE)"
    )


def test_the_grid_counts_the_dynamic_shared_memory_a_block_takes() -> None:
    """The occupancy query is asked with the block's dynamic shared memory: a cooperative grid of
    more blocks than fit would not launch."""
    from types import SimpleNamespace

    from contract.bigshared import ONE_GROUP

    gen = gasync.compile_source(ONE_GROUP, "big.gasync").generated
    asked: list[tuple[int, int]] = []
    kern = SimpleNamespace(max_cooperative_grid_blocks=lambda threads, dyn=0: asked.append((threads, dyn)) or 132)
    assert launch._grid(kern, gen, RunOptions()) == (6, 3, 64)  # blocks of its 2-warp group, for 6 instances
    assert asked == [(64, 98448)]


def test_a_program_with_groups_has_blocks_of_its_largest_group_and_others_blocks_of_four() -> None:
    """A block runs one group instance at a time: warps beyond its tasks would only wait."""
    from types import SimpleNamespace

    from contract.bigshared import ONE_GROUP

    kern = SimpleNamespace(max_cooperative_grid_blocks=lambda threads, dyn=0: 264)
    grouped = gasync.compile_source(ONE_GROUP, "big.gasync").generated
    plain = gasync.compile_source("buffer y: i32[8] = zeros;\ntask t for i in 0..8 { y[i] = 1; }\n", "p.gasync")
    assert launch._grid(kern, grouped, RunOptions()) == (6, 3, 64)
    assert launch._grid(kern, plain.generated, RunOptions()) == (8, 2, 128)
    assert launch._grid(kern, grouped, RunOptions(warps_per_block=4)) == (8, 2, 128)  # asked for: kept


@pytest.mark.parametrize("packed", [False, True])
def test_the_direct_launch_points_at_a_c_value_of_each_parameter(packed: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kernelargs, "PACKED", packed)

    def kernel_args(sizes: list[int]) -> kernelargs.KernelArgs:
        args = object.__new__(kernelargs.KernelArgs)  # (its launch needs a GPU; its parameters do not)
        args.call, args._ptrs, args._values, args._offsets = "cuLaunchKernel", None, None, []
        info = [SimpleNamespace(size=n) for n in sizes]
        args._function = SimpleNamespace(handle=len(kernelargs._SIZES) + 1000, arguments_info=info)
        return args

    args = kernel_args([8, 8, 8, 4, 1, 8])
    args.bind([0, 13, 2**40, ctypes.c_int32(-5), True, None])
    ptrs = args._ptrs
    assert [ctypes.c_int64.from_address(ptrs[k]).value for k in range(3)] == [0, 13, 2**40]
    assert ctypes.c_int32.from_address(ptrs[3]).value == -5
    assert ctypes.c_bool.from_address(ptrs[4]).value is True
    if packed:  # one buffer, each value at an offset aligned to its size
        base = ctypes.addressof(args._values)
        assert [ptrs[k] - base for k in range(6)] == [0, 8, 16, 24, 28, 32]
    else:
        assert ptrs[5] is None  # set by the run (its timeout and mode)
    args.update(5, [ctypes.c_int64(7)])
    kept = ctypes.c_int64(7)
    args.update(5, [kept])
    kept.value = 11  # the run's scalars set in place (prepared.Prepared.launch), then handed over
    args.set_scalars(5, (kept,))
    assert ctypes.c_int64.from_address(ptrs[5]).value == 11
    args.update(5, [ctypes.c_int64(7)])
    args.update(1, [2**64 - 1])  # a pointer past 2^63 keeps its 8 bytes
    assert ctypes.c_int64.from_address(ptrs[5]).value == 7
    assert ctypes.c_uint64.from_address(ptrs[1]).value == 2**64 - 1
    assert args.call == "cuLaunchKernel"
    args.update(3, [ctypes.c_int64(1)])  # not the kernel's 4 bytes: cuda.core's launch from now on
    assert args._ptrs is None and args.call.startswith("cuda.core launch: parameter 3")
    other = kernel_args([8, 8])
    other.bind([0, 0, 0])  # a parameter too many
    assert other._ptrs is None and other.call == "cuda.core launch: 3 parameters marshalled, the kernel has 2"
