"""Fuzzing at scale: mutated programs through ``gasync check`` and ``gasync run`` (sim).

The inputs are the seed programs (samples, contract cases, programs of the
differential generator) and random mutations of them (tests/fuzzing/mutate.py).
``--check N`` of them go through ``gasync check`` in-process (the function the
console script calls, in a worker process), ``--cli N`` of those through the
real command in a subprocess, and ``--run N`` small ones through ``gasync run
--backend sim --timeout T`` with random inputs and host signals
(tests/fuzzing/harness.py). Each answer has a wall-clock limit. An input is a
defect when it prints a Python traceback, ends in an internal error, gives an
exit status gasync does not document, fails without a located message, or
does not answer in time (the harness's docstring lists the rules).

Usage: python scripts/fuzz.py [--check 10000] [--cli 100] [--run 500] [--seed S]
           [--timeout 2] [--limit 60] [--out fuzz-defects]

It prints a summary (inputs, outcomes by exit status and diagnostic code,
time) whose last line is ``inputs N, defects D``; every defect's input is
saved under ``--out`` with what was wrong. Exit status 1 when there is one.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[0] = str(ROOT / "tests")

from fuzzing.harness import Outcome, Worker, through_cli  # noqa: E402
from fuzzing.mutate import inputs, seeds  # noqa: E402


@dataclass
class Tally:
    inputs: Counter[str] = field(default_factory=Counter)  # by phase
    outcomes: Counter[tuple[str, int, str]] = field(default_factory=Counter)  # (phase, status, first code)
    defects: list[tuple[str, str, str, Outcome]] = field(default_factory=list)  # (phase, label, text, outcome)
    secs: Counter[str] = field(default_factory=Counter)

    keep: tuple[str, ...] = ()  # diagnostic codes whose inputs are saved too (--keep)
    kept: list[tuple[str, str, str, Outcome]] = field(default_factory=list)

    def add(self, phase: str, label: str, text: str, out: Outcome) -> None:
        if set(out.codes) & set(self.keep):
            self.kept.append((phase, label, text, out))
        self.inputs[phase] += 1
        self.secs[phase] += out.secs
        self.outcomes[(phase, out.status, out.codes[0] if out.codes else "-")] += 1
        if out.defect:
            self.defects.append((phase, label, text, out))
            print(f"DEFECT [{phase}] {label}: {out.defect}", file=sys.stderr)


def phase(
    tally: Tally, name: str, items: Iterable[tuple[str, str]], ask: Callable[[str, int], Outcome], every: int = 1000
) -> None:
    for k, (text, label) in enumerate(items):
        tally.add(name, label, text, ask(text, k))
        if (k + 1) % every == 0:
            print(f"  {name}: {k + 1} inputs, {len(tally.defects)} defects so far", file=sys.stderr)


def runnable(
    tally: Tally, worker: Worker, items: Iterable[tuple[str, str]], args: argparse.Namespace
) -> Iterator[tuple[str, str]]:
    """The first ``args.run`` of ``items`` that pass ``gasync check`` (checked and counted
    as check inputs on the way), so that every run input runs."""
    left = args.run
    for text, label in items:
        if left == 0:
            return
        out = worker.ask("check", text, args.limit)
        tally.add("check", label, text, out)
        if out.status == 0:
            left -= 1
            yield text, label


def fuzz(args: argparse.Namespace) -> Tally:
    rng = random.Random(args.seed)
    corpus = seeds(args.differential, args.seed)
    tally = Tally(keep=tuple(args.keep.split(",")) if args.keep else ())
    worker = Worker(keep_output=bool(args.keep))
    try:
        phase(tally, "check", inputs(corpus, rng, args.check), lambda t, k: worker.ask("check", t, args.limit))
        phase(
            tally,
            "cli",
            inputs(corpus, rng, args.cli, with_seeds=False),
            lambda t, k: through_cli(t, args.limit),
            every=50,
        )
        run = lambda t, k: worker.ask("run", t, args.limit, seed=args.seed * 100_003 + k, timeout_s=args.timeout)  # noqa: E731
        phase(tally, "run", runnable(tally, worker, inputs(corpus, rng, 50 * args.run, True), args), run, every=100)
    finally:
        worker.close()
    return tally


def save(found: list[tuple[str, str, str, Outcome]], out: Path, kind: str = "") -> None:
    out.mkdir(parents=True, exist_ok=True)
    for k, (name, label, text, o) in enumerate(found):
        stem = out / f"{kind}{k:04d}-{name}"
        stem.with_suffix(".gasync").write_text(text)
        stem.with_suffix(".txt").write_text(f"{label}\n{o.defect or o.codes}\nexit status {o.status}\n\n{o.output}")


def summary(tally: Tally, wall: float) -> str:
    lines = []
    for name in tally.inputs:
        lines.append(f"{name}: {tally.inputs[name]} inputs in {tally.secs[name]:.1f}s")
        rows = sorted((s, c, n) for (p, s, c), n in tally.outcomes.items() if p == name)
        lines += [f"  exit {s:>2} {c:<6} {n}" for s, c, n in rows]
    lines.append(f"wall time {wall:.1f}s")
    lines.append(f"inputs {sum(tally.inputs.values())}, defects {len(tally.defects)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--check", type=int, default=10_000, help="inputs through gasync check, in-process")
    p.add_argument("--cli", type=int, default=100, help="inputs through the real gasync check command")
    p.add_argument("--run", type=int, default=500, help="small inputs through gasync run on the simulator")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--differential", type=int, default=24, help="seed programs from the differential generator")
    p.add_argument("--timeout", type=float, default=2.0, help="gasync run's --timeout, seconds")
    p.add_argument("--limit", type=float, default=60.0, help="wall-clock limit of one answer, seconds")
    p.add_argument("--keep", default="", help="also save the inputs that give these codes, e.g. E0305,E0303")
    p.add_argument("--out", type=Path, default=Path("fuzz-defects"), help="where defects' inputs are saved")
    args = p.parse_args(argv)
    t0 = time.monotonic()
    tally = fuzz(args)
    print(summary(tally, time.monotonic() - t0))
    if tally.kept:
        save(tally.kept, args.out, "kept-")
    if tally.defects:
        save(tally.defects, args.out)
        print(f"defects' inputs saved under {args.out}/", file=sys.stderr)
    return 1 if tally.defects else 0


if __name__ == "__main__":
    sys.exit(main())
