"""The tables ``gasync run`` prints on stdout: buffers, shared scalars and signals, stats."""

from __future__ import annotations

from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from gasync.runtime.options import Result

STATS = (
    "backend", "executor", "executors", "tasks", "instances", "polls", "wakes", "frame_bytes", "compile_s", "kernel_ms",
    "device_ms",
)  # fmt: skip


def summary(result: Result) -> None:
    console = Console()
    table = Table(title="buffers", title_justify="left")
    for col in ("name", "shape", "dtype", "sum", "first values"):
        table.add_column(col)
    for name, arr in result.buffers.items():
        flat = arr.reshape(-1)
        first = ", ".join(fmt_value(v) for v in flat[:6]) + (", ..." if flat.size > 6 else "")
        table.add_row(name, str(list(arr.shape)), str(arr.dtype), fmt_value(flat.sum()), first)
    console.print(table)
    if result.shared or result.signals:
        scal = Table(title="shared scalars and signals", title_justify="left")
        scal.add_column("name")
        scal.add_column("value")
        for name, value in result.shared.items():
            scal.add_row(name, fmt_value(value))
        for name, flag in result.signals.items():
            scal.add_row(f"signal {name}", "set" if flag else "not set")
        console.print(scal)
    stats = Table(title="stats", title_justify="left")
    stats.add_column("stat")
    stats.add_column("value")
    for key in STATS:
        stats.add_row(key, str(result.stats.get(key)))
    console.print(stats)


def fmt_value(v: Any) -> str:
    """A value as the tables show it (floats to 6 significant digits)."""
    if isinstance(v, float | np.floating):
        return f"{float(v):.6g}"
    return str(v)
