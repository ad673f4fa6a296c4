"""Every contract case on the GPU, once, for ``compute-sanitizer`` (scripts/gpu_check.sh's sanitize part).

Usage: python scripts/sanitize_contract.py [--shard K/N] [--executors 2]

Runs the cases of shard K of N (every N-th case, from the K-th; 0-based) on the
cuda backend with the bounds checks on (the default) and few executors (under
memcheck every spinning warp is slow), checks each result against the case's
expected values, and prints one line per case. gpu_check.sh starts N of these,
each under its own sanitizer, so that the Numba compiles spread over the cores.
Exit status 1 when a case failed (known bugs, a case's ``bug``, are skipped).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent / "tests")

from contract.check import assert_expected, run_case  # noqa: E402
from contract.programs import CASES  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--shard", default="0/1", help="K/N: every N-th case from the K-th")
    p.add_argument("--executors", type=int, default=2)
    p.add_argument("--backend", default="cuda", help="cuda, or sim to try the script without a GPU")
    p.add_argument("--timeout", type=float, default=150.0, help="each run's --timeout, seconds")
    args = p.parse_args(argv)
    k, n = (int(v) for v in args.shard.split("/"))
    failed = 0
    for case in CASES[k::n]:
        if case.buggy_on(args.backend):
            print(f"skip {case.name}: known bug", flush=True)
            continue
        t0 = time.perf_counter()
        try:
            assert_expected(case, run_case(case, args.backend, timeout=args.timeout, executors=args.executors))
            print(f"ok {case.name} ({time.perf_counter() - t0:.1f} s)", flush=True)
        except Exception as exc:  # reported, and the other cases still run
            failed += 1
            print(f"FAIL {case.name}: {type(exc).__name__}: {str(exc)[:300]}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
