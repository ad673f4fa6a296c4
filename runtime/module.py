"""Generated modules on disk: written once under a name made of their content hash.

Numba's ``cache=True`` needs the kernel's source in a real file, and any edit
of that file invalidates the cache; naming the file by the hash of its text
(which includes the gasync version and the device-helper layer's hash) means
an unchanged program finds its compiled kernel, and a changed one never finds
a stale one.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from gasync.codegen import Generated
from gasync.planner.model import ExternDef
from gasync.runtime import cache
from gasync.runtime.errors import RunError


class ExternError(RunError):
    """An extern fn whose module or function cannot be used."""


def default_cache_dir() -> Path:
    return cache.default_dir()


def _helpers_digest() -> str:
    from gasync.runtime import devicelib

    return hashlib.sha256(Path(devicelib.__file__).read_bytes()).hexdigest()[:12]


def module_path(gen: Generated, cache_dir: str | None) -> Path:
    return cache.root_of(cache_dir) / f"gasync_{gen.digest}_{_helpers_digest()}.py"


def load(
    gen: Generated, cache_dir: str | None, max_bytes: int = cache.DEFAULT_MAX_BYTES
) -> tuple[ModuleType, Path]:
    """Write (if new) and import the generated module; return it and its path.

    Writing a new module first evicts the oldest cached programs beyond ``max_bytes``.
    """
    path = module_path(gen, cache_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != gen.source:
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(gen.source)
        tmp.replace(path)
        cache.evict(path.parent, max_bytes, keep=path)
    name = path.stem
    if name in sys.modules:
        return sys.modules[name], path
    program_dir = str(Path(gen.plan.path).resolve().parent)
    if gen.plan.externs and program_dir not in sys.path:
        sys.path.insert(0, program_dir)  # extern fn modules may sit beside the program
    for ext in gen.plan.externs:
        _import_extern(ext)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module
    return module, path


def _import_extern(ext: ExternDef) -> None:
    """Import an extern fn's module and check that the name is a Numba CUDA device function."""
    where = f'extern fn {ext.name} from "{ext.module}:{ext.attr}"'
    try:
        mod = importlib.import_module(ext.module)
    except ImportError as exc:
        raise ExternError(f"{where}: cannot import module '{ext.module}': {exc}", ext.span) from None
    except Exception as exc:  # the module itself failed while importing
        raise ExternError(f"{where}: importing '{ext.module}' failed: {type(exc).__name__}: {exc}", ext.span) from None
    fn = getattr(mod, ext.attr, None)
    if fn is None:
        raise ExternError(f"{where}: module '{ext.module}' has no attribute '{ext.attr}'", ext.span)
    opts = getattr(fn, "targetoptions", None) or {}
    is_device = opts.get("device", False) if opts else bool(getattr(fn, "_device", False))  # GPU, simulator
    if not hasattr(fn, "py_func") or not is_device:
        raise ExternError(f"{where}: '{ext.attr}' is not a @cuda.jit(device=True) function", ext.span)
    params = fn.py_func.__code__.co_argcount
    if params != len(ext.params):
        raise ExternError(
            f"{where}: declared with {len(ext.params)} parameter(s) but '{ext.attr}' takes {params}", ext.span
        )
    if opts:  # on the GPU: compile it for the declared types and compare the result type
        _check_extern_types(fn, ext, where)


def _check_extern_types(fn: Any, ext: ExternDef, where: str) -> None:
    from numba import types
    from numba.core.errors import TypingError

    from gasync.codegen.exprs import NP

    declared = tuple(getattr(types, NP[ty]) for _, ty in ext.params)
    try:
        cres = fn.compile_device(declared)
    except TypingError as exc:
        first = str(exc).strip().splitlines()[0]
        params = ", ".join(t for _, t in ext.params)
        raise ExternError(f"{where}: does not compile for ({params}): {first}", ext.span) from None
    got = cres.signature.return_type
    want = getattr(types, NP[ext.ret]) if ext.ret != "unit" else types.none
    if got != want and not (ext.ret != "unit" and isinstance(got, types.Number)):
        raise ExternError(f"{where}: declared to return {ext.ret} but returns {got}", ext.span)
