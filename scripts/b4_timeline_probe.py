"""B4's run in time (bench/NOTES.md, the thirty-ninth session): when each tile starts and ends
inside the executors' span, from a traced run. Answers whether the span (~0.254 ms on an H100
against the hand-written kernel's 0.198) is a slow hand-out (the loader's sends spread the
tiles' starts over the run), a tail (a few tiles end late), or every tile simply taking longer.

B4's program as the bench runs it (N = 2^26 f32, tiles of 65,536, capacity 8, C compute tasks),
three untraced runs (kernel, span), then one traced run: per compute task, the poll that ran its
tile (its longest), and the loader's polls. Times are us from the trace's first event.

Usage on the device: python3 scripts/b4_timeline_probe.py [C] [--backend sim N]"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import baselines  # noqa: E402

import gasync  # noqa: E402
from gasync.runtime.trace import task_of  # noqa: E402


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * (len(xs) - 1) + 0.5))]


def spread(label: str, xs: list[float]) -> str:
    qs = ", ".join(f"p{int(q * 100)} {pct(xs, q):.1f}" for q in (0.0, 0.1, 0.5, 0.9, 0.99, 1.0))
    return f"{label} ({len(xs)}): {qs} us"


def main() -> None:
    args = sys.argv[1:]
    backend = "cuda"
    n = 1 << 26
    if "--backend" in args:
        k = args.index("--backend")
        backend, n = args[k + 1], int(args[k + 2])
        del args[k : k + 3]
    c = int(args[0]) if args else 1031
    tile = min(65536, n // 4)
    if backend == "sim":
        baselines._sm_count = lambda: 1  # (the simulator has no SM count)
    prog = gasync.compile(ROOT / "bench/programs/b4_loader.gasync", defines={"N": n, "TILE": tile, "C": c, "CAP": 8})
    x, y = baselines.device_input(n)
    inputs = {"x": x, "y": y}
    for _ in range(3 if backend == "cuda" else 0):
        st = prog.run(backend=backend, inputs=inputs).stats
        print(
            f"untraced: kernel {st['kernel_ms']} ms, span {st.get('span_ms')} ms, launch call {st.get('launch_ms')} ms"
        )
    baselines.fill(y, -1.0)
    res = prog.run(backend=backend, inputs=inputs, trace=True, trace_events=1 << 16)
    baselines.check_affine(res.buffers["x"], res.buffers["y"], "b4 timeline")
    st = res.stats
    print(f"traced: kernel {st['kernel_ms']} ms, span {st.get('span_ms')} ms; {c} compute tasks, {n // tile} tiles")
    raw = res.trace
    origin = raw.origin
    loader: list[tuple[float, float]] = []
    polls: dict[int, list[tuple[float, float]]] = {}
    for _kind, _ex, inst, _a, _b, t0, t1, _c in raw.polls():
        a, b = (t0 - origin) / 1e3, (t1 - origin) / 1e3
        if task_of(raw, inst) == "loader":
            loader.append((a, b))
        else:
            polls.setdefault(inst, []).append((a, b))
    # a tile runs between two polls of its compute task (the fork's, and the one after the
    # parallel loop: the executor runs the loop outside any poll), and a compute task is polled
    # again for nothing else (a counted channel's take never waits): each gap is a tile
    tiles = []
    for seq in polls.values():
        seq.sort()
        tiles += [(seq[k][1], seq[k + 1][0]) for k in range(len(seq) - 1)]
    first, last = min(a for a, _ in loader), max(b for _, b in loader)
    print(f"loader: {len(loader)} polls, first start {first:.1f}, last end {last:.1f} us")
    print(spread("a tile starts (its task's poll before it ends)", [a for a, _ in tiles]))
    print(spread("... ends (its task's poll after it starts)", [b for _, b in tiles]))
    print(spread("... lasts", [b - a for a, b in tiles]))
    ends = [b for seq in polls.values() for _, b in seq] + [b for _, b in loader]
    span = st.get("span_ms")
    tail = f"; the span ({span} ms) ends {span * 1e3 - max(ends):.1f} us after it" if span else ""
    print(f"the last poll ends at {max(ends):.1f} us{tail} (the span starts before the trace's first event)")
    print(f"{len(tiles)} tiles; {raw.dropped} events dropped")


if __name__ == "__main__":
    main()
