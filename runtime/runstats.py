"""What a GPU or simulated run's stats say beyond its counts: the device it ran on, and the span
of its executors' clocks (runtime/launch.py puts both into ``Result.stats``)."""

from __future__ import annotations

from typing import Any

from gasync.runtime.state import Stat


def span_ms(stats: Any) -> float:
    """Milliseconds from the earliest first look of an executor to the latest exit (STATS rows;
    an executor that never reached its exit, 0 there, is left out)."""
    ended = stats[stats[:, Stat.END_NS] > 0]
    if not len(ended):
        return 0.0
    first = (ended[:, Stat.END_NS] - ended[:, Stat.ELAPSED_NS]).min()
    return round(float(ended[:, Stat.END_NS].max() - first) / 1e6, 3)


def device_label(cuda: Any) -> str:
    """The GPU this process runs on, by name and PCI address: workers pinned one to a GPU each
    (CUDA_VISIBLE_DEVICES, as dask-cuda sets it) name different ones."""
    dev = cuda.get_current_device()
    name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
    try:
        return f"{name} (PCI {dev.PCI_DOMAIN_ID:04x}:{dev.PCI_BUS_ID:02x}:{dev.PCI_DEVICE_ID:02x})"
    except (AttributeError, TypeError, ValueError):  # a driver that does not report the address
        return name
