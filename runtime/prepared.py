"""Prepared launches: a program's device state kept between GPU runs, its kernel parameters marshalled once.

Why. A GPU run of a short program is mostly host time (bench/NOTES.md, "S0's question
answered"): the compiled kernel's ``launch`` marshals G, a namedtuple of ~45 device
arrays, into ~310 kernel parameters on every call (0.28-0.30 ms of B5's 0.39-0.46 ms
launch call), and every run allocates and fills those arrays anew. A prepared launch
does both once per layout of the state; each run then resets the state and launches.

What one keeps (:class:`Prepared`), per :class:`Key` (the generated module, the CUDA
context, the executors asked for, the trace's capacity, each input's kind, shape, dtype
and strides, whether results go back to the host, which signals the host will set):
the slab (runtime/slab.py: one device allocation, each kept array a view in it), the
pristine bytes of its IMAGE region (a second device allocation), HOSTSIG in
host-mapped memory, and the kernel's parameters (runtime/kernelargs.py), one segment
per array. A segment is rebuilt only for an array that is new each run (the caller's
device arrays, used in place; buffers the Result gives back as device arrays, which
must outlive the next run), and only when its pointer, shape or strides moved.

A reset, before each launch (:meth:`Prepared.reset`): one device-to-device copy of the
IMAGE region from its pristine bytes, one memset of the ZERO region, one
host-to-device copy per host input, a new device array per buffer given back on the
device, a synchronize (so that ``kernel_ms`` stays the launch call to synchronize, as
before), then the host zeroes HOSTSIG. Every run so starts from exactly what
``launch.host_arrays`` gives, also after a run that deadlocked, timed out or raised.

Policy. :data:`CACHE` keeps the ``max_entries`` launches used last and at most
``max_bytes`` (device bytes, and host copies of buffers given back on the device)
between them; an evicted launch drops its arrays and flushes Numba's deferred frees
(one that another thread's run is using goes when that run ends). A launch serves one
run at a time. The CUDA context is part of the key: call :meth:`Cache.clear` before
``cuda.close()``.

The compiled kernel's own launch (runtime/launch.py) runs instead, and
``stats["launch_path"]`` says why, where: ``CACHE.max_entries`` is 0; a host input is
not C-contiguous; the state is over ``CACHE.max_bytes``; this key's launch is in use by
another thread's run; or, with a warning once per process, runtime/kernelargs.py finds
numba-cuda's internals not as it was written for them (``kernelargs.Unsupported``).
"""

from __future__ import annotations

import ctypes
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from gasync.runtime.kernelargs import KernelArgs, Unsupported, fingerprint
from gasync.runtime.outputs import is_device_array
from gasync.runtime.slab import ALIGN, PER_RUN, SLAB, Layout, Role

MAX_ENTRIES = 4
MAX_BYTES = 4 << 30


@dataclass(frozen=True)
class Key:
    """What a prepared launch's layout and pristine bytes depend on (the module's path covers the program)."""

    module: str
    context: int
    executors: int  # as asked for (0: the grid's choice, which depends on the module and the context)
    warps_per_block: int  # as asked for (0: the default): the grid's shape
    trace_capacity: int  # 0 when untraced
    inputs: tuple[tuple[str, str, tuple[int, ...], str, tuple[int, ...] | None], ...]
    host_outputs: bool
    signals: tuple[str, ...]  # those the host will set (HOSTPEND)
    executor: str = "queue"  # which of the module's kernels (runtime/launch.py: kernel_of)
    # the buffers' and shared scalars' initialisers (``initial_values``): the host builds them, so
    # two programs that differ only there (`= iota` against `= zeros`, a `fill`'s value, a
    # shared scalar's start) have one module, and their pristine bytes differ
    initial: tuple[tuple[str, str, str], ...] = ()


def initial_values(plan: Any) -> tuple[tuple[str, str, str], ...]:
    """What the host fills the state with from ``plan`` beyond the module: each buffer's
    initialiser and its value, each shared scalar's initial value (runtime/hoststate.py)."""
    out = [(f"B_{b.name}", b.init, repr(b.init_value)) for b in plan.buffers if b.init != "input"]
    out += [(f"S_{sh.name}", sh.ty, repr(sh.init)) for sh in plan.shared]
    return tuple(out)


