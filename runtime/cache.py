"""The compile cache on disk: what is in it, how big it is, and keeping it under a bound.

One cached program is one *entry*: the generated module ``gasync_<digest>_<helpers>.py``
(runtime/module.py writes it) and the files Numba's ``cache=True`` keeps for it in
``__pycache__/`` beside it (``<module stem>.<function>-<line>.py311.nbi``/``.nbc``).
An entry's age is its module file's modification time: eviction removes the
programs written first. (Not the least recently used: renewing the module's time
on every load would invalidate Numba's cache, which checks the source file's
time stamp; a program evicted while still in use is compiled once more.)

Only files named exactly as ours are ever counted or removed: the cache directory may
be one the user chose, and anything else in it is theirs (a ``gasync_helpers.py`` of
the user's included). Ours are the module ``gasync_<20 hex digits>_<12 hex digits>.py``,
its temporary ``.tmp<pid>`` while it is written, and in ``__pycache__/`` the files
named after the module's stem: Numba's index and data (``.nbi``, ``.nbc``) and
Python's byte code (``.pyc``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

DEFAULT_MAX_BYTES = 1 << 30  # 1 GiB: about a thousand GPU programs with their Numba cache
PREFIX = "gasync_"
STEM = re.compile(r"gasync_[0-9a-f]{20}_[0-9a-f]{12}")  # runtime/module.py's module_path: the two digests
MODULE = re.compile(rf"({STEM.pattern})\.py")
TEMPORARY = re.compile(rf"({STEM.pattern})\.tmp\d+")
COMPILED = re.compile(rf"({STEM.pattern})\.[^/]*\.(?:nbi|nbc|pyc)")  # Numba's index and data, Python's byte code


def is_module(name: str) -> bool:
    """Whether ``name`` is a module gasync writes into its cache."""
    return MODULE.fullmatch(name) is not None


def _stem_of(name: str) -> str | None:
    """The module stem of a file of ours in ``__pycache__/``; None for anyone else's."""
    m = COMPILED.fullmatch(name)
    return m.group(1) if m else None


@dataclass(frozen=True)
class Entry:
    """One cached program: its module and Numba's files for it."""

    module: Path
    files: tuple[Path, ...]  # the module first, then Numba's
    size: int
    mtime: float


@dataclass(frozen=True)
class CacheInfo:
    root: Path
    programs: int
    size: int  # bytes of every gasync file, stray temporary files included
    max_bytes: int


def default_dir() -> Path:
    """``$XDG_CACHE_HOME/gasync``, else ``~/.cache/gasync``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gasync"


def root_of(cache_dir: str | os.PathLike[str] | None) -> Path:
    return Path(cache_dir) if cache_dir else default_dir()


def entries(root: Path) -> list[Entry]:
    """Every cached program under ``root``, oldest first."""
    pycache = root / "__pycache__"
    numba_files: dict[str, list[Path]] = {}
    if pycache.is_dir():
        for f in pycache.glob(f"{PREFIX}*"):
            stem = _stem_of(f.name)
            if stem is not None and f.is_file():
                numba_files.setdefault(stem, []).append(f)
    out = []
    modules = [m for m in root.glob(f"{PREFIX}*.py") if is_module(m.name)] if root.is_dir() else []
    for module in modules:
        files = (module, *sorted(numba_files.get(module.stem, [])))
        try:
            mtime = module.stat().st_mtime
            size = sum(f.stat().st_size for f in files)
        except FileNotFoundError:  # removed meanwhile by another process
            continue
        out.append(Entry(module, files, size, mtime))
    return sorted(out, key=lambda e: (e.mtime, e.module.name))


def _ours(root: Path) -> list[Path]:
    """Every file of ours: modules, Numba's files for them, stray temporary modules."""
    found = [f for f in root.glob(f"{PREFIX}*") if MODULE.fullmatch(f.name) or TEMPORARY.fullmatch(f.name)]
    pycache = root / "__pycache__"
    if pycache.is_dir():
        found += (f for f in pycache.glob(f"{PREFIX}*") if _stem_of(f.name) is not None)
    return [f for f in found if f.is_file()]


def info(root: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> CacheInfo:
    files = _ours(root)
    size = sum(_size(f) for f in files)
    return CacheInfo(root, sum(1 for f in files if f.parent == root and is_module(f.name)), size, max_bytes)


def clear(root: Path) -> tuple[int, int]:
    """Remove every file of ours under ``root``; return (programs, bytes) removed."""
    files = _ours(root)
    programs = sum(1 for f in files if f.parent == root and is_module(f.name))
    size = 0
    for f in files:
        size += _size(f)
        f.unlink(missing_ok=True)
    _remove_if_empty(root / "__pycache__")
    return programs, size


def evict(root: Path, max_bytes: int, keep: Path | None = None) -> list[Path]:
    """Remove the oldest entries until the cache holds at most ``max_bytes``.

    ``keep`` (the module just written) is never removed, even when it alone is
    larger than the bound. Returns the modules removed.
    """
    found = entries(root)
    total = sum(e.size for e in found)
    removed = []
    for entry in found:
        if total <= max_bytes:
            break
        if keep is not None and entry.module == keep:
            continue
        for f in entry.files:
            f.unlink(missing_ok=True)
        total -= entry.size
        removed.append(entry.module)
    return removed


def kernel_cached(module: Path) -> bool:
    """Whether Numba's on-disk cache holds a compiled kernel for ``module``."""
    pycache = module.parent / "__pycache__"
    return module.exists() and any(pycache.glob(f"{module.stem}.*.nbi"))


def _size(f: Path) -> int:
    try:
        return f.stat().st_size
    except FileNotFoundError:
        return 0


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:  # not empty (files of others), or absent
        pass
