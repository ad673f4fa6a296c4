"""Extern fns: each one's module imported and its function checked against its declaration.

:func:`resolve` runs from ``check`` (``pipeline.check``), so that a missing module, a
missing name or a wrong signature is a located error before anything runs, and again
from ``module.load``, before the generated module imports the externs itself. The
program's folder goes on ``sys.path`` first: an extern's module may sit beside it.

In order: the module imports; it has the name; the name is a numba-cuda device
function (``@cuda.jit(device=True)``, or the simulator's stand-in for one); its Python
function takes as many parameters as declared; and the type Numba's CUDA target
infers for its result, given the declared parameter types, is the declared return type
(:mod:`gasync.runtime.typeinfer`, which needs no GPU and no NVVM). The simulator's
stand-ins cannot be typed, so under the simulator the count is the last check.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

from gasync.dsl.diagnostics import ErrorGroup, GasyncError, Note
from gasync.planner.model import ExternDef
from gasync.runtime.errors import ExternImportError, ExternNotDeviceError, ExternSignatureError


def resolve(externs: tuple[ExternDef, ...], program_path: str) -> None:
    """Import and check every extern fn; raise a located error for each bad one (ErrorGroup for several)."""
    if not externs:
        return
    program_dir = str(Path(program_path).resolve().parent)
    if program_dir not in sys.path:
        sys.path.insert(0, program_dir)
    errors: list[GasyncError] = []
    for ext in externs:
        try:
            _check_signature(_device_function(ext, program_dir), ext)
        except GasyncError as exc:
            errors.append(exc)
    if len(errors) == 1:
        raise errors[0]  # one error pickles whole from the simulator's process; a group would not
    if errors:
        raise ErrorGroup(errors)


def _device_function(ext: ExternDef, program_dir: str) -> Any:
    where = ext.path_span if ext.path_span.line else ext.span
    try:
        mod = importlib.import_module(ext.module)
    except ImportError as exc:
        raise ExternImportError(
            f"cannot import module '{ext.module}' for extern fn '{ext.name}': {exc}",
            where,
            (Note(f"modules are looked up beside the program ({program_dir}) and on the Python path"),),
        ) from None
    except Exception as exc:  # the module itself failed while importing
        msg = f"importing module '{ext.module}' for extern fn '{ext.name}' failed: {type(exc).__name__}: {exc}"
        raise ExternImportError(msg, where) from None
    fn = getattr(mod, ext.attr, None)
    if fn is None:
        raise ExternImportError(f"module '{ext.module}' has no function '{ext.attr}'", where)
    opts = getattr(fn, "targetoptions", None) or {}
    is_device = opts.get("device", False) if opts else bool(getattr(fn, "_device", False))  # GPU, simulator
    if not hasattr(fn, "py_func") or not is_device:
        raise ExternNotDeviceError(
            f"'{ext.module}:{ext.attr}' is not a CUDA device function",
            where,
            (Note("an extern fn must be decorated with @cuda.jit(device=True)"),),
        )
    return fn


def _check_signature(fn: Any, ext: ExternDef) -> None:
    code = fn.py_func.__code__
    defined = Note(f"'{ext.attr}' is defined at {code.co_filename}:{code.co_firstlineno}")
    if code.co_argcount != len(ext.params):
        declared = _count(len(ext.params))
        raise ExternSignatureError(
            f"extern fn '{ext.name}' is declared with {declared}, but '{ext.attr}' takes {code.co_argcount}",
            ext.span,
            (defined,),
        )
    if getattr(fn, "targetoptions", None):  # numba-cuda proper; the simulator's stand-ins are not typed
        _check_types(fn, ext, defined)


def _check_types(fn: Any, ext: ExternDef, defined: Note) -> None:
    from numba import types
    from numba.core.errors import TypingError

    from gasync.codegen.exprs import NP
    from gasync.runtime.typeinfer import return_type

    declared = tuple(getattr(types, NP[ty]) for _, ty in ext.params)
    params = "(" + ", ".join(ty for _, ty in ext.params) + ")"
    try:
        got = return_type(fn.py_func, declared)
    except TypingError as exc:
        lines = [line.strip() for line in str(exc).strip().splitlines()]
        first = " ".join([lines[0], *[ln for ln in lines if ln.startswith(">>>")][:1]])
        raise ExternSignatureError(
            f"'{ext.attr}' cannot be compiled for the declared parameter types {params}: {first}", ext.span, (defined,)
        ) from None
    want = getattr(types, NP[ext.ret]) if ext.ret != "unit" else types.none
    if got != want:
        names = {getattr(types, np_name): ours for ours, np_name in NP.items()}
        found = "no value" if got == types.none else names.get(got, str(got))
        declared_ret = "no value" if ext.ret == "unit" else ext.ret
        raise ExternSignatureError(
            f"extern fn '{ext.name}' is declared to return {declared_ret}, "
            f"but '{ext.attr}' returns {found} for {params}",
            ext.span,
            (defined,),
        )


def _count(n: int) -> str:
    return f"{n} parameter" + ("" if n == 1 else "s")
