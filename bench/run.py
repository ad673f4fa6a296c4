"""The benchmark suite of issue 4: ``python3 bench/run.py [--quick] [--only B1,B6] [--sim-smoke]``.

Runs B1 (tiny tasks), B2 (cross-warp hand-off), B2b (await chains), B3 (a
loop to convergence on the device), B4 (loader + compute tasks), B5 (`bulk
for`), B5a (a data-parallel stage as a task array), B6 (cold and cached
compile) and T1 (tracing overhead) on the cuda backend, each beside its
baseline (see suite.py and suite2.py), prints a markdown table, and writes it
to bench/results/latest.md and every sample with the machine's description to
bench/results/<date>-<gpu>.json, the headline figures of issue 11 to
bench/results/summary.json (summary.py; not for --quick); then report.py
turns both into docs/performance.md. A benchmark that fails prints its error and the others
still run; one that fails in part (suite.PartialFailure) keeps the rows it measured and
records the rest as its error. ``--sim-smoke`` instead runs every gasync program of the
suite at tiny sizes on the simulator and checks the values (no GPU needed).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import subprocess
import sys
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

from report import fmt

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
ALL = ("B1", "B2", "B2b", "B3", "B4", "B5", "B5a", "B6", "T1", "B7", "B8")


def ensure_importable() -> None:
    """Make ``import gasync`` find this checkout, installed or not (the root IS the package); not
    another one on the path (a stage's copy of the tree, scripts/bench_stage.sh, would measure it)."""
    try:
        import gasync

        if Path(gasync.__file__).resolve().parent == ROOT.resolve():
            return
        for name in [m for m in sys.modules if m == "gasync" or m.startswith("gasync.")]:
            del sys.modules[name]
    except ImportError:
        pass
    link_dir = ROOT / "build" / "bench-path"  # a folder named gasync, as mypy gets in the Makefile
    link_dir.mkdir(parents=True, exist_ok=True)
    link = link_dir / "gasync"
    if not link.exists():
        link.symlink_to(ROOT, target_is_directory=True)
    sys.path.insert(0, str(link_dir))
    # children (the simulator's worker, B6's fresh processes) import gasync too
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(link_dir), os.environ.get("PYTHONPATH")]))


def machine_info() -> dict[str, Any]:
    from numba import __version__ as numba_version
    from numba import cuda
    from numba.cuda.cudadrv import driver, runtime

    dev = cuda.get_current_device()
    name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
    info: dict[str, Any] = {
        "gpu": name,
        "sm_count": int(dev.MULTIPROCESSOR_COUNT),
        "compute_capability": list(dev.compute_capability),
        "driver": ".".join(map(str, driver.driver.get_version())),
        "cuda_runtime": ".".join(map(str, runtime.runtime.get_version())),
        "numba": numba_version,
        "python": platform.python_version(),
        "host": platform.node(),
        # the device machine's copy of the tree has stale git metadata: gpu_check.sh passes
        # the commit it was given (GASYNC_COMMIT) and then the tree is taken as clean
        "commit": os.environ.get("GASYNC_COMMIT") or _git("rev-parse", "HEAD"),
        "dirty": False if os.environ.get("GASYNC_COMMIT") else bool(_git("status", "--porcelain")),
    }
    for pkg in ("numba_cuda", "cupy", "numpy"):
        try:
            info[pkg] = __import__(pkg).__version__
        except Exception as exc:  # report, never fail, on a missing package
            info[pkg] = f"unavailable ({type(exc).__name__})"
    return info


def _git(*args: str) -> str:
    try:
        proc = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""


