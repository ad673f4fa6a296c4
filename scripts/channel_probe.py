"""Where B4's time goes: the loader's hand-outs alone, by receivers and capacity (issue 11).

``python3 scripts/channel_probe.py [--tiles 1024] [--json OUT]`` on the GPU. It runs
bench/programs/b4_loader.gasync with tiles of 32 elements (one per lane: the compute
is a few loads), so that the kernel's time is the loader's 1,024 sends and their
receives, for C compute tasks in {1, 8, 64, 515} and capacities {8, 64, 1024}; each
row is the median of 3 kernel times, in us per tile handed out, with the run's waits
in place and wakes. It reads: per-send cost with no one else on the channel's lines
(C = 1, capacity 1,024: the ring never fills), what a crowd of waiting receivers adds
(C up), and what the ring's turns add (capacity down). Results are checked (y = 2x + 1).

``--shape lone`` runs a lone sender and one lone receiver that sums what it gets (no
tickets, no fork: the pipeline's own rate); ``--shape crowd`` C ticket-taking receivers
that each store what they get (tickets, no fork: the crowd without the parallel for);
``--shape asleep`` the crowd, each receiver asleep for the first 100 us (the sender alone on
the GPU while its ring has room: with a capacity of N, kernel time less 0.1 ms is its own).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT.parent))  # the repository root is the package gasync

import gasync  # noqa: E402

PROGRAM = ROOT / "bench" / "programs" / "b4_loader.gasync"
TILE = 32
SHAPES = {
    "lone": """
const N: i64 = 1024;
const CAP: i64 = 8;
channel c: i64[CAP];
buffer out: i64[1] = zeros;
task s { for t in 0..N { c.send(t).await; } c.close(); }
task r { let acc: i64 = 0; for await v in c { acc += v; } out[0] = acc; }
""",
    "crowd": """
const N: i64 = 1024;
const CAP: i64 = 8;
const C: i64 = 4;
channel c: i64[CAP];
buffer out: i64[N] = zeros;
task s { for t in 0..N { c.send(t).await; } c.close(); }
task r for w in 0..C { for await v in c { out[v] = 2 * v; } }
""",
    "asleep": """
const N: i64 = 1024;
const CAP: i64 = 8;
const C: i64 = 4;
const S: u64 = 100000;
channel c: i64[CAP];
buffer out: i64[N] = zeros;
task s { for t in 0..N { c.send(t).await; } c.close(); }
task r for w in 0..C { sleep(S).await; for await v in c { out[v] = 2 * v; } }
""",
}


def probe_shape(shape: str, tiles: int, c: int, cap: int, reps: int = 3, backend: str = "cuda") -> dict[str, object]:
    """One of SHAPES: ``tiles`` values sent, ``c`` receivers (crowd), capacity ``cap``."""
    defines = {"N": tiles, "CAP": cap, **({"C": c} if shape != "lone" else {})}
    prog = gasync.compile_source(SHAPES[shape], f"<probe {shape}>", defines)
    res = prog.run(backend=backend, timeout=60.0)
    want = [tiles * (tiles - 1) // 2] if shape == "lone" else list(range(0, 2 * tiles, 2))
    if list(res.buffers["out"]) != want:
        raise AssertionError(f"{shape} C={c} capacity={cap}: out is wrong")
    return _timed(prog, {}, c if shape != "lone" else 1, cap, tiles, reps, backend)


def probe(tiles: int, c: int, cap: int, reps: int = 3, backend: str = "cuda") -> dict[str, object]:
    n = tiles * TILE
    prog = gasync.compile(PROGRAM, defines={"N": n, "TILE": TILE, "C": c, "CAP": cap})
    x = np.arange(n, dtype=np.float32)
    inputs = {"x": x, "y": np.full(n, -1.0, np.float32)}
    res = prog.run(backend=backend, timeout=60.0, inputs=inputs)
    if not np.array_equal(res.buffers["y"], 2 * x + 1):
        raise AssertionError(f"C={c} capacity={cap}: y != 2x + 1")
    return _timed(prog, inputs, c, cap, tiles, reps, backend)


def _timed(
    prog: gasync.Program, inputs: dict[str, Any], c: int, cap: int, tiles: int, reps: int, backend: str
) -> dict[str, object]:
    times: list[float] = []
    stats: dict[str, Any] = {}
    for _ in range(reps):
        stats = prog.run(backend=backend, timeout=60.0, inputs=inputs).stats
        times.append(float(stats["kernel_ms"]))
    ms = statistics.median(times)
    return {
        "compute_tasks": c,
        "capacity": cap,
        "tiles": tiles,
        "kernel_ms": ms,
        "us_per_tile": ms * 1e3 / tiles,
        "waits_in_place": stats.get("waits_in_place", 0),
        "wakes": stats["wakes"],
        "polls": stats["polls"],
        "executors": stats["executors"],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tiles", type=int, default=1024)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--backend", default="cuda", help="sim: tiny sizes, to try the script without a GPU")
    ap.add_argument("--compute", default="1,8,64,515", help="the counts of compute tasks, comma-separated")
    ap.add_argument("--capacities", default="8,64,1024")
    ap.add_argument("--shape", choices=("b4", *SHAPES), default="b4")
    args = ap.parse_args()
    rows = []
    for c in map(int, args.compute.split(",")):
        for cap in map(int, args.capacities.split(",")):
            if args.shape == "b4":
                row = probe(args.tiles, c, cap, backend=args.backend)
            else:
                row = probe_shape(args.shape, args.tiles, c, cap, backend=args.backend)
            rows.append(row)
            print(
                f"{args.shape} C={c:4d} capacity={cap:5d}: {row['us_per_tile']:.3f} us/tile "
                f"(kernel {row['kernel_ms']:.3f} ms; "
                f"{row['waits_in_place']} waits in place, {row['wakes']} wakes, {row['polls']} polls)",
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
