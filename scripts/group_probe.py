"""B7's staged pipeline alone, for a profiler: ``python3 scripts/group_probe.py [--tiles N]
[--tile T] [--stages S] [-D NAME=VALUE] [--runs K] [--lineinfo] [--trace]`` on the GPU.

Runs bench/programs/b7_staged.gasync (128 group instances of 4 loader and 4 compute warps,
tiles of ``--tile`` f32, 4,096 as in the benchmark, through ``--stages`` stages of shared
memory) with ``--tiles`` tiles a group (512 in the benchmark), checks y = 2x + 1, and
prints the kernel's time and GB/s for each run (``--unchecked``: without the bounds checks the
compiler could not prove).
``--lineinfo`` compiles with line information (a fresh cache directory), as
scripts/handoff_probe.py does, for
``ncu --section SourceCounters -k regex:gasync_kernel -c 1 -o b7 python3 scripts/group_probe.py --lineinfo``.
``--trace`` runs once more traced and prints what each task's instances spend their time on
(scripts/trace_summary.py). ``--half loads`` times the loaders alone (the compute tasks hand
each slot back without storing), ``--half stores`` the compute tasks alone (the loaders hand
out slots without loading): which half of the pipeline holds B7 under the hand-written
kernels (bench/NOTES.md, run 49); their GB/s count the bytes that half moves, and y is not
checked.
"""

from __future__ import annotations

import sys

import numpy as np
from probing import ROOT, cache_for, parser

GROUPS = 128
HALVES = {  # --half: the parallel loop taken out of the program, so that only the other half moves data
    "loads": "parallel for i in 0..TILE { y[t * TILE + i] = 2.0 * stage[s, i] + 1.0; }",
    "stores": "parallel for i in 0..TILE { stage[s, i] = x[t * TILE + i]; }",
}


def main() -> int:
    ap = parser(__doc__, runs=2)
    ap.add_argument("--tiles", type=int, default=128)
    ap.add_argument("--tile", type=int, default=4096)
    ap.add_argument("--stages", type=int, default=8)
    ap.add_argument("--unchecked", action="store_true", help="without the run-time bounds checks")
    ap.add_argument("--trace", action="store_true", help="then a traced run's time by task")
    ap.add_argument("-D", dest="defines", action="append", default=[], help="another const: NAME=VALUE (L, C)")
    ap.add_argument("--half", choices=sorted(HALVES), help="one half of the pipeline alone")
    args = ap.parse_args()
    cache_dir = cache_for(args.lineinfo)
    import gasync

    path = ROOT / "bench" / "programs" / "b7_staged.gasync"
    text = path.read_text()
    if args.half:
        old = HALVES[args.half]
        assert old in text, f"b7_staged.gasync has no '{old}'"
        text = text.replace(old, "")
    prog = gasync.compile_source(
        text,
        str(path),
        defines={"N": GROUPS * args.tiles * args.tile, "TILE": args.tile, "STAGES": args.stages}
        | {k: int(v) for k, v in (d.split("=", 1) for d in args.defines)},
    )
    n = GROUPS * args.tiles * args.tile
    x = (np.arange(n) % 1000).astype(np.float32)
    for _ in range(args.runs):
        y = np.zeros(n, np.float32)
        res = prog.run(backend="cuda", inputs={"x": x, "y": y}, cache_dir=cache_dir, checked=not args.unchecked)
        if not args.half and not np.array_equal(res.buffers["y"], 2 * x + 1):
            print("wrong result: y != 2x + 1")
            return 1
        ms = float(res.stats["kernel_ms"])
        moved = 4 * n if args.half else 8 * n
        what = f"{n:,} f32 {'in' if args.half == 'loads' else 'out'} only" if args.half else f"{n:,} f32 in and out"
        print(f"kernel {ms:.3f} ms, {moved / ms / 1e6:.1f} GB/s ({what})")
    if args.trace:
        from trace_summary import summarize

        y = np.zeros(n, np.float32)
        traced = prog.run(backend="cuda", inputs={"x": x, "y": y}, trace=True, trace_events=1 << 22)
        print("\n".join(summarize(traced.trace)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
