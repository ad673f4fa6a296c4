"""B2's hand-off alone, for a profiler: ``python3 scripts/handoff_probe.py [--reps N]
[--same-sm] [--group] [--set MODULE.NAME=VALUE]... [--lineinfo] [--runs K]`` on the GPU.

Runs bench/programs/b2_pingpong.gasync (two tasks ping-ponging a value over two one-slot
channels) ``--runs`` times with ``--reps`` round trips, the two tasks on two SMs (one warp a
block, as B2's cross-SM row) or with ``--same-sm`` in one block, and prints us per hand-off for
each run. ``--lineinfo`` compiles the kernel with line information (a fresh cache directory):
Nsight Compute's source page then names the generated module's lines beside each SASS
instruction, e.g.
``ncu --section SourceCounters -k regex:gasync_kernel -c 1 -o b2 python3 scripts/handoff_probe.py --lineinfo``.
``--group`` runs bench/programs/b2_group.gasync instead (the same ping-pong between two tasks of
a group: two warps of one block, local channels in shared memory). ``--set
runtime.devicegroups.LCH_TRY_NAP_NS=0`` gives a constant of one of gasync's modules another
integer value before anything is compiled (Numba reads a module's globals when it compiles),
in a fresh cache directory: what one constant's step costs, beside the tree in the same call.
"""

from __future__ import annotations

import importlib
import sys
import tempfile

import numpy as np
from probing import ROOT, cache_for, parser


def set_constant(assignment: str) -> None:
    """``MODULE.NAME=VALUE`` (MODULE under the package, e.g. runtime.devicegroups): the module's
    existing integer or boolean NAME set to VALUE."""
    target, _, value = assignment.partition("=")
    where, _, name = target.rpartition(".")
    module = importlib.import_module(f"gasync.{where}")
    old = getattr(module, name)  # an AttributeError names what is not there
    new = (value == "True") if isinstance(old, bool) else int(value)
    setattr(module, name, new)
    print(f"{where}.{name}: {old} -> {new}")


def main() -> int:
    ap = parser(__doc__, runs=1)
    ap.add_argument("--reps", type=int, default=5000)
    ap.add_argument("--same-sm", action="store_true")
    ap.add_argument("--group", action="store_true", help="the ping-pong between two tasks of a group")
    ap.add_argument("--set", action="append", default=[], metavar="MODULE.NAME=VALUE")
    args = ap.parse_args()
    cache_dir = cache_for(args.lineinfo)
    import gasync

    for assignment in args.set:
        set_constant(assignment)
    if args.set and cache_dir is None:
        cache_dir = tempfile.mkdtemp(prefix="gasync-set-")  # not a kernel compiled with the old value
    name = "b2_group.gasync" if args.group else "b2_pingpong.gasync"
    prog = gasync.compile(ROOT / "bench" / "programs" / name)
    run = {} if args.same_sm or args.group else {"executors": 2, "warps_per_block": 1}
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
