"""A faster equality and hash for Numba-CUDA's compiler flags: the same results, less compile time.

Numba-CUDA looks up every typed call of an overloaded or intrinsic function in a cache keyed by,
among others, the compiler flags in force (``typing/templates.py``, ``_get_impl``). Hashing and
comparing a flags object (``core/targetconfig.py``, ``TargetConfig``) builds a dict of all its
options through one property call each: a cold compile of samples/stencil2d.gasync made 6,672
such look-ups, 1.4 s of its ~4.4 s in Numba (``bench/compile_profile.py`` under cProfile,
bench/NOTES.md). The patch computes the same things directly:

- ``__hash__`` was ``hash(tuple(sorted(self.values())))``, and sorting a dict sorts its keys: the
  hash of the sorted option names, a constant of the class, kept once per class;
- ``__eq__`` compared ``values()`` dicts: the same dict, read from ``_values`` and each option's
  default without the properties (each option's property reads exactly that); an object is
  equal to itself, and to one of its class with the same options set to the same values,
  without building it.

Installed once per process when the runtime loads a generated module (runtime/module.py), and
only where the class has the shape these rely on (a version that differs is left as it is).
tests/unit/test_numbafast.py checks both against the originals.

Also: **an operator's call typed once for the same argument types** (:func:`memo_operator_calls`).
Numba types every ``a + b``, ``a < b``, ``x[i]``, ``x[i] = v`` by trying each template of the
operator in turn (``types.functions.Function.get_call_type``), NumPy's ufunc templates among
them, most failing through an exception, and keeps no answer: a cold compile of
samples/stencil2d.gasync typed 181 additions, 132 item reads and 78 products so, ~0.3 s of its
~0.6 s of type inference on this machine (bench/NOTES.md, the thirty-eighth session), almost all
of them the same few argument types again. The answer is a function of the operator's type
(interned: its key is its templates, so a newly registered overload makes another type), the
typing context and the argument types; the patch keeps each successful answer under that key
and gives it again (a literal argument's type is its value's, so ``i + 1`` and ``i + 2`` are two
keys, as ``t[0]`` and ``t[1]`` on a tuple are). It keeps no answer for keyword arguments or a
failure (which raises again, as before). Checked: each of the 24 samples and bench programs
compiled alone gives the same PTX with and without it (bench/NOTES.md). The implementation key
a successful typing records stays where lowering looks for it (the operator type's own
``_impl_keys``: the type is the same object).

Also: **no scipy import for a BLAS that device code cannot call** (:func:`arraymath_without_blas`).
Numba-CUDA's target context, at its first compile in a process, imports ``numba.cuda.np.arraymath``,
whose import asks whether BLAS is there (``_check_blas``: ``import scipy.linalg.cython_blas``).
Where scipy is installed (the device machines' image) that import is 0.12 s of this CPU and
0.18-0.23 s of an H100 host's (bench/NOTES.md, runs 95-96: 0.02-0.03 s after gasync's answer;
run 34's profile had 0.42 s on a slower host), paid by every process that compiles a kernel.
The answer decides one thing only: whether ``np.correlate``/``np.convolve`` of floats in
device code take their inner products through ``np.dot`` (BLAS through scipy's function
pointers, host code that a kernel cannot run) or through a plain loop, which device code can
run. So gasync imports that module first, with the check answered "no BLAS"
(``numba.cuda.np.linalg.ensure_blas`` raising ImportError while the one import runs, then put
back: linalg's own checks are unchanged). Skipped where the module is imported already, or
scipy's BLAS is (then the check costs nothing).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

_installed = False


def install() -> bool:
    """Patch ``TargetConfig``'s ``__hash__``, ``__eq__`` and ``values``; True if patched."""
    global _installed
    if _installed:
        return True
    try:
        from numba.cuda.core import targetconfig
    except ImportError:
        return False
    cls = getattr(targetconfig, "TargetConfig", None)
    if cls is None or "_values" not in getattr(cls, "__slots__", ()) or not hasattr(cls, "values"):
        return False
    original_eq = cls.__eq__
    hashes: dict[type, int] = {}

    def values(self: Any) -> dict[str, Any]:
        """Returns a dict of all the values"""
        own = self._values
        return {k: own.get(k, opt.default) for k, opt in type(self).options.items()}

    def __hash__(self: Any) -> int:  # noqa: N807
        kind = type(self)
        if kind not in hashes:
            hashes[kind] = hash(tuple(sorted(kind.options)))
        return hashes[kind]

    def __eq__(self: Any, other: Any) -> Any:  # noqa: N807
        if self is other:
            return True
        if type(other) is type(self) and other._values == self._values:
            return True  # (the same options set to the same values: the same values())
        if isinstance(other, cls):
            return values(self) == values(other)
        return original_eq(self, other)

    cls.values, cls.__hash__, cls.__eq__ = values, __hash__, __eq__
    _installed = True
    return True


_memo: dict[tuple[Any, ...], Any] = {}
_memoized: list[type] = []


def memo_operator_calls() -> int:
    """Keep the typing of operator calls (the module's docstring) in every ``Function`` type
    class Numba and Numba-CUDA define; the number of classes patched (by this call or before)."""
    if _memoized:
        return len(_memoized)
    import operator

    operators = {getattr(operator, name) for name in dir(operator) if not name.startswith("_")}
    for modname in ("numba.core.types.functions", "numba.cuda.types.cuda_functions"):
        try:
            functions = importlib.import_module(modname)
        except ImportError:
            continue
        cls, base = getattr(functions, "Function", None), getattr(functions, "BaseFunction", None)
        if cls is None or "get_call_type" not in vars(base or object):
            continue
        cls.get_call_type = _memoizing(cls.get_call_type, operators)
        _memoized.append(cls)
    return len(_memoized)


def _memoizing(original: Any, operators: set[Any]) -> Any:
    def get_call_type(self: Any, context: Any, args: Any, kws: Any) -> Any:
        try:
            plain = not kws and self.typing_key in operators
        except TypeError:  # (a typing key that cannot be hashed: not an operator)
            plain = False
        if not plain:
            return original(self, context, args, kws)
        key = (self, context, tuple(args))
        sig = _memo.get(key)
        if sig is None:
            sig = original(self, context, args, kws)
            if sig is not None:
                _memo[key] = sig
        return sig

    get_call_type.__wrapped__ = original  # type: ignore[attr-defined]
    return get_call_type


def arraymath_without_blas() -> bool:
    """Import ``numba.cuda.np.arraymath`` with its BLAS check answered "no" (the module's
    docstring); True if this call imported it so."""
    if "numba.cuda.np.arraymath" in sys.modules or "scipy.linalg.cython_blas" in sys.modules:
        return False
    from numba import config

    if config.ENABLE_CUDASIM:  # (the simulator compiles nothing: no target context to ask)
        return False
    try:
        from numba.cuda.np import linalg
    except ImportError:  # (the simulator's numba.cuda, or another layout)
        return False
    original = getattr(linalg, "ensure_blas", None)
    if original is None:
        return False

    def no_blas() -> None:
        raise ImportError("no BLAS for device code (gasync's runtime/numbafast.py)")

    linalg.ensure_blas = no_blas
    try:
        from numba.cuda.np import arraymath
    except ImportError:
        return False
    finally:
        linalg.ensure_blas = original
    return getattr(arraymath, "_HAVE_BLAS", True) is False
