"""Where a single ``run_files`` goes (issue 17's single-run side): ``python3 scripts/run_files_probe.py [--inputs 8]``.

The same runs as scripts/map_check.py's single loop (samples/normalize.gasync on 2048 x 2048
.npy images, read, run, written), after a warm-up run: each run's wall seconds beside what its
stats account for (read, the run's own clock, write), then cProfile's 40 functions with the most
cumulative time over the timed runs, to name what the stats leave out.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from map_check import Job  # noqa: E402


def main(argv: list[str]) -> int:
    from gasync.cluster import run_files

    n = int(argv[argv.index("--inputs") + 1]) if "--inputs" in argv else 8
    job = Job("cuda", n, 2048)
    run_files(*job.args(job.stems[0], "warm"))
    prof = cProfile.Profile()
    for stem in job.stems:
        t0 = time.perf_counter()
        prof.enable()
        stats = run_files(*job.args(stem, "single"))["stats"]
        prof.disable()
        wall = time.perf_counter() - t0
        told = stats["read_s"] + stats["total_s"] + stats["write_s"]
        print(f"{stem}: wall {wall * 1e3:.1f} ms; read {stats['read_s'] * 1e3:.1f}, run {stats['total_s'] * 1e3:.1f}, "
              f"write {stats['write_s'] * 1e3:.1f}; not in them {(wall - told) * 1e3:.1f} ms")  # fmt: skip
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(40)
    print("\n".join(line[:170] for line in text.getvalue().splitlines()[:60]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
