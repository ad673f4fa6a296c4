"""Where a prepared launch keeps the executor's state: one device allocation, each array a view in it.

No Numba here: this module decides, from the host arrays ``launch.host_arrays`` gives,
how each array gets its value on each run (:class:`Role`) and where the kept ones live
(:class:`Layout`); runtime/prepared.py allocates and resets what it describes.

The slab has three regions, in this order, each array at an ``ALIGN``-byte offset:

- ``IMAGE``: arrays whose first value is not all zero bytes (the rings' sequence
  numbers, CTL, EXS, CMD, PRED, JOBSLOTS, non-zero initial buffers and shared
  scalars). Reset by one device-to-device copy from their pristine bytes
  (:meth:`Layout.image`, uploaded once).
- ``ZERO``: arrays whose first value is all zero bytes (frames, states, wait lists,
  most of the bytes). Reset by one memset.
- ``HOST_INPUT``: the caller's NumPy ``input`` buffers, copied in on each run.

Outside it: the caller's device arrays (used in place), buffers the Result gives back as
device arrays (new each run, so a result outlives the next run), and HOSTSIG
(host-mapped memory).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np

from gasync.runtime.outputs import is_device_array

ALIGN = 256  # bytes between arrays' starts: cudaMalloc's own guarantee, so no two arrays share a 128-byte line


class Role(Enum):
    """How a run gets one array of the state."""

    IMAGE = "image"  # in the slab; reset by the copy from the pristine bytes
    ZERO = "zero"  # in the slab; reset by the memset
    HOST_INPUT = "host input"  # in the slab; the caller's NumPy array copied in
    DEVICE_INPUT = "device input"  # the caller's device array, used in place
    FRESH = "fresh"  # a new device array of the program's initial value (the Result gives it back)
    FRESH_INPUT = "fresh input"  # a new device copy of the caller's NumPy array (likewise)
    MAPPED = "mapped"  # HOSTSIG: host-mapped memory, zeroed by the host


SLAB = (Role.IMAGE, Role.ZERO, Role.HOST_INPUT)  # the slab's regions, in order
PER_RUN = (Role.DEVICE_INPUT, Role.FRESH, Role.FRESH_INPUT)  # a new array each run


def roles_of(
    host: Mapping[str, Any], inputs: Mapping[str, Any], buffers: set[str], host_outputs: bool
) -> dict[str, Role]:
    """The role of each array of ``host`` (``launch.host_arrays``' result); ``buffers``: the
    program's buffer names; ``host_outputs``: the Result copies every buffer to the host."""
    roles = {}
    for name, arr in host.items():
        buf = name[2:] if name.startswith("B_") and name[2:] in buffers else None
        if name == "HOSTSIG":
            roles[name] = Role.MAPPED
        elif buf is not None and buf in inputs:
            on_device = is_device_array(inputs[buf])
            roles[name] = Role.DEVICE_INPUT if on_device else Role.HOST_INPUT if host_outputs else Role.FRESH_INPUT
        elif buf is not None and not host_outputs:
            roles[name] = Role.FRESH
        else:
            roles[name] = Role.IMAGE if np.ascontiguousarray(arr).view(np.uint8).any() else Role.ZERO
    return roles


@dataclass(frozen=True)
class Slot:
    """One array: its role, shape, dtype (``np.dtype.str``), strides (the host array's, as
    ``cuda.to_device`` keeps them), and its bytes at ``offset`` in the slab (-1: not in it)."""

    name: str
    role: Role
    shape: tuple[int, ...]
    dtype: str
    strides: tuple[int, ...]
    offset: int
    nbytes: int


@dataclass(frozen=True)
class Layout:
    """Every array's slot; the slab's regions as (role, start, end) in bytes, in SLAB's order."""

    slots: tuple[Slot, ...]
    regions: tuple[tuple[Role, int, int], ...]
    total_bytes: int  # the slab's size

    def region(self, role: Role) -> tuple[int, int]:
        return next((start, end) for r, start, end in self.regions if r is role)

    def of(self, *roles: Role) -> list[Slot]:
        return [s for s in self.slots if s.role in roles]

    def region_slots(self) -> list[Slot]:
        """Each non-empty region as one slot of bytes (what the copy and the memset write)."""
        spans = [(r, start, end - start) for r, start, end in self.regions if end > start]
        return [Slot(r.value, r, (n,), "|u1", (1,), start, n) for r, start, n in spans]

    @property
    def held_bytes(self) -> int:
        """What a prepared launch of this layout holds: the slab, the pristine bytes, FRESH's host copies."""
        start, end = self.region(Role.IMAGE)
        return self.total_bytes + (end - start) + sum(s.nbytes for s in self.of(Role.FRESH))

    def image(self, host: Mapping[str, Any]) -> np.ndarray[Any, Any]:
        """The IMAGE region's pristine bytes (padding zero), from ``host``'s arrays."""
        start, end = self.region(Role.IMAGE)
        out = np.zeros(end - start, np.uint8)
        for s in self.of(Role.IMAGE):
            at = s.offset - start
            out[at : at + s.nbytes] = np.ascontiguousarray(host[s.name]).reshape(-1).view(np.uint8)
        return out


def plan_layout(host: Mapping[str, Any], roles: Mapping[str, Role]) -> Layout:
    """The slab's regions in SLAB's order, each region's arrays in ``host``'s order."""
    slots: list[Slot] = []
    regions = []
    offset = 0
    for role in SLAB:
        start = offset
        for name, arr in host.items():
            if roles[name] is role:
                slots.append(_slot(name, role, arr, offset))
                offset = _aligned(offset + int(arr.nbytes))
        regions.append((role, start, offset))
    for name, arr in host.items():
        if roles[name] not in SLAB:
            slots.append(_slot(name, roles[name], arr, -1))
    return Layout(tuple(slots), tuple(regions), offset)


def _slot(name: str, role: Role, arr: Any, offset: int) -> Slot:
    if role is Role.DEVICE_INPUT:  # the caller's array (of any library): nothing of it is kept
        return Slot(name, role, (), "", (), -1, 0)
    return Slot(name, role, tuple(arr.shape), np.dtype(arr.dtype).str, tuple(arr.strides), offset, int(arr.nbytes))


def _aligned(n: int) -> int:
    return -(-n // ALIGN) * ALIGN
