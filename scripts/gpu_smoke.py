"""Quick GPU smoke run: a few samples on the cuda backend, printed."""

import sys
import time

import gasync

for name, kw in [
    ("async_double", {}),
    ("stencil2d", {}),
    ("async_double", {"executor": "spin"}),
    ("stencil2d", {"executor": "spin"}),
    ("counter", {"timeout": 2.0}),
]:
    t = time.time()
    try:
        r = gasync.compile(f"samples/{name}.gasync").run(backend="cuda", **kw)
        print(
            name,
            kw,
            {k: (v[:4].tolist() if hasattr(v, "tolist") else v) for k, v in r.buffers.items()},
            r.shared,
            {k: r.stats[k] for k in ("polls", "executors", "compile_s", "kernel_ms")},
            round(time.time() - t, 2),
        )
    except Exception as e:  # noqa: BLE001
        print(name, kw, "ERROR", type(e).__name__, e)
    sys.stdout.flush()