def gpu_slug(name: str) -> str:
    m = re.search(r"\b([A-Z]{1,2}\d{2,4}[A-Z]?)\b", name)
    return (m.group(1) if m else re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")).lower() or "gpu"


def markdown(rows: list[Any], errors: dict[str, str], info: dict[str, Any], cfg: Any) -> str:
    head = (
        f"# gasync benchmarks {info['date']} on {info['gpu']} ({info['sm_count']} SMs, driver {info['driver']})\n\n"
        f"Commit {info['commit'][:10] or 'unknown'}{' (dirty)' if info['dirty'] else ''}; "
        f"{'quick sizes; ' if cfg.quick else ''}median of {cfg.reps} runs.\n\n"
    )
    lines = ["| bench | case | value | unit | goal | note |", "| --- | --- | ---: | --- | --- | --- |"]
    lines += [f"| {r.bench} | {r.case} | {fmt(r.value)} | {r.unit} | {r.goal} | {r.note} |" for r in rows]
    lines += [f"| {name} | FAILED | | | | {msg} |" for name, msg in errors.items()]
    return head + "\n".join(lines) + "\n"


def benchmark(only: list[str], quick: bool, reps: int) -> int:
    from suite import BENCHMARKS as BASE
    from suite import Config, PartialFailure
    from suite2 import BENCHMARKS as MORE
    from suite3 import BENCHMARKS as GROUPS

    benchmarks = {**BASE, **MORE, **GROUPS}

    # one-block grids are intended here (numba-cuda has its own warning class: match the text)
    warnings.filterwarnings("ignore", message=".*Grid size .* under-utilization")
    cfg = Config(quick=quick, reps=reps)
    start = time.perf_counter()
    info = machine_info()
    info["date"] = dt.datetime.now().isoformat(timespec="seconds")
    rows: list[Any] = []
    errors: dict[str, str] = {}
    elapsed: dict[str, float] = {}
    for name in only:
        t0 = time.perf_counter()
        print(f"== {name}", flush=True)
        got: list[Any] = []
        try:
            got = benchmarks[name](cfg)
        except PartialFailure as exc:  # its failures' tracebacks are printed; the rows measured are kept
            got = exc.rows
            errors[name] = f"partly failed: {exc}".splitlines()[0][:300]
        except Exception as exc:
            traceback.print_exc()
            errors[name] = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
        rows += got
        for r in got:
            print(f"   {r.case}: {fmt(r.value)} {r.unit}  {r.note}", flush=True)
        if name in errors:
            print(f"   FAILED: {errors[name]}", flush=True)
        elapsed[name] = round(time.perf_counter() - t0, 1)
        print(f"   ({elapsed[name]} s)", flush=True)
    info["elapsed_s"] = {**elapsed, "total": round(time.perf_counter() - start, 1)}
    table = markdown(rows, errors, info, cfg)
    print("\n" + table)
    RESULTS.mkdir(exist_ok=True)
    subset = "" if list(only) == list(ALL) else "-" + "-".join(only).lower()  # a part of the suite: its own file
    out = RESULTS / f"{info['date'][:10]}-{gpu_slug(info['gpu'])}{subset}{'-quick' if quick else ''}.json"
    doc = {
        "machine": info,
        "quick": quick,
        "reps": reps,
        "benchmarks": only,
        "rows": [r.to_json() for r in rows],
        "errors": errors,
    }
    out.write_text(json.dumps(doc, indent=2) + "\n")
    (RESULTS / "latest.md").write_text(table)
    print(f"wrote {out.relative_to(ROOT)} and {(RESULTS / 'latest.md').relative_to(ROOT)}")
    try:
        from report import write_report
        from summary import write_summary

        summary = write_summary(doc, str(out.relative_to(ROOT)))
        print(f"wrote {summary.relative_to(ROOT)}" if summary else "no summary.json for a --quick run")
        print(f"wrote {write_report([out]).relative_to(ROOT)}")
    except Exception:  # the measurements are saved; a broken summary or report must not hide them
        traceback.print_exc()
        return 1
    return 1 if errors else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a check that everything runs)")
    ap.add_argument("--only", default=",".join(ALL), help=f"comma-separated subset of {','.join(ALL)}")
    ap.add_argument("--reps", type=int, default=3, help="timed repetitions per measurement (median reported)")
    ap.add_argument("--sim-smoke", action="store_true", help="tiny sizes on the simulator, values checked")
    ap.add_argument("--b6-child", metavar="CACHE_DIR", help=argparse.SUPPRESS)  # B6's fresh process
    args = ap.parse_args(argv)
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = [s for s in only if s not in ALL]
    if unknown:
        ap.error(f"unknown benchmark(s) {', '.join(unknown)}: expected some of {', '.join(ALL)}")
    ensure_importable()
    if args.b6_child:
        from suite import b6_child

        return b6_child(args.b6_child)
    if args.sim_smoke:
        from smoke import smoke

        return smoke(only)
    return benchmark(only, args.quick, max(1, args.reps))


if __name__ == "__main__":
    sys.exit(main())
