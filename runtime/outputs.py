"""Which arrays a run gives back: host NumPy arrays, or device arrays of the kind the inputs were.

``RunOptions.outputs`` is ``auto`` (device arrays when any input was one, else
NumPy), ``host`` or ``device``. A device result is of the first device input's
library: CuPy in, CuPy out; PyTorch in, PyTorch out; a Numba device array (which
any library reads through ``__cuda_array_interface__``) otherwise. None of these
copies through the host: an input buffer's result is the caller's own array (the
kernel wrote into it), and any other buffer's is a view of the kernel's device
array. The simulator runs in another process, so its results are always NumPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

OUTPUTS = ("auto", "host", "device")
DEVICE_LIBRARIES = ("cupy", "torch")  # wrapped by their own types; anything else stays a Numba array


def is_device_array(x: Any) -> bool:
    """A CUDA array: one that describes itself with ``__cuda_array_interface__``, or a Numba
    device array (the simulator's have no interface, since they live on the host)."""
    if isinstance(x, np.ndarray):
        return False
    return hasattr(x, "__cuda_array_interface__") or _is_numba_device_array(x)


def _is_numba_device_array(x: Any) -> bool:
    return type(x).__module__.startswith("numba") and hasattr(x, "copy_to_host")


def library(x: Any) -> str:
    """``cupy``, ``torch`` or ``numba``: whose device array ``x`` is, by its type's module."""
    root = type(x).__module__.split(".")[0]
    return root if root in DEVICE_LIBRARIES else "numba"


def output_kind(inputs: dict[str, Any], outputs: str) -> str:
    """``host``, or the library of the device arrays to give back (see the module's docstring)."""
    if outputs not in OUTPUTS:
        raise ValueError(f"outputs={outputs!r}: expected one of {', '.join(OUTPUTS)}")
    device = [x for x in inputs.values() if is_device_array(x)]
    if outputs == "host" or (outputs == "auto" and not device):
        return "host"
    return library(device[0]) if device else "numba"


def convert(dev: Any, kind: str, given: Any = None) -> Any:
    """The kernel's device array ``dev`` as ``kind`` asks; ``given`` is the caller's input for the buffer."""
    if kind == "host":
        return to_host(dev)
    if given is not None and is_device_array(given):
        return given  # the kernel wrote into the caller's own array
    if kind == "cupy":
        import cupy

        return cupy.asarray(dev)  # zero-copy through __cuda_array_interface__; keeps dev alive
    if kind == "torch":
        import torch

        return torch.as_tensor(dev, device="cuda")
    return dev


def to_host(x: Any) -> np.ndarray[Any, Any]:
    """A NumPy copy of a device array (of any library), or the NumPy array itself."""
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "copy_to_host"):
        return x.copy_to_host()  # type: ignore[no-any-return]
    if library(x) == "cupy":
        return x.get()  # type: ignore[no-any-return]
    if library(x) == "torch":
        return x.detach().cpu().numpy()  # type: ignore[no-any-return]
    if hasattr(x, "__cuda_array_interface__"):
        from numba import cuda

        return cuda.as_cuda_array(x).copy_to_host()  # type: ignore[no-any-return]
    return np.asarray(x)
