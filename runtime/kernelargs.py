"""The one place gasync uses numba-cuda's internals: a kernel's parameters marshalled once, launched as they stand.

Written against numba-cuda 0.30.x, whose ``_Kernel.launch(args, griddim, blockdim,
stream, sharedmem)`` does three things on every call: marshal each argument into a
flat list of kernel parameters with ``_Kernel._prepare_args`` (an array is 5 + 2 x ndim
parameters: meminfo 0, parent 0, size, itemsize, pointer, shape, strides; a tuple is
its members' in order), build a cuda.core ``LaunchConfig`` (``is_cooperative`` from
cuda.core 1.0 on, ``cooperative_launch`` before), and call cuda.core's
``launch(stream, config, cufunc.kernel, *params)``. :class:`KernelArgs` does each of
these with Numba's own functions, keeping the parameters; runtime/prepared.py keeps
one per prepared launch.

It also opts a kernel in to more than 48 KiB of dynamic shared memory a block
(:func:`opt_in_shared`, the launch's first step for a program whose groups need it).

Anything that moved raises :class:`Unsupported`, naming it, and the run takes the
compiled kernel's own launch (with a warning): so does a kernel compiled with
argument extensions or ``debug=True`` (whose launch does more), an argument Numba
would copy back after the launch, and G marshalled an array at a time disagreeing
with Numba's marshalling of the whole of G (checked once per prepared launch).
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import numpy as np

from gasync.runtime.errors import BackendError
from gasync.runtime.slab import Slot


def opt_in_shared(kern: Any, nbytes: int) -> None:
    """Let the compiled kernel ``kern`` (``dispatcher.overloads[sig]``) take ``nbytes`` of dynamic
    shared memory a block. Above 48 KiB the driver needs the kernel's
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES raised first, which numba-cuda has no call
    for (its issue #94): set here as numba-cuda sets its own carveout attribute
    (``CudaPythonFunction.set_shared_memory_carveout``), with cuda-python's
    ``cuKernelSetAttribute`` on the kernel's CUkernel for its device."""
    what = f"the kernel's {nbytes} bytes of dynamic shared memory a block (its groups' locals)"
    try:
        from numba.cuda.cudadrv.driver import CudaAPIError, binding, driver

        cufunc = kern._codelibrary.get_cufunc()
        attr = binding.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        handle, device = cufunc.handle, cufunc.device.id
    except (ImportError, AttributeError) as exc:
        raise BackendError(f"numba-cuda's kernel internals are not those of 0.30.x ({_named(exc)}): {what}"
                           " cannot be set up") from exc  # fmt: skip
    try:
        driver.cuKernelSetAttribute(attr, nbytes, handle, device)
    except CudaAPIError as exc:
        raise BackendError(f"the driver refused {what} ({_named(exc)})") from exc


# Launch through the driver on kept parameter pointers (False: cuda.core's launch, which converts
# every parameter at every call). Measured (bench/NOTES.md, runs 37-38, H100): the call 0.071-0.074
# ms against cuda.core's 0.078 (its conversion of ~330 parameters, ~5 us); the driver's own call
# is the rest. On since run 42's GPU suite.
DIRECT = True


def stand_in(kept: Any) -> Any:
    """A kept kernel (runtime/cubins.py) as :class:`KernelArgs` and :func:`opt_in_shared` read a
    compiled one: its function, no argument extensions, not debug, and Numba's own
    ``_prepare_args``, which reads nothing of its kernel but the extensions."""
    from numba.cuda.dispatcher import _Kernel

    kern = SimpleNamespace(extensions=[], debug=False, cooperative=kept.cooperative, kept=True,
                           _codelibrary=SimpleNamespace(get_cufunc=lambda: kept.function))  # fmt: skip
    kern._prepare_args = functools.partial(_Kernel._prepare_args, kern)
    return kern


# The direct launch's parameter values in one buffer, each at its offset, the pointers into it
# (False: each value its own ctypes object, pointed at where it lies in Python's heap). The
# driver's call reads every parameter through its pointer: ~330 objects spread over the heap
# are ~330 cache misses after a run's reset has walked over other memory (bench/NOTES.md, run
# 40: the call 15 us in a hot loop, 35-50 us after a reset). Off until measured.
PACKED = False


class Unsupported(Exception):
    """A prepared launch cannot run here; the message says what numba-cuda did not have or do."""


class KernelArgs:
    """The launch of one compiled kernel (``kern``: ``dispatcher.overloads[sig]``) on one grid."""

    def __init__(self, kern: Any, griddim: Any, blockdim: Any, sharedmem: int) -> None:
        try:
            from numba.cuda import types
            from numba.cuda._compat import CUDA_CORE_GE_1_0
            from numba.cuda.cudadrv.devicearray import DeviceNDArray
            from numba.cuda.dispatcher import LaunchConfig, launch

            self._prepare = kern._prepare_args
            self._function = kern._codelibrary.get_cufunc().kernel
            extensions, debug, cooperative = kern.extensions, kern.debug, kern.cooperative
            flag = "is_cooperative" if CUDA_CORE_GE_1_0 else "cooperative_launch"
            self.config = LaunchConfig(grid=griddim, block=blockdim, shmem_size=sharedmem, **{flag: cooperative})
        except (ImportError, AttributeError, TypeError) as exc:
            raise Unsupported(f"numba-cuda's launch internals are not those of 0.30.x ({_named(exc)})") from exc
        if extensions or debug:
            raise Unsupported("the kernel was compiled with argument extensions or debug=True")
        self._tuple, self._array, self._launch = types.BaseTuple, DeviceNDArray, launch
        self._dims = (*_three(griddim), *_three(blockdim), int(sharedmem))
        self._cooperative = bool(cooperative)
        # the direct launch's array of pointers to the parameters, and the parameters it points at
        self._ptrs: Any = None
        self._held: list[Any] = []
        self._sizes: list[int] = []
        self._values: Any = None  # PACKED: every parameter's bytes, at ``_offsets``
        self._offsets: list[int] = []
        self.call = "cuLaunchKernel" if DIRECT else "cuda.core launch: DIRECT is off"
        self.kept = bool(getattr(kern, "kept", False))  # a kept kernel's (runtime/cubins.py)

    def marshal(self, ty: Any, val: Any, stream: Any) -> list[Any]:
        """``val``'s kernel parameters, as ``_Kernel.launch`` builds them."""
        params: list[Any] = []
        retr: list[Any] = []
        self._prepare(ty, val, stream, retr, params)
        if retr:
            raise Unsupported("Numba would copy an argument back after the launch (a host array in G)")
        return params

    def segments(self, ty: Any, g: Any, stream: Any) -> tuple[list[Any], dict[str, tuple[int, int]], dict[str, Any]]:
        """G's parameters, and each array's: (params, name -> (start, end), name -> its Numba type).
        Checked against Numba's marshalling of the whole of G."""
        params: list[Any] = []
        spans, types = {}, {}
        for name, t, val in self._leaves(ty, g, "G"):
            seg = self.marshal(t, val, stream)
            spans[name], types[name] = (len(params), len(params) + len(seg)), t
            params.extend(seg)
        whole = self.marshal(ty, g, stream)
        if [_plain(p) for p in whole] != [_plain(p) for p in params]:
            raise Unsupported("G marshalled an array at a time differs from Numba's marshalling of the whole of G")
        return params, spans, types

    def _leaves(self, ty: Any, val: Any, name: str) -> Iterator[tuple[str, Any, Any]]:
        """(array name, Numba type, value) of G's arrays, in the order ``_prepare_args`` walks tuples."""
        if not isinstance(ty, self._tuple):
            yield name, ty, val
            return
        for field, t, v in zip(val._fields, ty, val, strict=True):
            yield from self._leaves(t, v, field)

    def launch(self, stream: Any, params: list[Any]) -> None:
        """Launch the kernel with ``params``; asynchronous. Directly (``DIRECT``): the driver's
        launch call on an array of pointers to ``params`` kept between calls, in which only the
        parameters that are new objects since the last call are pointed at again; else
        cuda.core's ``launch``, which converts all ~330 of them on every call (~60 us a run:
        bench/NOTES.md, run 35)."""
        if self._ptrs is not None:
            self._launch_direct(stream)
            return
        try:
            self._launch(stream, self.config, self._function, *params)
        except TypeError as exc:  # refused before anything ran: its signature or parameter types changed
            hint = "set gasync.runtime.prepared.CACHE.max_entries = 0 to launch through the compiled kernel"
            raise Unsupported(
                f"cuda.core's launch(stream, config, kernel, *params) refused the call ({_named(exc)}); {hint}"
            ) from exc

    def bind(self, params: list[Any]) -> None:
        """Keep ``params`` (None where a run sets one: ``update``) for the direct launch: each as a
        C value of the size the kernel's parameter has, and an array of pointers to them. A
        kernel whose parameters differ (in number or a size) keeps cuda.core's launch."""
        if self.call != "cuLaunchKernel":
            return
        try:
            self._sizes = _parameter_sizes(self._function)
            if len(self._sizes) != len(params):
                raise Unsupported(f"{len(params)} parameters marshalled, the kernel has {len(self._sizes)}")
            self._held = [None] * len(params)
            self._ptrs = (ctypes.c_void_p * len(params))()
            if PACKED:
                self._packed_offsets()
            self.update(0, params)
        except Unsupported as exc:
            self.call, self._ptrs = f"cuda.core launch: {exc}", None

    def update(self, start: int, seg: list[Any]) -> None:
        """Parameters ``start``, ``start + 1``, ... are now ``seg``'s; one that has no C value of
        its kernel parameter's size turns the direct launch off (cuda.core's launch from then on)."""
        if self._ptrs is None:
            return
        for k, p in enumerate(seg):
            i = start + k
            value = None if p is None else _c_value(p)
            if value is not None and (value is _NO_VALUE or ctypes.sizeof(value) != self._sizes[i]):
                self.call, self._ptrs = f"cuda.core launch: parameter {i} is not of the kernel's size", None
                return
            self._held[i] = value
            self._point(i, value)

    def set_scalars(self, start: int, values: tuple[Any, ...]) -> None:
        """Parameters ``start``, ... are the C values ``values``, set in place by the caller since
        the last launch: packed, their bytes go into the buffer; else the pointers already point at them."""
        if self._values is not None and self._ptrs is not None:
            for k, v in enumerate(values):
                self._point(start + k, v)

    def _point(self, i: int, value: Any) -> None:
        """Parameter ``i``'s pointer at C value ``value`` (None: not set yet); packed, the value's
        bytes are copied to its offset in the buffer, where its pointer was set once."""
        if self._values is None:
            self._ptrs[i] = None if value is None else ctypes.addressof(value)
        elif value is not None:
            ctypes.memmove(ctypes.addressof(self._values) + self._offsets[i], ctypes.addressof(value), self._sizes[i])

    def _packed_offsets(self) -> None:
        """One 8-byte aligned buffer for every parameter's value, each at an offset aligned to its size."""
        offsets, at = [], 0
        for size in self._sizes:
            align = min(max(size, 1), 8)
            at = -(-at // align) * align
            offsets.append(at)
            at += size
        self._values = (ctypes.c_uint64 * max(1, -(-at // 8)))()
        self._offsets = offsets
        base = ctypes.addressof(self._values)
        for i, off in enumerate(offsets):
            self._ptrs[i] = base + off

    def _launch_direct(self, stream: Any) -> None:
        from cuda.bindings import driver as cu

        handle = getattr(stream, "handle", stream)  # a cuda.core Stream, or 0 for the default stream
        gx, gy, gz, bx, by, bz, shmem = self._dims
        args = (self._function.handle, gx, gy, gz, bx, by, bz, shmem, handle, ctypes.addressof(self._ptrs))
        if self._cooperative:
            (err,) = cu.cuLaunchCooperativeKernel(*args)
        else:
            (err,) = cu.cuLaunchKernel(*args, 0)
        if err != cu.CUresult.CUDA_SUCCESS:
            raise BackendError(f"the driver refused the kernel's launch ({err.name})")

    def view(self, base: Any, slot: Slot) -> Any:
        """``slot``'s device array on ``base`` (a MemoryPointer) at its offset; an empty one is
        Numba's own null array, as ``cuda.to_device`` makes it."""
        dtype = np.dtype(slot.dtype)
        if slot.nbytes == 0:
            return self._array(slot.shape, slot.strides, dtype)
        memory = base.view(slot.offset, slot.offset + slot.nbytes)
        return self._array(slot.shape, slot.strides, dtype, gpu_data=memory)

    @staticmethod
    def memset(arr: Any) -> None:
        """Zero a device array's bytes (cuMemsetD8 on the default stream, asynchronous to the host)."""
        arr.gpu_data.memset(0, arr.nbytes)

    @staticmethod
    def flush_frees(cuda: Any) -> None:
        """Numba defers frees until 10 are pending or an allocation fails; a dropped state goes now."""
        pending = getattr(cuda.current_context(), "deallocations", None)
        if pending is not None and hasattr(pending, "clear"):
            pending.clear()


_NO_VALUE = ctypes.c_char(0)  # what _c_value gives for a parameter it cannot convert
_SIZES: dict[int, list[int]] = {}  # a kernel's handle -> its parameters' sizes, asked once a process


def _parameter_sizes(kernel: Any) -> list[int]:
    """The sizes of cuda.core ``kernel``'s parameters, as the driver gives them (cuFuncGetParamInfo)."""
    try:
        key = int(kernel.handle)
        if key not in _SIZES:
            _SIZES[key] = [int(a.size) for a in kernel.arguments_info]
        return _SIZES[key]
    except Exception as exc:  # (a driver without cuFuncGetParamInfo, or no kernel: a test's)
        raise Unsupported(f"the kernel's parameter sizes are not known ({_named(exc)})") from exc


def _c_value(p: Any) -> Any:
    """Numba's marshalled parameter ``p`` as the C value the kernel takes: a ctypes value as it
    is, a Python int (an array's pointers, sizes, shapes and strides) as 8 bytes, as cuda.core
    takes it, a bool as one byte."""
    if isinstance(p, ctypes._SimpleCData):
        return p
    if isinstance(p, bool):
        return ctypes.c_bool(p)
    if isinstance(p, int):
        return ctypes.c_int64(p) if p < 1 << 63 else ctypes.c_uint64(p)
    if isinstance(p, float):
        return ctypes.c_double(p)
    return _NO_VALUE  # (a type cuda.core knows and this does not)


def _three(dims: Any) -> tuple[int, int, int]:
    """A grid's or block's (x, y, z) from an int or up to three ints (Numba's own normalisation)."""
    if isinstance(dims, int):
        return dims, 1, 1
    xs = [int(d) for d in dims] + [1, 1, 1]
    return xs[0], xs[1], xs[2]


def fingerprint(arr: Any) -> tuple[Any, ...]:
    """What a device array's parameters are made of, but its dtype: pointer, shape, strides."""
    return arr.device_ctypes_pointer.value, tuple(arr.shape), tuple(arr.strides)


def _named(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _plain(p: Any) -> Any:
    return p.value if isinstance(p, ctypes._SimpleCData) else p
