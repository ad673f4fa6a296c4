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
"""

from __future__ import annotations

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
