"""How many executors (warps) one launch can hold, known before anything compiles.

The simulator runs one block (runtime/launch.py), and a CUDA block holds at most
1024 threads: 32 warps. On a GPU every executor must be resident at once (they
spin on each other), so no launch holds more warps than the device has SMs times
resident threads per SM / 32; the kernel's register use may lower that further,
which the launch finds out after compiling (and then runs fewer, saying so).
"""

from __future__ import annotations

import ctypes

from gasync.codegen import LANES

MAX_BLOCK_THREADS = 1024
CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39


def max_executors(backend: str) -> tuple[int, str]:
    """The most executors ``backend`` can run in one launch, and why, in words."""
    if backend == "sim":
        return MAX_BLOCK_THREADS // LANES, f"the simulator runs one block of at most {MAX_BLOCK_THREADS} threads"
    sms, per_sm = _device_attrs()
    if not sms:
        return 1 << 20, "the GPU did not report its size"
    return sms * per_sm // LANES, f"this GPU holds {per_sm} threads on each of its {sms} SMs at once"


def _device_attrs() -> tuple[int, int]:
    """(SMs, resident threads per SM) of device 0 through the driver API; (0, 0) if unknown."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return 0, 0
    dev, sms, per_sm = ctypes.c_int(0), ctypes.c_int(0), ctypes.c_int(0)
    if lib.cuInit(0) != 0 or lib.cuDeviceGet(ctypes.byref(dev), 0) != 0:
        return 0, 0
    lib.cuDeviceGetAttribute(ctypes.byref(sms), CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev)
    lib.cuDeviceGetAttribute(ctypes.byref(per_sm), CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, dev)
    return sms.value, per_sm.value