def key_of(
    module: str,
    context: int,
    options: Any,
    traced: bool,
    host_outputs: bool,
    initial: tuple[tuple[str, str, str], ...] = (),
) -> Key | None:
    """``options``: the run's RunOptions; ``initial``: the plan's ``initial_values``. None: an
    input cannot be kept (a host array not C-contiguous)."""
    inputs = []
    for name in sorted(options.inputs):
        desc = describe(options.inputs[name])
        if desc is None:
            return None
        inputs.append((name, *desc))
    capacity = options.trace_capacity if traced else 0
    signals = tuple(sorted(options.signals))
    return Key(
        module,
        context,
        options.executors,
        options.warps_per_block,
        capacity,
        tuple(inputs),
        host_outputs,
        signals,
        options.executor,
        initial,
    )


def describe(x: Any) -> tuple[str, tuple[int, ...], str, tuple[int, ...] | None] | None:
    """(``host`` or ``device``, shape, dtype, strides) of an input; None for a host array not C-contiguous."""
    if is_device_array(x):
        cai = getattr(x, "__cuda_array_interface__", None)
        if cai is None:  # a Numba array without the interface (the simulator's): its own attributes
            return "device", tuple(x.shape), np.dtype(x.dtype).str, tuple(x.strides)
        strides = cai.get("strides")
        shape = tuple(int(d) for d in cai["shape"])
        return "device", shape, np.dtype(cai["typestr"]).str, tuple(strides) if strides else None
    if not isinstance(x, np.ndarray) or not x.flags.c_contiguous:
        return None
    return "host", tuple(x.shape), x.dtype.str, None


class Entry(Protocol):
    """What the cache needs of a prepared launch."""

    lock: threading.Lock
    nbytes: int

    def free(self) -> None: ...


