"""Generated modules on disk: written once under a name made of their content hash.

Numba's ``cache=True`` needs the kernel's source in a real file, and any edit
of that file invalidates the cache; naming the file by the hash of its text
(which includes the gasync version) and the hash of every gasync module it runs means
an unchanged program finds its compiled kernel, and a changed one never finds
a stale one.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.machinery
import importlib.util
import os
import re
import sys
import threading
from pathlib import Path
from types import ModuleType

from gasync.codegen import Generated
from gasync.runtime import cache, externs, numbafast


def default_cache_dir() -> Path:
    return cache.default_dir()


# (a parenthesised list, `from gasync.x import (`, names things of module gasync.x)
_IMPORT = re.compile(r"^\s*(?:from\s+(gasync(?:\.\w+)*)\s+import\s+(\(|[\w, ]+)|import\s+(gasync(?:\.\w+)+))", re.M)


def imported_modules(source: str) -> list[str]:
    """The gasync modules a module's text imports (``from gasync.x import y`` may name a module y)."""
    names = []
    for m in _IMPORT.finditer(source):
        if m.group(3):
            names.append(m.group(3))
            continue
        names.append(m.group(1))
        if m.group(2) == "(":
            continue
        for item in m.group(2).split(","):
            name = item.split(" as ")[0].strip()
            if name:
                names.append(f"{m.group(1)}.{name}")
    return names


def device_layer(source: str) -> list[Path]:
    """Every gasync source file the generated module runs: what it imports, and what those import.

    Numba's cache key covers only the kernel's own bytecode, so an edit of a helper module
    must change the generated module's file name, or a stale compiled kernel is reused.
    """
    return list(_layer(tuple(imported_modules(source))))


@functools.lru_cache(maxsize=64)
def _layer(imports: tuple[str, ...]) -> tuple[Path, ...]:
    """(Per process: the modules it runs are imported once, so an edit after that would not run either.)"""
    seen: dict[str, Path] = {}
    looked: set[str] = set()
    todo = list(imports)
    while todo:
        name = todo.pop()
        if name in looked:
            continue
        looked.add(name)
        spec = _spec(name)
        if spec is None or spec.origin is None or spec.submodule_search_locations is not None:
            continue  # a name imported from a module, or a package (whose __init__ the kernel never runs)
        seen[name] = Path(spec.origin)
        todo.extend(imported_modules(seen[name].read_text()))
    return tuple(seen[k] for k in sorted(seen))


def _spec(name: str) -> importlib.machinery.ModuleSpec | None:
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None


def layer_digest(files: list[Path]) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:12]


def module_path(gen: Generated, cache_dir: str | None) -> Path:
    return cache.root_of(cache_dir) / f"gasync_{gen.digest}_{_digest_of(tuple(imported_modules(gen.source)))}.py"


@functools.lru_cache(maxsize=64)
def _digest_of(imports: tuple[str, ...]) -> str:
    return layer_digest(list(_layer(imports)))


def load(gen: Generated, cache_dir: str | None, max_bytes: int = cache.DEFAULT_MAX_BYTES) -> tuple[ModuleType, Path]:
    """Write (if new) and import the generated module; return it and its path.

    Writing a new module first evicts the oldest cached programs beyond ``max_bytes``.
    A folder that cannot be made or written is a ``cache.CacheError`` naming it.
    """
    numbafast.install()  # (the kernel compiles after this: runtime/numbafast.py)
    numbafast.memo_operator_calls()  # (each operator's typing kept for its argument types)
    numbafast.arraymath_without_blas()  # (before Numba-CUDA's first compile imports it, asking scipy)
    cache.guard_numba_cache()
    path = module_path(gen, cache_dir)
    for attempt in range(IMPORT_TRIES):
        if write(path, gen.source):
            cache.evict(path.parent, max_bytes, keep=path)
        name = path.stem
        if name in sys.modules:
            return sys.modules[name], path
        externs.resolve(gen.plan.externs, gen.plan.path)  # imported and checked before the module imports them
        try:
            module = _import(name, path)
        except (OSError, RuntimeError):
            # removed meanwhile (`gasync cache clear`, another process's eviction): Python finds no
            # file, or Numba's cache finds none for the kernel ("no locator available")
            if path.exists() or attempt == IMPORT_TRIES - 1:
                raise
            continue
        sys.modules[name] = module
        return module, path
    raise AssertionError("unreachable")


IMPORT_TRIES = 8  # (a test clears the cache every millisecond under four runs: 3 tries lost the race once)


def write(path: Path, source: str) -> bool:
    """Make ``path`` hold ``source``; True if it was written, False if it already held it.

    Processes (and threads) that run the same program at once write it at once: each writes
    a temporary file of its own and moves it into place, so nobody ever reads half a module.
    A module already in place is left as it is (its time stamp is Numba's cache key); one
    that holds anything else (a truncated or foreign file) is replaced.
    """
    data = source.encode()
    try:
        if path.read_bytes() == data:
            return False
    except OSError:
        pass  # absent, or unreadable: written below, or the error says why not
    tmp = path.with_name(f"{path.stem}.tmp{threading.get_native_id()}")  # (unique among live threads)
    for attempt in range(IMPORT_TRIES):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise cache.cache_error(path.parent, "create", exc) from None
        try:
            tmp.write_bytes(data)
            os.replace(tmp, path)
            return True
        except FileNotFoundError as exc:  # the temporary file or the folder removed meanwhile
            if attempt == IMPORT_TRIES - 1:
                raise cache.cache_error(path.parent, "write to", exc) from None
        except OSError as exc:  # a full disk, a read-only folder
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            raise cache.cache_error(path.parent, "write to", exc) from None
    raise AssertionError("unreachable")


def _import(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
