"""The tables ``gasync run`` prints on stdout: buffers, shared scalars and signals, stats, and
for a traced run its profile and its counters' peaks."""

from __future__ import annotations

from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from gasync.runtime.options import Result
from gasync.runtime.profile import COLUMNS as PROFILE_COLUMNS
from gasync.runtime.profile import TaskProfile, duration, peaks

# (kernel_ms is the launch call to the synchronize; span_ms the executors' first look to the last
# exit on the device's clock; device_ms the longest executor's own time; launch_ms the call alone)
STATS = (
    "backend", "executor", "executors", "tasks", "instances", "polls", "wakes", "frame_bytes", "compile_s", "kernel_ms",
    "span_ms", "device_ms", "launch_ms",
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
    if result.profile is not None:
        for table in profile_tables(result.profile):
            console.print(table)
        if result.trace.counters:
            console.print(peaks_table(peaks(result.trace)))


WAITS_SHOWN = 3  # await points listed per task, those waited on longest


def profile_tables(prof: dict[str, TaskProfile]) -> list[Table]:
    """The profile of a traced run: one row per task, then what each task waited on longest
    (left out where no task waited)."""
    table = Table(title="profile (from the trace)", title_justify="left")
    for k, col in enumerate(PROFILE_COLUMNS):
        table.add_column(col, justify="left" if k == 0 else "right", no_wrap=True)
    waits = Table(title="waiting on (the longest, per task)", title_justify="left")
    for k, col in enumerate(("task", "await point", "time")):
        waits.add_column(col, justify="right" if k == 2 else "left", no_wrap=k != 1)
    for task, p in prof.items():
        table.add_row(
            task, str(p.instances), str(p.polls), duration(p.busy_us), duration(p.wait_us),
            str(p.wakes), duration(p.longest_poll_us),
        )  # fmt: skip
        for label, us in list(p.waiting_on.items())[:WAITS_SHOWN]:
            waits.add_row(task, label, duration(us))
    return [table, waits] if waits.row_count else [table]


def peaks_table(top: dict[str, tuple[int, int | None]]) -> Table:
    """Each counter's peak as the polls ended (``runtime.profile.peaks``), a channel's capacity beside it."""
    table = Table(title="counters (from the trace)", title_justify="left")
    for k, col in enumerate(("counter", "peak", "capacity")):
        table.add_column(col, justify="left" if k == 0 else "right", no_wrap=True)
    for name, (peak, capacity) in top.items():
        table.add_row(name, str(peak), "" if capacity is None else str(capacity))
    return table


def fmt_value(v: Any) -> str:
    """A value as the tables show it (floats to 6 significant digits)."""
    if isinstance(v, float | np.floating):
        return f"{float(v):.6g}"
    return str(v)