class Cache:
    """The last ``max_entries`` prepared launches, at most ``max_bytes`` in all (least recently used goes first)."""

    def __init__(self, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[Key, Entry] = OrderedDict()
        self._lock = threading.Lock()

    def checkout(self, key: Key) -> tuple[Any, str]:
        """(the launch for ``key``, locked for the caller, ""); (None, "") when it is to be
        built; (None, why) when this run takes the compiled kernel's launch."""
        if self.max_entries <= 0:
            return None, "prepared launches are off (prepared.CACHE.max_entries is 0)"
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                self.misses += 1
                return None, ""
            if not entry.lock.acquire(blocking=False):
                return None, "this program's prepared launch is in use by another run"
            self._entries.move_to_end(key)
            self.hits += 1
            return entry, ""

    def refuses(self, nbytes: int) -> str:
        """Why a launch holding ``nbytes`` is not kept ("" if it is)."""
        if nbytes > self.max_bytes:
            mib, bound = nbytes / 2**20, self.max_bytes / 2**20
            return f"its state ({mib:.1f} MiB) is over prepared.CACHE.max_bytes ({bound:.1f} MiB)"
        return ""

    def insert(self, key: Key, entry: Entry) -> None:
        """Keep ``entry`` (checked out to the caller), evicting the least recently used beyond the bounds."""
        evicted = []
        with self._lock:
            old = self._entries.pop(key, None)  # two threads built the same key at once: keep the newer
            if old is not None:
                evicted.append(old)
            self._entries[key] = entry
            while len(self._entries) > max(self.max_entries, 1) or self.nbytes > self.max_bytes:
                first = next(iter(self._entries))
                if self._entries[first] is entry:
                    break
                evicted.append(self._entries.pop(first))
        for e in evicted:
            _free_when_idle(e)

    def release(self, entry: Entry) -> None:
        """Hand a checked-out launch back."""
        entry.lock.release()

    def clear(self) -> None:
        """Drop every prepared launch (those in use go when their runs end)."""
        with self._lock:
            evicted = list(self._entries.values())
            self._entries.clear()
        for e in evicted:
            _free_when_idle(e)

    @property
    def nbytes(self) -> int:
        return sum(e.nbytes for e in self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)


def _free_when_idle(entry: Entry) -> None:
    if entry.lock.acquire(blocking=False):  # else a run holds it, and its references go when that run ends
        try:
            entry.free()
        finally:
            entry.lock.release()


CACHE = Cache()


@dataclass(frozen=True)
class Target:
    """What a prepared launch is built for."""

    kernel: Any  # the dispatcher, compiled for sig
    sig: tuple[Any, ...]
    grid: tuple[int, int, int]  # executors, blocks, threads per block
    to_device: Callable[[Any], Any]  # launch's conversion of an input to a Numba device array
    state_of: Callable[[dict[str, Any]], Any]  # G, from the arrays by name
    sharedmem: int = 0  # bytes of dynamic shared memory a block takes (codegen/groups.py, dynamic_shared)
    compiled: Any = None  # the compiled kernel (``kernel.overloads[sig]``), or a kept one (runtime/cubins.py)


class Prepared:
    """One prepared launch (the module's docstring); built checked out to the run that builds it."""

    def __init__(self, cuda: Any, target: Target, layout: Layout, host: Mapping[str, Any]) -> None:
        self.lock = threading.Lock()
        self.lock.acquire()
        self.cuda, self.sig, self.layout = cuda, target.sig, layout
        self.to_device, self.state_of, self.typeof = target.to_device, target.state_of, target.kernel.typeof_pyval
        self.executors, self.blocks, self.threads = target.grid
        # grid, block, stream and dynamic shared memory as the kernel's own launch takes them
        cfg = target.kernel[self.blocks, self.threads, 0, target.sharedmem]
        self.stream = cfg.stream  # the default stream, as cuda.core takes it
        compiled = target.compiled if target.compiled is not None else target.kernel.overloads[self.sig]
        self.args = KernelArgs(compiled, cfg.griddim, cfg.blockdim, cfg.sharedmem)
        self.context = cuda.current_context()  # its id is in the key: held, so that the id stays its own
        self.nbytes = layout.held_bytes
        self.slab = cuda.device_array(max(layout.total_bytes, ALIGN), np.uint8)
        base = self.slab.gpu_data
        self.views = {s.name: self.args.view(base, s) for s in layout.of(*SLAB)}
        self.regions = {s.role: self.args.view(base, s) for s in layout.region_slots()}  # each region's bytes
        image = layout.image(host)
        self.pristine = cuda.to_device(image) if image.size else None
        self.hostsig = cuda.mapped_array(host["HOSTSIG"].shape, np.int32)  # the host writes, the kernel reads
        self.views["HOSTSIG"] = cuda.as_cuda_array(self.hostsig)
        self.fresh = {s.name: host[s.name] for s in layout.of(Role.FRESH)}  # the program's initial values
        self.per_run = [s.name for s in layout.of(*PER_RUN)]
        self.params: list[Any] = []  # the kernel's parameters: G's, then this run's timeout and mode
        self.spans: dict[str, tuple[int, int]] = {}  # an array's parameters: params[start:end]
        self.types: dict[str, Any] = {}  # an array's Numba type
        self.prints: dict[str, tuple[Any, ...]] = {}  # the pointer, shape, strides a segment was marshalled from
        self.scalars: tuple[Any, ...] = ()  # the kept timeout and mode parameters (``launch``)

    def reset(self, inputs: Mapping[str, Any]) -> dict[str, Any]:
        """Make the state what ``launch.host_arrays`` gives with ``inputs``; every array by name.
        The first reset marshals every segment (``Unsupported`` if that differs from Numba's)."""
        if Role.IMAGE in self.regions and self.pristine is not None:
            self.regions[Role.IMAGE].copy_to_device(self.pristine)  # device to device, on the default stream
        if Role.ZERO in self.regions:
            self.args.memset(self.regions[Role.ZERO])
        for s in self.layout.of(Role.HOST_INPUT):
            self.views[s.name].copy_to_device(inputs[s.name[2:]])
        device = dict(self.views)
        for name in self.per_run:
            device[name] = self.to_device(self.fresh[name] if name in self.fresh else inputs[name[2:]])
        if not self.params:
            self._marshal_all(device)
        for name in self.per_run:
            self._remarshal(name, device[name])
        self.cuda.synchronize()  # the reset is done before the launch call is timed
        self.hostsig[:] = 0  # no kernel runs now: the last one ended before the synchronize above returned
        return device

    def launch(self, timeout_ns: Any, mode: Any) -> None:
        """Launch on the default stream, asynchronously, with G's parameters as they stand.
        The run's two scalars (timeout, mode) are marshalled by Numba at the first launch; where
        each became one ``ctypes.c_int64``, later launches set those values in place (the
        direct launch's pointers stay right; ~15-25 us of the call, bench/NOTES.md run 38)."""
        if self.scalars:
            self.scalars[0].value, self.scalars[1].value = int(timeout_ns), int(mode)
            self.args.set_scalars(len(self.params) - 2, self.scalars)
        else:
            timeout = self.args.marshal(self.sig[1], timeout_ns, self.stream)
            self.params[-2:] = [*timeout, *self.args.marshal(self.sig[2], mode, self.stream)]
            self.args.update(len(self.params) - 2, self.params[-2:])
            plain = len(self.params) >= 2 and all(type(p) is ctypes.c_int64 for p in self.params[-2:])
            self.scalars = (self.params[-2], self.params[-1]) if plain else ()
        self.args.launch(self.stream, self.params)

    def free(self) -> None:
        """Drop every array this launch holds, and let Numba free them now."""
        self.views, self.regions, self.fresh, self.params = {}, {}, {}, []
        self.slab = self.pristine = self.hostsig = self.context = None
        self.args.flush_frees(self.cuda)

    def _marshal_all(self, device: dict[str, Any]) -> None:
        g = self.state_of(device)
        if self.typeof(g) != self.sig[0]:
            raise Unsupported("the kept arrays type differently from those the kernel was compiled for")
        params, self.spans, self.types = self.args.segments(self.sig[0], g, self.stream)
        self.params = [*params, None, None]
        self.scalars = ()  # (set again by the next launch)
        self.args.bind(self.params)
        self.prints = {name: fingerprint(device[name]) for name in self.per_run}

    def _remarshal(self, name: str, arr: Any) -> None:
        mark = fingerprint(arr)
        if self.prints.get(name) == mark:
            return  # the same pointer, shape and strides: the same parameters
        start, end = self.spans[name]
        seg = self.args.marshal(self.types[name], arr, self.stream)
        if len(seg) != end - start:
            raise Unsupported(f"{name}'s parameters changed in number ({end - start} -> {len(seg)})")
        self.params[start:end] = seg
        self.args.update(start, seg)
        self.prints[name] = mark


def build(
    cuda: Any, target: Target, layout: Layout, host: Mapping[str, Any], inputs: Mapping[str, Any]
) -> tuple[Prepared | None, dict[str, Any] | None, str]:
    """A new prepared launch, checked out to this run and reset for it, with its arrays by name;
    or (None, None, why not)."""
    why = CACHE.refuses(layout.held_bytes)
    if why:
        return None, None, why
    entry = None
    try:
        entry = Prepared(cuda, target, layout, host)
        return entry, entry.reset(inputs), ""  # the first reset checks the marshalling
    except Unsupported as exc:
        if entry is not None:
            entry.free()
        warn_once(str(exc))
        return None, None, str(exc)


_warned: set[str] = set()


def warn_once(reason: str) -> None:
    """Say, once per process per reason, that GPU runs take the compiled kernel's launch."""
    if reason not in _warned:
        _warned.add(reason)
        text = f"gasync: no prepared launch ({reason}); GPU runs take the compiled kernel's launch, "
        warnings.warn(text + "which marshals every array of the state on every run", RuntimeWarning, stacklevel=4)
