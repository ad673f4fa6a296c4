"""What a run takes (RunOptions) and gives back (Result)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gasync.runtime.cache import DEFAULT_MAX_BYTES
from gasync.runtime.outputs import to_host

# a run without a timeout that cannot see every deadlock stops here (runtime/backends.py): the
# spin executor's (it keeps no wait states), and a program with groups' (decision 53)
SPIN_DEADLINE_S = 30.0
GROUPS_DEADLINE_S = 30.0


@dataclass(frozen=True)
class RunOptions:
    """How to run a compiled program.

    ``inputs`` maps buffer names to arrays (NumPy, or on the GPU anything with
    ``__cuda_array_interface__``). ``timeout_s`` bounds the whole run (0: none).
    ``executors`` is the number of warps that run tasks (0: the backend picks; a program
    with groups runs at least its largest group's warps, a block of them: decision 52).
    ``cache_dir`` is where generated modules (and Numba's cache beside them) go;
    ``cache_max_bytes`` bounds it (the oldest programs are evicted when a new one is written).
    """

    backend: str = "auto"  # auto | cuda | sim
    inputs: dict[str, Any] = field(default_factory=dict)
    timeout_s: float = 0.0
    executors: int = 0
    executor: str = "queue"  # queue | spin (the naive baseline)
    cache_dir: str | None = None
    signals: dict[str, float] = field(default_factory=dict)  # signal name -> seconds after launch
    trace_capacity: int = 1 << 18  # events the device buffer holds when the program is traced
    cache_max_bytes: int = DEFAULT_MAX_BYTES
    outputs: str = "auto"  # auto | host | device: which arrays Result.buffers holds (runtime/outputs.py)
    # warps per CUDA block on the GPU (0: 4). 1 spreads a few executors over as many SMs (the
    # block scheduler places blocks on SMs in turn): B2 measures its cross-SM hand-off so
    warps_per_block: int = 0


@dataclass
class Result:
    """Buffers as arrays (NumPy, or device arrays: see runtime/outputs.py), shared scalars and
    signals as Python values, and stats (runtime/launch.py ``_collect``; the times: ``kernel_ms``
    the launch call to the synchronize, ``launch_ms`` the call alone, ``span_ms`` the executors'
    first look to the last exit on the device's clock, ``device_ms`` the longest executor's own)."""

    buffers: dict[str, Any]
    shared: dict[str, Any]
    signals: dict[str, bool]
    stats: dict[str, Any]
    trace: Any = None  # a gasync.runtime.trace.RawTrace when the program was generated with trace=True

    def _repr_html_(self) -> str:
        """The result tables, for notebooks."""
        from gasync.notebook import result_html

        return result_html(self)

    @property
    def profile(self) -> dict[str, Any] | None:
        """Task name -> ``runtime.profile.TaskProfile`` of a traced run (None when untraced)."""
        if self.trace is None:
            return None
        from gasync.runtime.profile import profile

        return profile(self.trace)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data; a traced run's adds ``"profile"`` (task -> its ``TaskProfile.to_json``)
        and ``"counter_peaks"`` (counter name -> its largest value: ``runtime.profile.peaks``)."""
        out = {
            "buffers": {k: json_array(to_host(v)) for k, v in self.buffers.items()},
            "shared": {k: json_scalar(_py(v)) for k, v in self.shared.items()},
            "signals": dict(self.signals),
            "stats": dict(self.stats),
        }
        prof = self.profile  # computed from the trace on each access
        if prof is not None:
            from gasync.runtime.profile import peaks

            out["profile"] = {task: p.to_json() for task, p in prof.items()}
            out["counter_peaks"] = {name: peak for name, (peak, _) in peaks(self.trace).items()}
        return out


def _py(v: Any) -> Any:
    return v.item() if hasattr(v, "item") else v


# JSON has no NaN or infinities: they go as these strings (the choice of protobuf's JSON
# mapping), so that every parser reads the document (docs/language.md, decision 56)
NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def json_scalar(v: Any) -> Any:
    """``v``, or a non-finite float as its JSON string."""
    return NON_FINITE[repr(v)] if isinstance(v, float) and not math.isfinite(v) else v


def json_array(a: np.ndarray) -> list[Any]:
    """``a`` as nested lists of plain values, non-finite floats as their JSON strings."""
    if a.dtype.kind != "f" or bool(np.isfinite(a).all()):
        return a.tolist()  # type: ignore[no-any-return]
    out = np.asarray(a, np.float64).astype(object)
    for k in np.flatnonzero(~np.isfinite(a)):
        out.flat[k] = json_scalar(float(a.flat[k]))
    return out.tolist()  # type: ignore[no-any-return]
