"""Which half of B8's pipeline bounds it: ``python3 scripts/matmul_parts_probe.py [--n N] [--runs K]``.

samples/tiled_matmul.gasync at ``-D N=<n> -D T=32`` and four variants of its text, each timed
(the median kernel time of ``--runs``): ``half`` sums only k in 0..T/2 of each staged pair (half
the multiply-adds, the same loads and hand-offs), ``noproduct`` none of them, ``noload`` the
loader stores constants instead of reading A and B (the same hand-offs, no global reads), and
``handoffs`` both (what is left is the executor: polls, hand-offs, the lanes' meetings). If
``half`` is near the full time the product is not what bounds the pipeline; ``handoffs`` is
its floor. Only the full program's C is checked (against NumPy's A @ B); the variants compute
other values on purpose.
"""

from __future__ import annotations

import statistics
import sys

import numpy as np
from probing import ROOT, parser

PRODUCT = "for kk in 0..T {"
LOADS = ("ta[s, e] = a[row0 + e / T, k0 + e % T];", "tb[s, e] = b[k0 + e / T, col0 + e % T];")
VARIANTS = {
    "full": (),
    "half": ((PRODUCT, "for kk in 0..T / 2 {"),),
    "noproduct": ((PRODUCT, "for kk in 0..T * 0 {"),),
    "noload": ((LOADS[0], "ta[s, e] = 1.0;"), (LOADS[1], "tb[s, e] = 2.0;")),
    "handoffs": ((PRODUCT, "for kk in 0..T * 0 {"), (LOADS[0], "ta[s, e] = 1.0;"), (LOADS[1], "tb[s, e] = 2.0;")),
}


def main() -> int:
    ap = parser(__doc__, runs=3)
    ap.add_argument("--n", type=int, default=2048)
    args = ap.parse_args()
    import gasync

    text = (ROOT / "samples" / "tiled_matmul.gasync").read_text()
    n, stages = args.n, args.n // 32
    full_ms = None
    for name, edits in VARIANTS.items():
        src = text
        for old, new in edits:
            assert old in src, old
            src = src.replace(old, new)
        prog = gasync.compile_source(src, f"tiled_matmul-{name}.gasync", defines={"N": n, "T": 32})
        times = []
        for _ in range(args.runs):
            res = prog.run(backend="cuda")
            times.append(float(res.stats["kernel_ms"]))
            if name == "full":
                a, b, c = (res.buffers[k] for k in "abc")
                if not np.allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=1e-3):
                    print("wrong result: c != a @ b")
                    return 1
        ms = statistics.median(times)
        full_ms = full_ms or ms
        per_stage = ms * 1e3 / stages
        print(f"{name:10s} kernel {ms:7.3f} ms  ({ms / full_ms:.3f} of full; {per_stage:6.1f} us a k-stage)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
