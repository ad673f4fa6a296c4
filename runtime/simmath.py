"""The ``math`` of a kernel under the CUDA simulator: IEEE answers where Python's raises.

On the GPU, ``math.sqrt(-1.0)`` is NaN and ``math.exp(1000.0)`` is inf; under the
simulator the generated code calls Python's ``math``, which raises ``ValueError``
or ``OverflowError`` instead (the run then failed with "the simulated kernel
failed: math domain error"). runtime/launch.py gives a simulated module
:data:`MATH` in its place: each float builtin of the language tries Python's
function and, where it raises, gives NumPy's (IEEE) answer; every other name is
``math``'s. The reference interpreter (reference/values.py) uses the same table.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

LIBM: dict[str, tuple[Callable[..., float], Callable[..., Any]]] = {
    "sqrt": (math.sqrt, np.sqrt),
    "exp": (math.exp, np.exp),
    "log": (math.log, np.log),
    "sin": (math.sin, np.sin),
    "cos": (math.cos, np.cos),
    "floor": (lambda x: float(np.floor(x)), np.floor),  # math.floor gives an int: -0.0 and -0.5 became 0
    "ceil": (lambda x: float(np.ceil(x)), np.ceil),
    "pow": (math.pow, np.power),
    "fmod": (math.fmod, np.fmod),  # a float %: by 0, or of an infinity, NaN
}


def ieee(name: str, *args: float) -> Any:
    """Builtin ``name`` of ``args``: Python's answer, or NumPy's where Python's raises."""
    exact, fallback = LIBM[name]
    try:
        return exact(*args)
    except (ValueError, OverflowError):
        with np.errstate(all="ignore"):
            return fallback(*(np.float64(a) for a in args))


class _Math:
    """``math``, with the functions of :data:`LIBM` giving IEEE answers."""

    def __getattr__(self, name: str) -> Any:
        return getattr(math, name)


MATH = _Math()
for _name in LIBM:
    setattr(MATH, _name, lambda *args, _n=_name: ieee(_n, *args))
