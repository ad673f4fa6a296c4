"""Generated modules on disk: written once under a name made of their content hash.

Numba's ``cache=True`` needs the kernel's source in a real file, and any edit
of that file invalidates the cache; naming the file by the hash of its text
(which includes the gasync version and the device-helper layer's hash) means
an unchanged program finds its compiled kernel, and a changed one never finds
a stale one.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from gasync.codegen import Generated
from gasync.runtime import cache, externs


def default_cache_dir() -> Path:
    return cache.default_dir()


def _helpers_digest() -> str:
    from gasync.runtime import devicelib

    return hashlib.sha256(Path(devicelib.__file__).read_bytes()).hexdigest()[:12]


def module_path(gen: Generated, cache_dir: str | None) -> Path:
    return cache.root_of(cache_dir) / f"gasync_{gen.digest}_{_helpers_digest()}.py"


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
