"""Issues 17 and 18's measurements: ``gasync map`` through Dask against single runs, and across GPUs.

    python3 scripts/map_check.py --backend cuda --inputs 16 --size 2048 --json OUT.json
    python3 scripts/map_check.py --backend cuda --scale --inputs 512 --size 4096 --json OUT.json

Every run is the very same function on the same files (``cluster.run_files``: read the .npy,
run samples/normalize.gasync at H = W = size, write the output), after a warm-up run on each
worker, since the compile is paid once per worker.

Without ``--scale`` (issue 17): one process calls it in a loop; a cluster (dask-cuda's
LocalCUDACluster where it is installed and the backend is cuda, else a LocalCluster of
``--workers`` processes) gets one task per input. It prints, and writes as JSON, the seconds
per input each way and their ratio (goal: within 1.10), the device each run named, and a cold
``gasync map`` command's wall time (cluster start and compile included) beside them.

With ``--scale`` (issue 18): the whole map on a LocalCUDACluster of one worker, then of two
(one GPU each, as dask-cuda pins them), with efficiency = t1 / (2 t2) (goal: >= 0.9), the
outputs of both compared, and the devices the runs named. On a machine with one GPU it runs
two workers on that one GPU instead (a LocalCluster), which shows only that nothing
serialises on the client: the figure for issue 18 needs two GPUs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "normalize.gasync"
QUIET = {"dashboard_address": None, "silence_logs": 50, "threads_per_worker": 1}


class Job:
    """The inputs on disk, the recipe and the options every run shares."""

    def __init__(self, backend: str, inputs: int, size: int) -> None:
        from gasync import cluster

        self.backend, self.size = backend, size
        self.tmp = Path(tempfile.mkdtemp(prefix="gasync-map-check-"))
        self.data = self.tmp / "data"
        self.data.mkdir()
        for k in range(inputs):
            img = (np.random.default_rng(k).random((size, size)) * 5 - 1).astype(np.float32)
            np.save(self.data / f"img{k:04d}.npy", img)
        self.stems = sorted(p.stem for p in self.data.glob("*.npy"))
        self.recipe = cluster.Recipe.read(SAMPLE, {"H": size, "W": size})
        self.options = {"backend": backend, "timeout": 600.0, "checked": True}

    def args(self, stem: str, outdir: str) -> tuple[Any, ...]:
        return (
            self.recipe,
            {"img": str(self.data / f"{stem}.npy")},
            str(self.tmp / outdir),
            stem,
            ("out",),
            self.options,
        )

    def same_outputs(self, a: str, b: str) -> bool:
        load = np.load
        return all(np.array_equal(load(self.tmp / a / "out" / f"{s}.npy"), load(self.tmp / b / "out" / f"{s}.npy"))
                   for s in self.stems)  # fmt: skip


def local_cluster(backend: str, workers: int) -> tuple[Any, str]:
    """dask-cuda's cluster on the GPU where it is installed (``workers`` GPUs, 0: all), else processes."""
    from distributed import LocalCluster

    if backend == "cuda":
        try:
            from dask_cuda import LocalCUDACluster
        except ImportError:
            pass
        else:
            return LocalCUDACluster(n_workers=workers or None, **QUIET), "LocalCUDACluster"
    return LocalCluster(n_workers=workers or 1, processes=True, **QUIET), "LocalCluster"


def timed_map(job: Job, made: Any, outdir: str) -> tuple[float, list[dict[str, Any]], int]:
    """Seconds for the whole map on a warmed cluster, the runs' records, and the workers."""
    from distributed import Client, wait

    from gasync.cluster import run_files

    with made, Client(made) as client:
        workers = list(client.scheduler_info()["workers"])
        wait([client.submit(run_files, *job.args(job.stems[0], "warm"), workers=[w], pure=False) for w in workers])
        t0 = time.perf_counter()
        records = client.gather([client.submit(run_files, *job.args(s, outdir), pure=False) for s in job.stems])
        return time.perf_counter() - t0, records, len(workers)


