"""The shortest path, in instructions, through a kernel's SASS between given addresses (no GPU).

Reads ``nvdisasm -c -g`` output (scripts/sass_waits.py says how to get a cubin without a GPU)
and walks its control flow: fall-through, branches to their labels (a predicated branch both
ways), nothing after an unpredicated EXIT or RET. ``A B [C ...]`` (hex addresses): the shortest
path from A through B (and C ...) in order; a waypoint forces the path through the branch the
steady state takes where the shortest one would not (B2's path from seeing a value to
publishing the reply: the sequence's compare, then the wait's success branch, then the publish's
exchange). Prints the count, and with ``--listing`` every instruction with its source line, so
that the count can be set against Nsight Compute's (scripts/ncu_path.py).

Usage::

    python3 scripts/sass_path.py K.sass 4130 5100 6230 [--listing]
    python3 scripts/sass_path.py K.sass --find 'EXCH|ISETP'   # addresses of matching instructions
"""

from __future__ import annotations

import argparse
import heapq
import re
import sys
from pathlib import Path

SOURCE = re.compile(r'\s*//## File "([^"]+)", line (\d+)')
INSTR = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
LABEL = re.compile(r"^(\.L_x_\d+):")
TARGET = re.compile(r"\(\s*(\.L_x_\d+)\s*\)")


def read(path: Path) -> tuple[dict[int, tuple[str, str, int]], list[int], dict[str, int]]:
    """Instructions by address (text, source file, line), their order, and the labels' addresses."""
    instrs: dict[int, tuple[str, str, int]] = {}
    order: list[int] = []
    labels: dict[str, int] = {}
    pending: list[str] = []
    source = ("?", 0)
    for raw in path.read_text().splitlines():
        if m := SOURCE.match(raw):
            source = (Path(m.group(1)).name, int(m.group(2)))
        elif m := LABEL.match(raw.strip()):
            pending.append(m.group(1))
        elif m := INSTR.match(raw):
            addr = int(m.group(1), 16)
            instrs[addr] = (m.group(2), *source)
            order.append(addr)
            labels.update((name, addr) for name in pending)
            pending = []
    return instrs, order, labels


def successors(addr: int, text: str, after: int | None, labels: dict[str, int]) -> list[int]:
    predicated = text.startswith("@")
    if "BRA.DIV" in text and after is not None:  # taken only by a split warp: the paths counted are converged
        return [after]
    if re.search(r"\bBRA\b", text) and (m := TARGET.search(text)):
        return [labels[m.group(1)], *([after] if predicated and after is not None else [])]
    if re.search(r"\b(EXIT|RET)\b", text) and not predicated:
        return []
    return [after] if after is not None else []


def shortest(src: int, dst: int, graph: dict[int, list[int]]) -> list[int] | None:
    dist, prev, queue = {src: 0}, {}, [(0, src)]
    while queue:
        d, a = heapq.heappop(queue)
        if a == dst:
            break
        if d > dist[a]:
            continue
        for b in graph[a]:
            if d + 1 < dist.get(b, sys.maxsize):
                dist[b], prev[b] = d + 1, a
                heapq.heappush(queue, (d + 1, b))
    if dst not in dist:
        return None
    path = [dst]
    while path[-1] != src:
        path.append(prev[path[-1]])
    return path[::-1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sass", type=Path)
    ap.add_argument("points", nargs="*", help="hex addresses: the start, waypoints, the end")
    ap.add_argument("--find", help="print the instructions whose text matches this regular expression")
    ap.add_argument("--listing", action="store_true")
    args = ap.parse_args()
    instrs, order, labels = read(args.sass)
    if args.find:
        for a in order:
            text, file, line = instrs[a]
            if re.search(args.find, text):
                print(f"{a:05x} {text[:72]:72} {file[:24]}:{line}")
        return 0
    after = dict(zip(order, order[1:], strict=False))
    graph = {a: successors(a, instrs[a][0], after.get(a), labels) for a in order}
    points = [int(p, 16) for p in args.points]
    if len(points) < 2:
        ap.error("give at least a start and an end address")
    path: list[int] = [points[0]]
    for src, dst in zip(points, points[1:], strict=False):
        leg = shortest(src, dst, graph)
        if leg is None:
            print(f"no path from {src:x} to {dst:x}")
            return 1
        path += leg[1:]
    print(f"{len(path)} instructions from {points[0]:x} to {points[-1]:x}")
    if args.listing:
        for a in path:
            text, file, line = instrs[a]
            print(f"{a:05x} {text[:72]:72} {file[:24]}:{line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
