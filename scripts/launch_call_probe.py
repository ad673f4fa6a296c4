"""A prepared launch's call, two ways in one process (bench/NOTES.md, run 36): the driver's
cuLaunchKernel on kept parameter pointers (runtime/kernelargs.py DIRECT) against cuda.core's
launch of all ~310 parameters. Prints each run's launch call and launch-to-sync, in ms.

Usage on the device: python3 scripts/launch_call_probe.py [RUNS]"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import gasync
from gasync.runtime import kernelargs, prepared

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    prog = gasync.compile(ROOT / "bench/programs/b4_loader.gasync", defines={"N": 1 << 20, "TILE": 65536, "C": 16})
    import numpy as np

    inputs = {"x": np.ones(1 << 20, np.float32), "y": np.zeros(1 << 20, np.float32)}
    for direct in (True, False, True):
        kernelargs.DIRECT = direct
        prepared.CACHE.clear()
        calls, kernels = [], []
        for _ in range(runs):
            st = prog.run(backend="cuda", inputs=inputs).stats
            calls.append(st["launch_ms"])
            kernels.append(st["kernel_ms"])
        print(
            f"DIRECT={direct} ({st['launch_call']}): launch call {statistics.median(calls[1:]):.3f} ms,"
            f" launch to sync {statistics.median(kernels[1:]):.3f} ms, device {st['device_ms']} ms;"
            f" first {calls[0]:.3f} / {kernels[0]:.3f}"
        )


if __name__ == "__main__":
    main()
