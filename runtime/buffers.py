"""Host-side initial contents of buffers, and checks of user inputs."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np

from gasync.planner.model import BufferDef, Plan
from gasync.runtime.errors import InputError, input_error, worded
from gasync.runtime.outputs import is_device_array

DTYPES = {
    "bool": np.bool_,
    "i32": np.int32,
    "i64": np.int64,
    "u32": np.uint32,
    "u64": np.uint64,
    "f32": np.float32,
    "f64": np.float64,
}


def dtype_of(ty: str) -> np.dtype[Any]:
    return np.dtype(DTYPES[ty])


def initial(buf: BufferDef) -> np.ndarray[Any, Any]:
    """The array a buffer starts as (``input`` buffers excepted).

    ``random(seed)``: floats uniform in [0, 1), integers uniform in [0, 2^16),
    bools fair coins, from NumPy's PCG64 generator seeded with ``seed``.
    ``iota``: 0, 1, 2, ... in row-major order.
    """
    dt = dtype_of(buf.elem)
    if buf.init == "zeros":
        return np.zeros(buf.shape, dt)
    if buf.init == "iota":
        return np.arange(buf.size).reshape(buf.shape).astype(dt)
    if buf.init == "fill":
        return np.full(buf.shape, buf.init_value, dt)
    if buf.init == "random":
        rng = np.random.default_rng(int(buf.init_value or 0))
        if buf.elem in ("f32", "f64"):
            return rng.random(buf.shape).astype(dt)
        if buf.elem == "bool":
            return rng.integers(0, 2, buf.shape).astype(dt)
        return rng.integers(0, 1 << 16, buf.shape).astype(dt)
    raise ValueError(buf.init)


def check_inputs(plan: Plan, inputs: dict[str, Any]) -> None:
    """Every ``input`` buffer has an array of its shape and dtype, and nothing else is given:
    raises the first error that :func:`input_errors` finds."""
    errors = input_errors(plan, inputs)
    if errors:
        raise errors[0]


def input_errors(plan: Plan, inputs: dict[str, Any]) -> list[InputError]:
    """Every error in ``inputs``, in the program's order: a name that is no input buffer, an
    input buffer without an array, an array of another shape or dtype."""
    buffers = {b.name: b for b in plan.buffers}
    errors = []
    for name in inputs:
        if name not in buffers:
            errors.append(input_error(name, f"the program has no buffer named '{name}'"))
        elif buffers[name].init != "input":
            errors.append(input_error(name, f"buffer '{name}' is initialised with '{buffers[name].init}', not 'input'"))
    for b in plan.buffers:
        if b.init != "input":
            continue
        if b.name not in inputs:
            declared = f"buffer '{b.name}' is declared '= input' but"
            errors.append(
                worded(
                    InputError(f"{declared} inputs has no '{b.name}'", b.span),
                    f"{declared} no --input {b.name}=FILE.npy was given",
                )
            )
            continue
        shape, dtype = shape_and_dtype(inputs[b.name], b.name)
        want = f"{b.elem}{list(b.shape)}"
        if shape != b.shape:
            errors.append(input_error(b.name, f"shape {list(shape)} does not match the declaration {want}", b.span))
        elif dtype != dtype_of(b.elem):
            swapped = dtype.newbyteorder("=") == dtype_of(b.elem) and dtype.byteorder not in ("=", "|")
            hint = f"; convert it with .astype('{dtype_of(b.elem).str}')" if swapped else ""
            errors.append(
                input_error(
                    b.name, f"dtype {dtype} does not match the declaration {want} ({dtype_of(b.elem)}){hint}", b.span
                )
            )
    return errors


def shape_and_dtype(arr: Any, name: str) -> tuple[tuple[int, ...], np.dtype[Any]]:
    """Of a NumPy array, or of a device array through ``__cuda_array_interface__``
    (CuPy, PyTorch and Numba arrays all describe themselves that way)."""
    cai = getattr(arr, "__cuda_array_interface__", None)
    if cai is not None:
        return tuple(int(d) for d in cai["shape"]), np.dtype(cai["typestr"])
    if isinstance(arr, np.ndarray) or is_device_array(arr):  # a Numba device array has both too
        return tuple(arr.shape), np.dtype(arr.dtype)
    raise input_error(name, f"expected a NumPy array or a CUDA device array, found {type(arr).__name__}")


def load_npy(name: str, path: str | Path) -> np.ndarray[Any, Any]:
    """The array in the .npy file for input buffer ``name``; a missing or bad file is an error in
    the input data (``--input x: cannot read ...``)."""
    try:
        with open(path, "rb") as f:
            magic = f.read(6)
        if magic != b"\x93NUMPY":  # np.load would take it for a pickle, and say so
            what = "an .npz archive" if magic[:2] == b"PK" else "not a .npy file (no NumPy header)"
            raise input_error(name, f"cannot read {path} as a .npy array: it is {what}")
        arr = np.load(path, allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise input_error(name, f"cannot read {path} as a .npy array: {exc}") from None
    if arr.dtype.byteorder not in ("=", "|") and arr.dtype.isnative is False:
        # written on a machine of the other byte order (or asked for): the same numbers, in ours
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return arr


class NpyReader:
    """Reads input .npy files into arrays it keeps, one per buffer name and thread, when the next
    file has the last one's shape and dtype (``gasync map``'s runs, one input after another on a
    worker): the file's bytes go straight into memory already mapped, where ``np.load`` allocates
    16 MB afresh each time. Dask's workers set ``MALLOC_TRIM_THRESHOLD_``, which stops glibc from
    raising its mmap threshold, so there each new large array was fresh pages, faulted in one by
    one as the file was read: 6.4 ms against 3.7 in one process for a 2048 x 2048 f32 image on the
    H200's host (bench/NOTES.md, issue 17). An array it returns is overwritten by the next read
    of the same name in the same thread: for a caller that is done with it by then (``run_files``
    writes its outputs before it returns). A file it cannot read this way (another byte order,
    Fortran order, an object dtype, a bad header) goes through :func:`load_npy`, which says what
    is wrong with it."""

    def __init__(self) -> None:
        self._local = threading.local()

    def read(self, name: str, path: str | Path) -> np.ndarray[Any, Any]:
        kept: dict[str, np.ndarray[Any, Any]] = self._local.__dict__.setdefault("kept", {})
        try:
            with open(path, "rb") as f:
                shape, fortran, dtype = _npy_header(f)
                old = kept.get(name)
                if fortran or old is None or (old.shape, old.dtype) != (shape, dtype):
                    raise ValueError("not one to read into the kept array")
                if f.readinto(memoryview(old).cast("B")) != old.nbytes or f.read(1):
                    raise ValueError("the data is not the size its header says")
                return old
        except (ValueError, OSError):
            arr = load_npy(name, path)  # (a fresh array, or the error that says what is wrong)
            if arr.flags.c_contiguous and arr.dtype.isnative and not arr.dtype.hasobject:
                kept[name] = arr
            return arr


def _npy_header(f: Any) -> tuple[tuple[int, ...], bool, np.dtype[Any]]:
    """A .npy file's shape, Fortran order and dtype (ValueError for what NpyReader leaves to
    ``np.load``: a format version past 2.0, another byte order, an object dtype)."""
    version = np.lib.format.read_magic(f)
    if version not in ((1, 0), (2, 0)):
        raise ValueError(f"format version {version}")
    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, fortran, dtype = read(f)
    if not dtype.isnative or dtype.hasobject:
        raise ValueError("another byte order, or objects")
    return shape, fortran, dtype
