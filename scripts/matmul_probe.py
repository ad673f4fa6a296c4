"""B8's tiled matrix product alone, for a profiler: ``python3 scripts/matmul_probe.py [--n N]
[--runs K] [--lineinfo] [--unchecked] [--trace] [--backend sim]`` on the GPU.

Runs samples/tiled_matmul.gasync at ``-D N=<n> -D T=32`` (a group instance a 32 x 32 tile of C:
a loader warp and a compute warp), checks C against NumPy's A @ B (1e-4 relative), and prints
the kernel's time and GFLOP/s for each run. ``--lineinfo`` compiles with line information (a
fresh cache directory), as scripts/group_probe.py does, for
``ncu --section SourceCounters -k regex:gasync_kernel -c 1 -o b8 python3 scripts/matmul_probe.py --lineinfo``.
``--trace`` runs once more traced and prints what each task's instances spend their time on
(scripts/trace_summary.py: polls, time in them, life, gaps, instances alive at once).
"""

from __future__ import annotations

import sys

import numpy as np
from probing import ROOT, cache_for, parser


def main() -> int:
    ap = parser(__doc__, runs=1)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--unchecked", action="store_true", help="without the run-time bounds checks")
    ap.add_argument("--trace", action="store_true", help="then a traced run's time by task")
    ap.add_argument("--backend", default="cuda", choices=("cuda", "sim"))
    args = ap.parse_args()
    cache_dir = cache_for(args.lineinfo)
    import gasync

    n = args.n
    prog = gasync.compile(ROOT / "samples" / "tiled_matmul.gasync", defines={"N": n, "T": 32})
    for _ in range(args.runs):
        res = prog.run(backend=args.backend, cache_dir=cache_dir, checked=not args.unchecked)
        a, b, c = (res.buffers[k] for k in "abc")
        want = a.astype(np.float64) @ b.astype(np.float64)
        if not np.allclose(c, want, rtol=1e-4, atol=1e-3):
            print("wrong result: c != a @ b")
            return 1
        ms = float(res.stats["kernel_ms"])
        print(f"kernel {ms:.3f} ms, {2 * n**3 / ms / 1e6:.1f} GFLOP/s (N = {n:,})")
    if args.trace:
        from trace_summary import summarize

        traced = prog.run(backend=args.backend, trace=True, trace_events=1 << 22, checked=not args.unchecked)
        print("\n".join(summarize(traced.trace)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
