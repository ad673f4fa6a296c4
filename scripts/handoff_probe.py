"""B2's hand-off alone, for a profiler: ``python3 scripts/handoff_probe.py [--reps N]
[--same-sm] [--lineinfo] [--runs K]`` on the GPU.

Runs bench/programs/b2_pingpong.gasync (two tasks ping-ponging a value over two one-slot
channels) ``--runs`` times with ``--reps`` round trips, the two tasks on two SMs (one warp a
block, as B2's cross-SM row) or with ``--same-sm`` in one block, and prints us per hand-off for
each run. ``--lineinfo`` compiles the kernel with line information (a fresh cache directory):
Nsight Compute's source page then names the generated module's lines beside each SASS
instruction, e.g.
``ncu --section SourceCounters -k regex:gasync_kernel -c 1 -o b2 python3 scripts/handoff_probe.py --lineinfo``.
"""

from __future__ import annotations

import sys

import numpy as np
from probing import ROOT, cache_for, parser


def main() -> int:
    ap = parser(__doc__, runs=1)
    ap.add_argument("--reps", type=int, default=5000)
    ap.add_argument("--same-sm", action="store_true")
    args = ap.parse_args()
    cache_dir = cache_for(args.lineinfo)
    import gasync

    prog = gasync.compile(ROOT / "bench" / "programs" / "b2_pingpong.gasync")
    run = {} if args.same_sm else {"executors": 2, "warps_per_block": 1}
    for _ in range(args.runs):
        res = prog.run(backend="cuda", inputs={"reps": np.array([args.reps], np.int64)}, cache_dir=cache_dir, **run)
        out = res.buffers["out"]
        want = (args.reps * (args.reps + 1) // 2, args.reps)
        if (int(out[0]), int(out[1])) != want:
            print(f"wrong result: out = {out.tolist()}, expected {list(want)}")
            return 1
        st = res.stats
        per = float(st["kernel_ms"]) * 1e3 / (2 * args.reps)
        where = f"SMs {st['sms']}, {st['waits_in_place']} waits in place"
        print(f"{per:.3f} us/hand-off  kernel {st['kernel_ms']} ms  {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
