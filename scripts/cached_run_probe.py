"""Where a cached run's seconds go (B6's cached row): ``python3 scripts/cached_run_probe.py CACHE_DIR [--out F]``.

Run it twice with the same CACHE_DIR: the first run fills Numba's cache (and is a cold
compile), the second is what the B6 "cached" rows time. Each run profiles, in this fresh
process, the imports, gasync's compile of samples/stencil2d.gasync and its first GPU run
(cProfile), and prints the run's stats, the phases' wall seconds and the 30 functions with
the most cumulative time under the run; ``--out`` writes the whole profile's text there.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

T0 = time.perf_counter()
ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    cache_dir = argv[0]
    out = argv[argv.index("--out") + 1] if "--out" in argv else ""
    prof = cProfile.Profile()
    prof.enable()
    import gasync

    t1 = time.perf_counter()
    prog = gasync.compile(ROOT / "samples" / "stencil2d.gasync")
    t2 = time.perf_counter()
    res = prog.run(backend="cuda", cache_dir=cache_dir, timeout=120)
    t3 = time.perf_counter()
    prof.disable()
    stats = res.stats
    print(f"imports {t1 - T0:.3f} s, gasync compile {t2 - t1:.3f} s, run {t3 - t2:.3f} s")
    print({k: stats[k] for k in ("compile_s", "kernel_ms", "launch") if k in stats})
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(60)
    lines = text.getvalue().splitlines()
    print("\n".join(line[:160] for line in lines[:75]))
    if out:
        full = io.StringIO()
        pstats.Stats(prof, stream=full).sort_stats("tottime").print_stats(150)
        Path(out).write_text(text.getvalue() + "\n\n" + full.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
