"""What the single-benchmark probes share (scripts/handoff_probe.py, group_probe.py,
matmul_probe.py): the repository root on the import path, their common options, and line
information for Nsight Compute's source page."""

from __future__ import annotations

import argparse
import functools
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT.parent))  # the repository root is the package gasync


def parser(doc: str, runs: int) -> argparse.ArgumentParser:
    """The probe's options: ``--runs`` (``runs`` by default) and ``--lineinfo``, more to add."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--runs", type=int, default=runs)
    ap.add_argument("--lineinfo", action="store_true", help="compile with line information (a fresh cache)")
    return ap


def cache_for(lineinfo: bool) -> str | None:
    """With ``lineinfo``, the generated module's kernels get line information (its
    decorators are ``cuda.jit``'s, so before gasync compiles anything), and their cache is a
    fresh directory, not one holding kernels compiled without it; else None (the usual cache)."""
    if not lineinfo:
        return None
    from numba import cuda

    cuda.jit = functools.partial(cuda.jit, lineinfo=True)
    # gasync's helpers compiled here too, each with its lines (runtime/linked.py keeps none with them)
    os.environ["GASYNC_LINKED"] = "0"
    if "gasync.runtime.linked" in sys.modules:
        sys.modules["gasync.runtime.linked"].ENABLED = False
    return tempfile.mkdtemp(prefix="gasync-lineinfo-")
