"""Differential testing at length: random programs on a backend against the reference interpreter.

Draws programs from tests/differential/programs.py with fresh randomness
(what ``HYPOTHESIS_PROFILE=explore`` gives the test suite), runs each on
``--backend`` and on ``gasync.reference``, and compares every buffer, shared
scalar and signal (tests/differential/compare.py says where floats may
differ). A program that differs is shrunk by Hypothesis to a smallest one
that differs the same way, and saved under ``--out`` with what differed;
then the search goes on, looking for other kinds of difference.

Usage: python scripts/differential.py [--backend sim|cuda] [--programs N] [--seed S]
           [--time-budget SECONDS] [--known-bugs [bulk_joins,nested_joins]] [--out DIR]

The summary's last line is ``programs N, differences D, kinds K``; the exit
status is 1 when anything differed. ``--time-budget`` bounds the whole run,
shrinking included (a shrink cut short saves the smallest program so far).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[0] = str(ROOT / "tests")  # not scripts/: this file's name would hide tests/differential/

from differential.compare import run_both  # noqa: E402
from differential.programs import DEFAULT_SHAPES, Program, Shapes, programs  # noqa: E402
from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402
from hypothesis.errors import Flaky  # noqa: E402


@dataclass
class Tally:
    programs: int = 0
    differences: int = 0
    found: list[tuple[str, Program, list[str]]] = field(default_factory=list)  # (kind, shrunk, what differed)


class Found(Exception):
    """Raised inside the property so that Hypothesis shrinks the program."""


class OutOfTime(Exception):
    """Raised inside the property once the time budget is spent: Hypothesis stops drawing (each
    later example then fails at once, so its shrinking runs no program). Returning instead let it
    draw the rest of ``max_examples``, which on the GPU ran past the caller's timeout (run 41)."""


def kind_of(diffs: list[str]) -> str:
    """What kind of difference: the error's class, or which values differed (not by how much)."""
    first = diffs[0]
    if " failed: " in first:
        return first.split(" failed: ", 1)[1].split(":", 1)[0]
    return "differ: " + ", ".join(sorted({d.split(":", 1)[0] for d in diffs}))


def check(program: Program, backend: str) -> list[str]:
    try:
        return run_both(program.text, program.inputs, backend)
    except Exception as exc:  # the reference or the compiler failed: report it as a difference
        return [f"reference or compiler failed: {type(exc).__name__}: {exc}"]


def search(args: argparse.Namespace, shapes: Shapes, tally: Tally, deadline: float, round_: int) -> bool:
    """One Hypothesis run: generate until a new kind of difference, then shrink it. False when done."""
    target: list[str] = []
    best: list[tuple[Program, list[str]]] = []

    @seed(args.seed * 1_000_003 + round_)
    @settings(
        max_examples=max(1, args.programs - tally.programs),
        phases=[Phase.generate, Phase.shrink],
        database=None,
        deadline=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
    )
    @given(programs(shapes))
    def probe(program: Program) -> None:
        if time.monotonic() > deadline:
            raise OutOfTime
        if not target and tally.programs >= args.programs:
            return
        if not target:
            tally.programs += 1
        diffs = check(program, args.backend)
        if not diffs:
            return
        kind = kind_of(diffs)
        if not target:
            tally.differences += 1
            if any(kind == k for k, _, _ in tally.found):
                return  # a kind already shrunk and saved
            target.append(kind)
            print(f"  program {tally.programs}: {kind}; shrinking", flush=True)
        if kind == target[0]:
            best[:] = [(program, diffs)]
            raise Found(kind)

    try:
        probe()
    except (Found, Flaky, OutOfTime):
        pass
    if best:
        tally.found.append((target[0], *best[0]))
        return True
    return False


def save(out: Path, k: int, kind: str, program: Program, diffs: list[str], backend: str) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    slug = re.sub(r"[^a-z0-9]+", "-", kind.lower()).strip("-")[:40]
    path = out / f"{k:03d}-{slug}.gasync"
    header = [f"// differential ({backend} vs reference): {kind}", *(f"//   {d}" for d in diffs)]
    if program.inputs:
        np.savez(path.with_suffix(".inputs.npz"), **program.inputs)
        header.append(f"// inputs: {path.with_suffix('.inputs.npz').name} ({', '.join(program.inputs)})")
    path.write_text("\n".join(header) + "\n" + program.text)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("sim", "cuda"), default="sim")
    parser.add_argument("--programs", type=int, default=2000, help="programs to draw (default 2000)")
    parser.add_argument("--seed", type=int, default=int(time.time()) % 100_000)
    parser.add_argument("--time-budget", type=float, default=3600.0, help="seconds for the whole run")
    parser.add_argument(
        "--known-bugs",
        nargs="?",
        const="bulk_joins,nested_joins",
        default="",
        help="also draw the shapes of known bugs: bulk_joins, nested_joins (default: both)",
    )
    parser.add_argument("--out", type=Path, default=Path("differential-failures"))
    args = parser.parse_args(argv)
    bugs = {b for b in args.known_bugs.split(",") if b}
    shapes = Shapes(**{f: True for f in bugs}) if bugs else DEFAULT_SHAPES
    start = time.monotonic()
    deadline = start + args.time_budget
    print(f"differential: backend {args.backend}, seed {args.seed}, {shapes}", flush=True)
    tally = Tally()
    round_ = 0
    while tally.programs < args.programs and time.monotonic() < deadline:
        if not search(args, shapes, tally, deadline, round_):
            break
        round_ += 1
    for k, (kind, program, diffs) in enumerate(tally.found, 1):
        print(f"  saved {save(args.out, k, kind, program, diffs, args.backend)}: {kind}")
    elapsed = time.monotonic() - start
    print(f"programs {tally.programs}, differences {tally.differences}, kinds {len(tally.found)} ({elapsed:.0f}s)")
    return 1 if tally.differences else 0


if __name__ == "__main__":
    sys.exit(main())