def against_single(job: Job, workers: int) -> dict[str, Any]:
    from gasync.cluster import run_files

    run_files(*job.args(job.stems[0], "warm"))  # the compile, paid once
    single, single_runs = [], []
    for stem in job.stems:
        t0 = time.perf_counter()
        single_runs.append(run_files(*job.args(stem, "single"))["stats"])
        single.append(time.perf_counter() - t0)
    made, kind = local_cluster(job.backend, workers)
    mapped, records, n = timed_map(job, made, "map")
    assert job.same_outputs("single", "map"), "the cluster's outputs differ from the single runs'"
    t0 = time.perf_counter()
    cmd = [sys.executable, "-m", "gasync", "map", str(SAMPLE), "--input", f"img={job.data}/*.npy", "--output-dir",
           str(job.tmp / "cli"), "-D", f"H={job.size}", "-D", f"W={job.size}",
           "--backend", job.backend, "-q"] + (["--workers", str(workers)] if workers else [])  # fmt: skip
    cli = subprocess.run(cmd, capture_output=True, text=True)
    cli_s = time.perf_counter() - t0
    if cli.returncode:
        print(cli.stderr[-2000:], file=sys.stderr)
    per_single = sum(single) / len(single)
    per_map = mapped * n / len(job.stems)  # each worker's share of the inputs, run one after another
    return {
        "what": "samples/normalize.gasync over .npy images: gasync map (Dask) against single runs in one process",
        "cluster": f"{kind} of {n}",
        "devices": sorted({r["stats"].get("device", "") for r in records}),
        "single_s_per_input": round(per_single, 5),
        "single_s_median": round(statistics.median(single), 5),
        "map_s_per_input_per_worker": round(per_map, 5),
        "ratio": round(per_map / per_single, 3),
        "goal": "ratio <= 1.10",
        "kernel_ms_median": statistics.median(float(r["stats"]["kernel_ms"]) for r in records),
        # the run alone (Program.run's own clock), single and on the worker: what is not in it is
        # the files' reading and writing and, on the cluster, Dask's share
        "run_s_median_single": statistics.median(float(r["total_s"]) for r in single_runs),
        "run_s_median_map": statistics.median(float(r["stats"]["total_s"]) for r in records),
        "read_s_median_single": statistics.median(float(r["read_s"]) for r in single_runs),
        "read_s_median_map": statistics.median(float(r["stats"]["read_s"]) for r in records),
        "write_s_median_single": statistics.median(float(r["write_s"]) for r in single_runs),
        "write_s_median_map": statistics.median(float(r["stats"]["write_s"]) for r in records),
        # the state's reset before the launch (runtime/prepared.py), and which launch ran
        "prepare_ms_median_single": statistics.median(float(r.get("prepare_ms", 0)) for r in single_runs),
        "prepare_ms_median_map": statistics.median(float(r["stats"].get("prepare_ms", 0)) for r in records),
        "launch_paths_single": sorted({str(r.get("launch_path", "")) for r in single_runs}),
        "launch_paths_map": sorted({str(r["stats"].get("launch_path", "")) for r in records}),
        "cli_cold_wall_s": round(cli_s, 2),
        "cli_exit": cli.returncode,
    }


def scaling(job: Job) -> dict[str, Any]:
    from gasync.runtime.backends import gpu_count

    gpus = gpu_count() if job.backend == "cuda" else 0
    runs = {}
    for n in (1, 2):
        if gpus >= 2:
            made, kind = local_cluster(job.backend, n)
        else:  # one GPU (or the simulator): two workers share it
            from distributed import LocalCluster

            made, kind = LocalCluster(n_workers=n, processes=True, **QUIET), "LocalCluster"
        seconds, records, workers = timed_map(job, made, f"w{n}")
        by_worker: dict[str, set[str]] = {}
        for r in records:
            by_worker.setdefault(r["stats"]["worker"], set()).add(str(r["stats"].get("device", "")))
        runs[n] = {"cluster": f"{kind} of {workers}", "seconds": round(seconds, 3),
                   "devices_by_worker": sorted(sorted(d) for d in by_worker.values())}  # fmt: skip
    return {
        "what": "samples/normalize.gasync over .npy images: the whole map on 1 worker, then 2",
        "gpus": gpus,
        "one": runs[1],
        "two": runs[2],
        "efficiency": round(runs[1]["seconds"] / (2 * runs[2]["seconds"]), 3),
        "goal": "efficiency >= 0.9 on two GPUs" + ("" if gpus >= 2 else " (not measurable here: fewer than two GPUs)"),
        "identical": job.same_outputs("w1", "w2"),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--inputs", type=int, default=16)
    ap.add_argument("--size", type=int, default=2048, help="H = W of each image")
    ap.add_argument("--workers", type=int, default=0, help="0: one per GPU (dask-cuda), or 1")
    ap.add_argument("--scale", action="store_true", help="1 worker against 2 (issue 18)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    from gasync.runtime.backends import choose

    job = Job(choose(args.backend), args.inputs, args.size)
    doc = scaling(job) if args.scale else against_single(job, args.workers)
    doc.update(backend=job.backend, inputs=len(job.stems), size=[args.size, args.size])
    print(json.dumps(doc, indent=1))
    if args.json:
        args.json.write_text(json.dumps(doc, indent=1) + "\n")
    return int(doc.get("cli_exit", 0) != 0 or doc.get("identical") is False)


if __name__ == "__main__":
    sys.exit(main())
