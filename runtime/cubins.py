"""Compiled kernels kept beside their generated module: a cached run launches without Numba's compiler.

Why. A run of a program compiled before (B6_cached: 0.72 s on the H200, 0.74 s on an H100) is
mostly Numba-CUDA loading its own cache: ``load_overload`` refreshes the CUDA target context,
loading every typing and lowering registry (0.87 s of 0.89 s under cProfile, 0.42 s of it an
import of scipy for a BLAS check; bench/NOTES.md, the twentieth session). None of that is
needed to launch a kernel that is already machine code.

What is kept. After Numba compiled (or loaded) a kernel for a signature, :func:`save` writes its
cubin and a small JSON record next to Numba's own files, in ``__pycache__/``:
``<module stem>.<kernel>-<signature digest>.cubin`` and ``.kmeta`` (runtime/cache.py counts,
evicts and clears them with the module). The record holds the kernel's entry name, whether it
is cooperative, the signature it was compiled for, the versions that made it, and each grid
size the launch asked the compiled kernel for (``max_cooperative_grid_blocks`` of a device, a
block size and a dynamic shared size) with its registers a thread.

What a later run does (:func:`load`, only while :data:`ENABLED`): for the same module, kernel,
signature, device and versions it loads the cubin into the context (Numba's own
``create_module_image``, which types nothing), takes the grid from the record, and the
prepared launch marshals G with Numba's ``_prepare_args`` used as the plain function it is
(types and values in, parameters out: runtime/kernelargs.py, ``KernelArgs.of_kept``). Anything
missing or different (another device, a block size not asked before, another Numba, a record
that does not parse) is a miss: the run compiles through Numba as before, and saves.

``ENABLED``: on since run 48 (H200, bench/NOTES.md: tests/gpu/test_cubins_gpu.py passed, and
B6's cached compile went 0.60 -> 0.005 s, its fresh process 3.4 -> 2.2 s); off, nothing is
written or read.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ENABLED = True
SUFFIX, META = ".cubin", ".kmeta"
FORMAT = 1  # the record's own version


@dataclass(frozen=True)
class Kept:
    """A kept kernel loaded into the current context: its function and what the record says."""

    function: Any  # Numba's CudaPythonFunction (its ``.kernel`` is cuda.core's, its ``.handle`` the driver's)
    cooperative: bool
    grids: dict[str, list[int]]  # grid_key -> [max_cooperative_grid_blocks, registers a thread]

    def grid(self, device: Any, threads: int, dynamic_shared: int) -> tuple[int, int] | None:
        """(max co-resident blocks, registers a thread) for ``threads`` a block on ``device``, if asked before."""
        got = self.grids.get(grid_key(device, threads, dynamic_shared))
        return (int(got[0]), int(got[1])) if got else None


class Asked:
    """What runtime/launch.py's ``_grid`` asks the compiled kernel, answered from a kept record
    (``LookupError`` for a block size or device not asked before: the run compiles instead)."""

    def __init__(self, kept: Kept, device: Any) -> None:
        self.kept, self.device = kept, device
        self.regs_per_thread = 0

    def max_cooperative_grid_blocks(self, threads: int, dynamic_shared: int) -> int:
        got = self.kept.grid(self.device, threads, dynamic_shared)
        if got is None:
            raise LookupError(grid_key(self.device, threads, dynamic_shared))
        self.regs_per_thread = got[1]
        return got[0]


def grid_key(device: Any, threads: int, dynamic_shared: int) -> str:
    """What a co-resident grid's size depends on besides the kernel: the device, the block, the shared bytes."""
    name = device.name.decode() if isinstance(device.name, bytes) else str(device.name)
    return f"{name}|{device.compute_capability}|{device.MULTIPROCESSOR_COUNT}|{threads}|{dynamic_shared}"


