"""Generated modules on disk: written once under a name made of their content hash.

Numba's ``cache=True`` needs the kernel's source in a real file, and any edit
of that file invalidates the cache; naming the file by the hash of its text
(which includes the gasync version) and the hash of every gasync module it runs means
an unchanged program finds its compiled kernel, and a changed one never finds
a stale one.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
from pathlib import Path
from types import ModuleType

from gasync.codegen import Generated
from gasync.runtime import cache, externs


def default_cache_dir() -> Path:
    return cache.default_dir()


_IMPORT = re.compile(r"^\s*(?:from\s+(gasync(?:\.\w+)*)\s+import\s+([\w, ]+)|import\s+(gasync(?:\.\w+)+))", re.M)


def imported_modules(source: str) -> list[str]:
    """The gasync modules a module's text imports (``from gasync.x import y`` may name a module y)."""
    names = []
    for m in _IMPORT.finditer(source):
        if m.group(3):
            names.append(m.group(3))
            continue
        names.append(m.group(1))
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
    seen: dict[str, Path] = {}
    todo = imported_modules(source)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        spec = importlib.util.find_spec(name) if _is_module(name) else None
        if spec is None or spec.origin is None or spec.submodule_search_locations is not None:
            continue  # a name imported from a module, or a package (whose __init__ the kernel never runs)
        seen[name] = Path(spec.origin)
        todo.extend(imported_modules(seen[name].read_text()))
    return [seen[k] for k in sorted(seen)]


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def layer_digest(files: list[Path]) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:12]


def module_path(gen: Generated, cache_dir: str | None) -> Path:
    return cache.root_of(cache_dir) / f"gasync_{gen.digest}_{layer_digest(device_layer(gen.source))}.py"


def load(gen: Generated, cache_dir: str | None, max_bytes: int = cache.DEFAULT_MAX_BYTES) -> tuple[ModuleType, Path]:
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
    externs.resolve(gen.plan.externs, gen.plan.path)  # imported and checked before the module imports them
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module
    return module, path
