"""Diagnose B4 (loader + compute over a channel) on the GPU at growing sizes, each bounded."""

import sys
import time

import numpy as np

import gasync

for n, tile, c in [(1 << 20, 65536, 15), (1 << 22, 65536, 63), (1 << 24, 65536, 511)]:
    prog = gasync.compile("bench/programs/b4_loader.gasync", defines={"N": n, "TILE": tile, "C": c})
    x = np.arange(n, dtype=np.float32) % 1000
    t = time.time()
    try:
        r = prog.run(backend="cuda", inputs={"x": x, "y": np.zeros(n, np.float32)}, timeout=15)
        ok = np.allclose(r.buffers["y"], 2 * x + 1)
        print(n, tile, c, "ok" if ok else "WRONG", r.stats["polls"], r.stats["executors"], r.stats["kernel_ms"], "ms")
    except Exception as e:  # noqa: BLE001
        print(n, tile, c, type(e).__name__, str(e)[:1500], round(time.time() - t, 1))
    sys.stdout.flush()