def paths(module_path: Path, kernel: str, sig: tuple[Any, ...]) -> tuple[Path, Path]:
    """The cubin's and the record's files for ``kernel`` of the module at ``module_path`` and ``sig``."""
    digest = hashlib.sha256(repr(tuple(sig_names(sig))).encode()).hexdigest()[:16]
    base = module_path.parent / "__pycache__" / f"{module_path.stem}.{kernel}-{digest}"
    return base.with_name(base.name + SUFFIX), base.with_name(base.name + META)


def sig_names(sig: tuple[Any, ...]) -> list[str]:
    """A signature as the record keeps it: each Numba type's name."""
    return [str(t) for t in sig]


@functools.cache  # (once a process: the installed distributions do not change under a run)
def versions() -> dict[str, str]:
    """What made a cubin and its parameters' layout, besides the module: gasync and Numba-CUDA."""
    from importlib import metadata

    out = {}
    for dist in ("gasync", "numba-cuda"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "unknown"
    return out


def save(module_path: Path, kernel: str, sig: tuple[Any, ...], kern: Any, device: Any, threads: int,
         dynamic_shared: int, max_blocks: int) -> bool:  # fmt: skip
    """Keep ``kern`` (``dispatcher.overloads[sig]``) and the grid size it gave; True if kept.
    A kernel with setup functions (its module must run them when it loads) or compiled with
    debug or argument extensions is not kept; nor is anything where a file cannot be written."""
    try:
        lib = kern._codelibrary
        if lib._setup_functions or lib._teardown_functions or kern.debug or kern.extensions:
            return False
        cubin_path, meta_path = paths(module_path, kernel, sig)
        names = sig_names(sig)
        record = _read(meta_path)
        if record is None or record.get("sig") != names or not cubin_path.exists():
            _write(cubin_path, _image_bytes(lib.get_cubin()))
            record = {"format": FORMAT, "versions": versions(), "entry": lib._entry_name,
                      "cooperative": bool(kern.cooperative), "sig": names, "grids": {}}  # fmt: skip
        key = grid_key(device, threads, dynamic_shared)
        if record["grids"].get(key) != [int(max_blocks), int(kern.regs_per_thread)]:
            record["grids"][key] = [int(max_blocks), int(kern.regs_per_thread)]
            _write(meta_path, json.dumps(record, indent=1).encode())
        return True
    except (OSError, AttributeError, TypeError, KeyError):
        return False


def load(cuda: Any, module_path: Path, kernel: str, sig: tuple[Any, ...]) -> Kept | None:
    """The kept kernel for ``sig``, loaded into the current context; None where there is none
    for this module, kernel, signature and these versions (or it cannot be loaded)."""
    cubin_path, meta_path = paths(module_path, kernel, sig)
    record = _read(meta_path)
    if record is None or record.get("format") != FORMAT or record.get("sig") != sig_names(sig):
        return None
    if record.get("versions") != versions():
        return None
    try:
        from numba.cuda.cudadrv.driver import ObjectCode

        image = ObjectCode.from_cubin(cubin_path.read_bytes())  # as Numba's own get_cubin() gives it
        module = cuda.current_context().create_module_image(image)
        function = module.get_function(record["entry"])
    except Exception:  # (a cubin for another device, a driver that refuses it: compile as before)
        return None
    return Kept(function, bool(record.get("cooperative")), dict(record.get("grids", {})))


def _image_bytes(image: Any) -> bytes:
    """A linked cubin's bytes: cuda.core's ``ObjectCode`` (Numba-CUDA 0.30) holds them as ``code``."""
    code = getattr(image, "code", image)
    if getattr(image, "code_type", "cubin") != "cubin" or not isinstance(code, bytes):
        raise TypeError(f"not a cubin in memory: {type(image).__name__}")
    return code


def _read(path: Path) -> dict[str, Any] | None:
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and isinstance(record.get("grids"), dict) else None


def _write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole: a temporary file of this process, then moved into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
