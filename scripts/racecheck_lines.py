"""A .gasync program run once on the GPU with its kernel's line information, so that
compute-sanitizer's racecheck names the generated line of each access it reports.

``compute-sanitizer --tool racecheck python3 scripts/racecheck_lines.py PROGRAM OUTDIR`` on the
GPU (scripts/gpu_check.sh, part ``racelines``). The generated module (the file racecheck's
lines are of) is copied to ``OUTDIR/NAME.gen.py``; scripts/racecheck_where.py then prints each
reported pair's two lines of it, and the task and `.gasync` line they came from.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from probing import cache_for


def main() -> int:
    program, outdir = Path(sys.argv[1]), Path(sys.argv[2])
    cache_dir = cache_for(True)
    import gasync

    prog = gasync.compile(program)
    res = prog.run(backend="cuda", cache_dir=cache_dir)
    print(f"{program}: ran, kernel {float(res.stats['kernel_ms']):.3f} ms")
    outdir.mkdir(parents=True, exist_ok=True)
    assert cache_dir is not None
    for f in Path(cache_dir).rglob("*.py"):
        shutil.copy(f, outdir / f"{program.stem}.gen.py")
        print(f"generated module: {f} -> {outdir / (program.stem + '.gen.py')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
