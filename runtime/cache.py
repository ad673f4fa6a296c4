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
its temporary ``.tmp<thread id>`` while it is written, and in ``__pycache__/`` the files
named after the module's stem: Numba's index and data (``.nbi``, ``.nbc``),
Python's byte code (``.pyc``), and kept kernels and their records (``.cubin``, ``.kmeta``:
runtime/cubins.py).

Several processes may use one cache at once (runs of the same program, ``gasync cache
clear``, eviction by another run): a module is written to a temporary file and moved into
place (runtime/module.py), a file removed meanwhile is skipped, and Numba's files that a
killed or raced write left damaged count as absent (``guard_numba_cache``), never as an
error. Eviction also removes what no run can use any more: Numba's files whose module is
gone, and temporary modules older than ``STALE_S`` (a process killed while writing one).
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gasync.runtime.errors import RunError, worded

DEFAULT_MAX_BYTES = 1 << 30  # 1 GiB: about a thousand GPU programs with their Numba cache
PREFIX = "gasync_"
STEM = re.compile(r"gasync_[0-9a-f]{20}_[0-9a-f]{12}")  # runtime/module.py's module_path: the two digests
MODULE = re.compile(rf"({STEM.pattern})\.py")
TEMPORARY = re.compile(rf"({STEM.pattern})\.tmp\d+")
STALE_S = 3600.0  # a temporary module this old was left by a killed process
# Numba's index and data, Python's byte code, and kept kernels with their records (runtime/cubins.py)
COMPILED = re.compile(rf"({STEM.pattern})\.[^/]*\.(?:nbi|nbc|pyc|cubin|kmeta)")


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


class CacheError(RunError):
    """The cache's folder cannot be made, read or written (exit status 1, E0309)."""


def cache_error(root: Path, doing: str, exc: OSError) -> RunError:
    """The error of an operating-system failure on the cache folder ``root``, with the way out."""
    what = f"cannot {doing} the cache folder {root}: {exc.strerror or exc}"
    return worded(
        CacheError(f"{what} (pass cache_dir= a writable folder)"),
        f"{what} (give a writable folder with --cache-dir or $GASYNC_CACHE_DIR)",
    )


def default_dir() -> Path:
    """``$XDG_CACHE_HOME/gasync``, else ``~/.cache/gasync``; where no home folder is known
    (no ``$HOME`` and no password entry: a container's anonymous user), ``<temp>/gasync-<uid>``."""
    base = os.environ.get("XDG_CACHE_HOME")
    if base:
        return Path(base) / "gasync"
    try:
        return Path.home() / ".cache" / "gasync"
    except (RuntimeError, KeyError):  # (Python 3.11 raises KeyError where 3.12 raises RuntimeError)
        return Path(tempfile.gettempdir()) / f"gasync-{os.getuid()}"


def root_of(cache_dir: str | os.PathLike[str] | None) -> Path:
    return Path(cache_dir) if cache_dir else default_dir()


# gasync's compiled helpers (runtime/linked.py): one store for every program, whatever a
# program's cache directory, its entries ``<digest>.gxl``
HELPER_SUFFIX = ".gxl"


def helper_dir() -> Path:
    """Where gasync's compiled helpers are kept: ``$GASYNC_LINKED_DIR``, else ``<default>/linked``."""
    given = os.environ.get("GASYNC_LINKED_DIR")
    return Path(given) if given else default_dir() / "linked"


def helper_entries(root: Path | None = None) -> list[Path]:
    """Every helper entry in the store."""
    root = helper_dir() if root is None else root
    return sorted(root.glob(f"*{HELPER_SUFFIX}")) if root.is_dir() else []


def helper_info(root: Path | None = None) -> tuple[int, int]:
    """(entries, bytes) of the helper store."""
    files = helper_entries(root)
    return len(files), sum(_size(f) for f in files)


def clear_helpers(root: Path | None = None) -> tuple[int, int]:
    """Remove every helper entry of the store; (entries, bytes) removed."""
    n = size = 0
    for f in helper_entries(root):
        size += _size(f)
        try:
            f.unlink()
            n += 1
        except FileNotFoundError:  # removed meanwhile by another process
            continue
    return n, size


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
    larger than the bound. Returns the modules removed. Leftovers no run can use
    (``_leftovers``) go first, whatever the size.
    """
    for f in _leftovers(root):
        _unlink(f)
    found = entries(root)
    total = sum(e.size for e in found)
    removed = []
    for entry in found:
        if total <= max_bytes:
            break
        if keep is not None and entry.module == keep:
            continue
        for f in entry.files:
            _unlink(f)
        total -= entry.size
        removed.append(entry.module)
    return removed


def _leftovers(root: Path) -> list[Path]:
    """Numba's files whose module is gone (evicted or cleared while its kernel compiled), and
    temporary modules older than ``STALE_S``."""
    now = time.time()
    out = []
    for f in _ours(root):
        stem = _stem_of(f.name) if f.parent != root else None
        try:
            if stem is not None and not (root / f"{stem}.py").exists():
                out.append(f)
            elif f.parent == root and TEMPORARY.fullmatch(f.name) and now - f.stat().st_mtime > STALE_S:
                out.append(f)
        except OSError:
            continue
    return out


def _unlink(f: Path) -> None:
    """Remove a file of ours; one already gone, or that cannot be removed (a read-only
    cache another user shares), is left to the next eviction."""
    try:
        f.unlink(missing_ok=True)
    except OSError:
        pass


def guard_numba_cache() -> bool:
    """Make Numba's on-disk cache treat a damaged index or data file (truncated by a full disk,
    a killed process, another tool) as absent: the kernel compiles again and its files are
    written anew, where Numba itself fails every run of the program until the cache is
    cleared. Installed once per process; True if installed."""
    global _guarded
    if _guarded:
        return True
    try:
        from numba.cuda.core import caching
    except ImportError:
        return False
    cls = getattr(caching, "IndexDataCacheFile", None)
    if cls is None or not hasattr(cls, "_load_index") or not hasattr(cls, "_load_data"):
        return False
    load_index, load_data = cls._load_index, cls._load_data

    def _load_index(self: Any) -> Any:
        try:
            return load_index(self)
        except OSError:
            raise
        except Exception:  # not a pickle Numba wrote whole: an empty index, overwritten at the next save
            return {}

    def _load_data(self: Any, name: str) -> Any:
        try:
            return load_data(self, name)
        except OSError:
            raise
        except Exception as exc:  # (IndexDataCacheFile.load takes an OSError for a file removed meanwhile)
            raise OSError(f"damaged Numba cache file {name}") from exc

    cls._load_index, cls._load_data = _load_index, _load_data
    _guarded = True
    return True


_guarded = False


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
