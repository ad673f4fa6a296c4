"""Whether a warp's 32 lanes run a parallel loop together: ``python3 scripts/converge_probe.py``
on the GPU.

Nsight Compute counts ~16 threads an executed instruction in every parallel loop measured
(B7, B8, the channel probe: bench/NOTES.md), which is what a warp split into lane 0 and
lanes 1-31 gives when each part runs the loop on its own. This runs the real generated
kernel with one store of each loop patched to write ``popc(activemask())`` (the lanes running
that iteration together) in place of its value, and prints the counts seen: a group's
compute warp (samples/tiled_matmul.gasync, the accumulator's last stage) and an executor's
parallel loop (samples/async_double.gasync). ``--variant NAME`` patches the module's warp
loops first (VARIANTS): the fixes tried. A probe only: the patched programs' results are
the counts, not their values.
"""

from __future__ import annotations

import collections
import dataclasses
import hashlib
import sys

import numpy as np
from probing import ROOT, parser

COUNT = "float32(cuda.popc(cuda.activemask()))"
# the compute loop's stores of its sums: the jammed loop's four (codegen/jam.py: every iteration
# at B8's tile of 32 x 32) and the one of the loop after it (a remainder)
STORES = [f"            L.b_acc[uint64(j{j}_v_e)] = j{j}_v_sum\n" for j in range(4)]
STORES.append("        L.b_acc[uint64(v_e)] = v_sum\n")
MARK = "    L.b_acc[uint64(lane + 32 * wl)] = " + COUNT  # a pinned warp's count, at its lanes' places
KEEP = [(store, store.split("L.b_acc")[0] + "pass\n") for store in STORES]  # the stores left out
LOOP_TOP = "    v = int64(0)\n    while True:\n        command = int64(0)\n"  # the pinned loop's (not the executor's)
# where the count is taken (--at): the compute loop's iterations, or each pinned warp (loader
# 0..31, compute 32..63 of every tile) as it starts its task, or at its loop's every turn
AT = {
    "loop": [(store, store.split("=")[0] + f"= {COUNT}\n") for store in STORES],
    "entry": [
        *KEEP,
        (
            "    wl = cuda.threadIdx.x // LANES\n    if lane == 0:\n        G.sched.ST[inst] = dl.RUNNING\n",
            "    wl = cuda.threadIdx.x // LANES\n"
            + MARK
            + "\n    if lane == 0:\n        G.sched.ST[inst] = dl.RUNNING\n",
        ),
    ],
    "looptop": [*KEEP, (LOOP_TOP, LOOP_TOP + "    " + MARK + "\n")],
}
# the warp loops' reconvergence tried: (text in the module, its replacement). The "vote" and
# "shfl" variants measured in the tenth session (bench/NOTES.md) are main's code now
# (dl.warp_sync votes, dl.warp_command shuffles lane 0's command to the lanes). The group's
# tasks poll on all 32 lanes (codegen/warppoll.py): the lane-0 loop's "onesync" is gone with it.
EXIT_AT = "        if dl.warp_command(CMD, w, command) == dl.CMD_EXIT:  # lane 0's, to every lane\n            "
VARIANTS: dict[str, list[tuple[str, str]]] = {
    "as-is": [],
    # no naps between looks at a local channel (codegen/groupkernel.py QUIET_NAPS)
    "nonaps": [("QUIET_NAPS = 32\n", "QUIET_NAPS = 0\n")],
    # no service or deadline look every 64 pending polls
    "nospin": [("                if spins % dl.SPIN_LOOK_EVERY == 0:\n", "                if False:\n")],
    # the end of the run leaves the loop by break, not return
    "break": [(EXIT_AT + "return\n", EXIT_AT + "break\n")],
}


def patched(prog, edits):  # type: ignore[no-untyped-def]
    src = prog.generated.source
    for old, new in edits:
        if old not in src:
            raise SystemExit(f"patch not found: {old!r}")
        src = src.replace(old, new)
    gen = dataclasses.replace(prog.generated, source=src, digest=hashlib.sha256(src.encode()).hexdigest())
    return dataclasses.replace(prog, generated=gen)


def main() -> int:
    ap = parser(__doc__, runs=1)
    ap.add_argument("--variant", default="as-is", choices=sorted(VARIANTS))
    ap.add_argument("--at", default="loop", choices=sorted(AT))
    args = ap.parse_args()
    import gasync

    prog = gasync.compile(ROOT / "samples" / "tiled_matmul.gasync", defines={"N": 256, "T": 32})
    prog = patched(prog, [*AT[args.at], *VARIANTS[args.variant]])
    res = prog.run(backend="cuda", timeout=60)
    counts = collections.Counter(np.asarray(res.buffers["c"]).ravel().astype(int).tolist())
    print(f"{args.variant}, at {args.at}: tiled_matmul's lanes together: {dict(sorted(counts.items()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
