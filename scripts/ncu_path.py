"""Where a kernel's executed instructions go, by SASS address, from Nsight Compute's source page.

Reads the CSV of ``ncu --import R.ncu-rep --page source --csv --print-source cuda,sass`` (plain
or gzipped; gpu_check.sh's ``ncub2`` part writes one for B2), in which each source line of each
file is followed by the SASS instructions it became, each with its "Instructions Executed"
(warp-level). Prints, per ``--per`` units of work (B2: its hand-offs, twice the round trips):

- the warp instructions executed in all, and how they split by execution count: an
  instruction run exactly once a round trip is on a side's straight path, one run more often
  is in a loop (B2: the wait's spin turns);
- with ``--listing``, every instruction run at least ``--min`` times in address order, its
  count and the source line it came from (an inlined helper's file and line);
- the straight path's instructions (count within ``--tol`` of ``--path``) and their share of
  the warp state samples (where the warps spent their time) summed by the generated module's
  statement they belong to: the last generated line before them in address
  order, so that the helpers inlined into a statement count for it.

Usage::

    python3 scripts/ncu_path.py ncu-b2-src.csv.gz --per 40000 --path 20000 [--listing]
"""

from __future__ import annotations

import argparse
import collections
import csv
import gzip
import sys
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Instr:
    """One SASS instruction: its text, how often a warp executed it, the source lines it is under."""

    text: str
    count: int
    samples: int  # warp state samples at it (every reason, issued or not): where warps spent time
    sources: list[tuple[str, int, str]] = field(default_factory=list)


def read(path: Path) -> tuple[dict[int, Instr], str]:
    """The instructions by address, and the generated module's file name (the first file section)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", newline="") as f:
        rows = list(csv.reader(f))
    instrs: dict[int, Instr] = {}
    section = generated = ""
    column = sampled = -1
    source: tuple[str, int, str] | None = None
    for row in rows:
        if not row:
            continue
        if row[0] == "File Path":
            section = Path(row[1]).name
            generated = generated or section
            continue
        if row[0] == "Line No":
            column = row.index("Instructions Executed")
            sampled = row.index("Warp Stall Sampling (All Samples)")
            continue
        if column < 0 or (row[0] and not row[0].isdigit()):
            continue
        if row[0].isdigit():  # a source line; its SASS follows
            source = (section, int(row[0]), row[1].strip())
            continue
        try:
            addr = int(row[2], 16)
        except ValueError:  # an elided run of instructions ("...")
            continue
        ins = instrs.setdefault(addr, Instr(row[3].strip(), int(row[column] or 0), int(row[sampled] or 0)))
        if source:
            ins.sources.append(source)
    return instrs, generated


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", type=Path)
    ap.add_argument("--per", type=float, required=True, help="units of work the kernel did (B2: hand-offs)")
    ap.add_argument("--path", type=int, help="executions of a straight-path instruction (B2: round trips)")
    ap.add_argument("--tol", type=int, default=2, help="how far from --path a count may be")
    ap.add_argument("--min", type=int, default=1000, help="the listing's least count")
    ap.add_argument("--listing", action="store_true")
    args = ap.parse_args()
    instrs, generated = read(args.csv)
    total = sum(i.count for i in instrs.values())
    samples = sum(i.samples for i in instrs.values()) or 1
    print(f"{len(instrs)} instructions, {total:,} executed: {total / args.per:.1f} per unit; {samples:,} samples")
    by_count: collections.Counter[int] = collections.Counter(i.count for i in instrs.values())
    print("executed n times: sites, instructions per unit (the largest shares)")
    for n, k in sorted(by_count.items(), key=lambda nk: -nk[0] * nk[1])[:12]:
        print(f"  n = {n:>9,}: {k:5} sites, {n * k / args.per:7.1f} per unit")
    base = min(instrs)
    statement = ("", 0, "")  # the last generated line seen, in address order
    per_statement: dict[tuple[str, int, str], list[int]] = collections.defaultdict(lambda: [0, 0])
    for addr in sorted(instrs):
        ins = instrs[addr]
        own = [s for s in ins.sources if s[0] == generated]
        if own:
            statement = own[-1]
        if args.listing and ins.count >= args.min:
            src = ins.sources[-1] if ins.sources else ("?", 0, "")
            where = f"{src[0][:14]}:{src[1]} {src[2][:56]}"
            print(f"{addr - base:6x} {ins.count:9,} {ins.samples:6} {ins.text[:52]:52} {where}")
        if args.path is not None and abs(ins.count - args.path) <= args.tol:
            per_statement[statement][0] += 1
            per_statement[statement][1] += ins.samples
    if args.path is not None:
        on_path = sum(n for n, _ in per_statement.values())
        at = sum(k for _, k in per_statement.values())
        head = f"the straight path: {on_path} instructions run {args.path:,} +- {args.tol} times"
        print(f"\n{head}, {at / samples:.1%} of the samples; by generated statement (instructions, share of samples)")
        for (_, line, text), (n, k) in sorted(per_statement.items(), key=lambda kv: kv[0][1]):
            print(f"  {n:4} {k / samples:6.1%}  {line:>5}  {text[:84]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
