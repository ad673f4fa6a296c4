"""gasync's own device helpers compiled once a signature, their LLVM IR kept on disk (B6).

Why. A cold compile types and lowers every runtime helper a program calls (the run queue, the
channels, the memory-order helpers: 25 of stencil2d's 41 functions, ~0.5 s of its ~2.2 s of
typing and lowering on this project's CPU, bench/NOTES.md), though each is the same in every
program. Numba-CUDA keeps no device function from one process to the next; gasync keeps its own.

How. On the GPU backend ``device`` (and ``inline``, for the small helpers inlined at every call)
wraps a helper in a :class:`Linked` callee, which Numba types through a template of ours. At a
helper's first call with given argument types in a process, its entry for those types is read
from the store, or compiled by Numba-CUDA alone under a fixed symbol ``gx_<digest>`` (Numba's
own calling convention) and written to it. A call then lowers to a call of that symbol, and the
entry's LLVM IR modules (its own, and the entries it calls) join the kernel's NVVM compile, as
the library of one of Numba's device functions would: NVVM inlines across them as before, and
the PTX is the same whether the entries were read or compiled in the process (tests/unit/
test_linked.py; against Numba's own dispatchers, the same for programs without groups, a few
instructions scheduled otherwise with them: bench/NOTES.md, the thirty-second session).

What keys an entry: the helper's module and name, whether it is inlined, its argument types, the
compute capability, Numba's and numba-cuda's versions, a digest of gasync's runtime sources and
one of the runtime modules' constants now (a probe's ``--set`` makes entries of its own; as for
Numba's device functions, a constant changed later in the same process is not seen). Not kept,
compiled by Numba in the process as before: a helper whose IR defines shared memory (each module
would get its own copy), one that Numba cannot compile by itself. Keywords and defaults are
folded as Numba's dispatcher folds them.

The store: ``$GASYNC_LINKED_DIR``, else ``linked/`` in the default cache (runtime/cache.py); a
program's own ``--cache-dir`` does not move it, since an entry serves every program. Entries are
written to a temporary file and moved into place (several processes may compile at once); one
that does not read back counts as absent. ``ENABLED = False`` (or ``GASYNC_LINKED=0``) compiles
every helper in the process as before. Under the simulator a helper is Numba's device function.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from numba import config, cuda

from gasync.runtime.cache import HELPER_SUFFIX, helper_dir, helper_entries

SIM = bool(config.ENABLE_CUDASIM)
ENABLED = os.environ.get("GASYNC_LINKED", "1") != "0"
FORMAT = 1  # an entry's own layout
KEEP_AT_MOST = 4000  # entries in the store; past it the oldest half goes (other versions' mostly)
_DEFINED = re.compile(r'^(?:define [^@\n]*@"([^"]+)"\(|@"([^"]+)" = )', re.M)
# Numba's environment pointer of a function (unused on the GPU): dropped where nothing reads it
_ENV = re.compile(r'^@"([^"]+)" = common global i8\* null\n', re.M)
# any other variable a helper defines (shared memory, a device global): each module would get a
# copy of its own, so such a helper is not kept (constants are: a copy of one is the same)
_VARIABLE = re.compile(r'^@"[^"]+" = (?!common global i8\* null$)(?![^\n]*\bconstant\b)[^\n]*\bglobal\b', re.M)


# this process's helper signatures: read from the store, compiled and written, or compiled by
# Numba alone (not kept, or linking off)
STATS = {"read": 0, "compiled": 0, "numba": 0}
HOW: dict[str, str] = {}  # each helper's last signature, by its module and name: which of STATS's ways


@dataclass(frozen=True)
class Entry:
    """One helper compiled for one signature, as the store keeps it."""

    name: str  # the symbol it is defined under: gx_<digest>
    restype: Any  # Numba's type of its result
    modules: tuple[str, ...]  # its LLVM IR modules, the entries it calls left out
    deps: tuple[str, ...]  # the digests of the entries it calls
    kept: bool  # False: it defines a variable of its own (shared memory...): Numba compiles it in each process


if SIM:
    device = cuda.jit(device=True)
    inline = cuda.jit(device=True)
    program_inline = cuda.jit(device=True)
else:
    import numba
    import numba_cuda
    from numba.core import types
    from numba.core.typing import signature
    from numba.cuda import dispatcher as numba_dispatcher  # (its get_current_device, read at each call)
    from numba.cuda.codegen import CUDACodeLibrary, ExternalCodeLibrary
    from numba.cuda.compiler import compile_cuda
    from numba.cuda.core import funcdesc
    from numba.cuda.core.callconv import CUDACallConv
    from numba.cuda.descriptor import cuda_target
    from numba.cuda.typing.templates import AbstractTemplate

    class _TextModule:
        """An LLVM IR module kept as text: what Numba's library needs of one (``str`` and no
        functions whose linkage it would set: ours are linkonce_odr already)."""

        functions = ()

        def __init__(self, text: str) -> None:
            self.text = text

        def __str__(self) -> str:
            return self.text

    class IRLibrary(ExternalCodeLibrary):  # type: ignore[misc]
        """An entry's modules, linked into the library of each function that calls it."""

        def __init__(self, digest: str, entry: Entry) -> None:
            super().__init__(cuda_target.target_context.codegen(), f"gx_{digest[:16]}")
            self.digest, self.deps = digest, entry.deps
            self._mods = [_TextModule(t) for t in entry.modules]
            self._all: list[_TextModule] | None = None
            self.finalize()

        @property
        def modules(self) -> list[_TextModule]:
            """Its own modules, then those of the entries it calls, each after one that calls it:
            NVVM links a linkonce_odr function only where a module linked before calls it."""
            if self._all is None:
                out: list[_TextModule] = []
                seen: set[str] = set()

                def visit(lib: IRLibrary) -> None:
                    if lib.digest not in seen:
                        seen.add(lib.digest)
                        out.extend(lib._mods)
                        for d in lib.deps:
                            visit(_LIBS[d])

                visit(self)
                self._all = out
            return self._all

        @property
        def linking_libraries(self) -> list[Any]:
            return []

    _LIBS: dict[str, IRLibrary] = {}  # digest -> its library, once a process
    _VERSIONS = (numba.__version__, numba_cuda.__version__)
    _SOURCES: list[str] = []  # the runtime sources' digest, once a process

    def _sources_digest() -> str:
        if not _SOURCES:
            h = hashlib.sha256()
            for f in sorted(Path(__file__).resolve().parent.glob("*.py")):
                h.update(f.name.encode() + b"\0" + f.read_bytes())
            _SOURCES.append(h.hexdigest())
        return _SOURCES[0]

    _CONSTANTS: list[Any] = [0, []]  # (len(sys.modules) when listed, [(module, its constants' names)])

    def _constants_digest() -> str:
        """The runtime modules' constants as they are now (a probe may have set one); their names
        listed again only when a module was imported since (~0.05 ms a call, not ~2)."""
        if _CONSTANTS[0] != len(sys.modules):
            listed = []
            for name, mod in sorted(sys.modules.items()):
                if name.startswith("gasync.runtime.") and mod is not None:
                    plain = (bool, int, float, str)
                    listed.append((mod, [k for k, v in sorted(vars(mod).items()) if k.isupper() and type(v) in plain]))
            _CONSTANTS[:] = [len(sys.modules), listed]
        items = [f"{mod.__name__}.{k}={getattr(mod, k)!r}" for mod, keys in _CONSTANTS[1] for k in keys]
        return hashlib.sha256("\n".join(items).encode()).hexdigest()

    def _type_key(t: Any) -> str:
        cls = getattr(t, "instance_class", None)  # a named tuple: its class and fields as well
        where = f"|{cls.__module__}.{cls.__qualname__}{getattr(t, 'fields', '')}" if cls is not None else ""
        return f"{t}{where}"

    def _read(digest: str) -> Entry | None:
        try:
            with open(helper_dir() / f"{digest}{HELPER_SUFFIX}", "rb") as f:
                fmt, entry = pickle.load(f)
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, ValueError, TypeError):
            return None  # absent, damaged, or of a type no longer there: compiled again
        return entry if fmt == FORMAT and isinstance(entry, Entry) else None

    def _write(digest: str, entry: Entry) -> None:
        root = helper_dir()
        try:
            root.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=root, prefix=f".{digest}.", suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                pickle.dump((FORMAT, entry), f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, root / f"{digest}{HELPER_SUFFIX}")
        except (OSError, pickle.PicklingError, AttributeError, TypeError):
            return  # a store that cannot be written: this process compiled it, the next one will too
        _bound(root)

    def _bound(root: Path) -> None:
        files = helper_entries(root)
        if len(files) > KEEP_AT_MOST:
            dated = []
            for f in files:
                try:
                    dated.append((f.stat().st_mtime, f))
                except FileNotFoundError:
                    continue
            for _, f in sorted(dated)[: len(dated) // 2]:
                f.unlink(missing_ok=True)

    def _library(digest: str, entry: Entry) -> IRLibrary:
        """An entry's library, with those of the entries it calls read (each once a process);
        raises LookupError where one of those is not in the store."""
        todo = [(digest, entry)]
        while todo:
            d, e = todo.pop()
            if d not in _LIBS:
                if e is None:
                    e = _read(d)
                    if e is None or not e.kept:
                        raise LookupError(f"entry {d} is not in the store")
                _LIBS[d] = IRLibrary(d, e)
                todo.extend((dep, None) for dep in e.deps)
        return _LIBS[digest]

    def _texts(cres: Any, name: str, digest: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(modules, deps) of a helper just compiled: its own module and those of Numba's
        libraries it links, every function linkonce_odr and every name it defines but its entry
        made this entry's own; the entries it calls by digest."""
        parent = CUDACodeLibrary(cuda_target.target_context.codegen(), "gasync_linked")
        parent.add_linking_library(cres.library)
        parent.finalize()  # linkonce_odr: NVVM keeps no copy it inlined everywhere
        libs = cres.library.linking_libraries
        deps = tuple(lib.digest for lib in libs if isinstance(lib, IRLibrary))
        texts = [str(cres.library._module)]
        texts += [str(m) for lib in libs if not isinstance(lib, IRLibrary) for m in [lib._module]]
        names = {a or b for t in texts for a, b in _DEFINED.findall(t)} - {name}
        whole = "\n".join(texts)
        unread = {n for t in texts for n in _ENV.findall(t) if whole.count(f'@"{n}"') == 1}
        renamed = []
        for t in texts:
            t = _ENV.sub(lambda m: "" if m.group(1) in unread else m.group(0), t)
            for i, n in enumerate(sorted(names - unread)):
                t = t.replace(f'@"{n}"', f'@"gxp_{digest[:16]}_{i}"')
            renamed.append(t)
        return tuple(renamed), deps

    class Linked:
        """A runtime helper whose entries are kept (the module's docstring)."""

        def __init__(self, py_func: Any, forceinline: bool) -> None:
            self.py_func = py_func
            self.forceinline = forceinline
            self.__name__ = py_func.__name__
            self.__doc__ = py_func.__doc__
            self.__wrapped__ = py_func
            self._where = f"{py_func.__module__}.{py_func.__qualname__}"
            self._sigs: dict[tuple[Any, ...], Any] = {}
            self._dispatcher: Any = None
            linked = self

            class Template(AbstractTemplate):  # type: ignore[misc]
                key = linked

                def generic(self, args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
                    return linked.resolve(args, kws)

            cuda_target.typing_context.insert_user_function(self, Template)

        def __repr__(self) -> str:
            return f"<gasync linked helper {self._where}>"

        def resolve(self, args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
            """The signature of a call with ``args`` and ``kws``, its lowering registered with
            Numba: keywords and defaults folded as Numba's dispatcher folds them (a default's
            type is ``Omitted``), the signature carrying the Python one for the call's lowering."""
            pysig, folded = self._numba_dispatcher().fold_argument_types(args, kws)
            args = tuple(types.unliteral(a) for a in folded)
            got = self._sigs.get(args)
            if got is None:
                got = self._sigs[args] = self._entry(args) if ENABLED else self._numba(args)
            return got.replace(pysig=pysig)

        def _numba_dispatcher(self) -> Any:
            if self._dispatcher is None:
                self._dispatcher = cuda.jit(device=True, forceinline=self.forceinline)(self.py_func)
            return self._dispatcher

        def _numba(self, args: tuple[Any, ...]) -> Any:
            """Compiled by Numba in this process, as a device function of its own."""
            STATS["numba"] += 1
            HOW[self._where] = "numba"
            cres = self._numba_dispatcher().compile_device(args)
            cuda_target.target_context.insert_user_function(self, cres.fndesc, [cres.library])
            return cres.signature

        def digest(self, args: tuple[Any, ...]) -> str:
            cc = tuple(numba_dispatcher.get_current_device().compute_capability)
            parts = (FORMAT, self._where, self.forceinline, cc, [_type_key(a) for a in args], *_VERSIONS,
                     _sources_digest(), _constants_digest())  # fmt: skip
            return hashlib.sha256(repr(parts).encode()).hexdigest()[:40]

        def _entry(self, args: tuple[Any, ...]) -> Any:
            digest = self.digest(args)
            entry = _read(digest)
            if entry is None:
                entry = self._compile(args, digest)
                if entry is None:
                    return self._numba(args)
                _write(digest, entry)
                STATS["compiled"] += 1
                HOW[self._where] = "compiled"
            else:
                STATS["read"] += 1
                HOW[self._where] = "read"
            if not entry.kept:
                return self._numba(args)
            try:
                libs = [_library(digest, entry)]
            except LookupError:  # an entry it calls went missing: Numba compiles this one here
                return self._numba(args)
            call = funcdesc.ExternalFunctionDescriptor(
                entry.name, entry.restype, args, CUDACallConv(cuda_target.target_context)
            )
            cuda_target.target_context.insert_user_function(self, call, libs)
            return signature(entry.restype, *args)

        def _compile(self, args: tuple[Any, ...], digest: str) -> Entry | None:
            name = f"gx_{digest}"
            try:
                cres = compile_cuda(
                    self.py_func,
                    None,
                    args,
                    forceinline=self.forceinline,
                    abi="numba",
                    abi_info={"abi_name": name},
                    nvvm_options={"opt": 3, "fastmath": False},
                    cc=numba_dispatcher.get_current_device().compute_capability,
                )
                texts, deps = _texts(cres, name, digest)
            except Exception:  # noqa: BLE001  (Numba raises many kinds: its own path reports them)
                return None
            kept = not any(_VARIABLE.search(t) for t in texts)
            return Entry(name, cres.signature.return_type, texts if kept else (), deps, kept)

    def device(py_func: Any) -> Any:
        """A runtime helper (``@cuda.jit(device=True)`` in the process, before this module)."""
        return Linked(py_func, False)

    def inline(py_func: Any) -> Any:
        """A small runtime helper that NVVM inlines at every call (``forceinline``)."""
        return Linked(py_func, True)

    def program_inline(py_func: Any) -> Any:
        """A small function of one program's generated code (a map loop's iteration) that NVVM
        inlines at every call: Numba's own device function, typed once a process, never kept in
        the store. Kept, an edited program (a new module) would never read its entries again,
        and a program compiled again in a fresh cache would find its own functions compiled (B6
        counted them out until the thirty-fifth session)."""
        return cuda.jit(device=True, forceinline=True)(py_func)
