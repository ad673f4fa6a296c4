"""bench/results/summary.json: issue 11's headline figures, from a GPU run's results.

``{"commit", "gpu", "date", "benchmarks": {"B1": {"value", "unit", "goal", "baseline", ...}, ...}}``.
Each entry comes from the rows of one run (bench/run.py's results JSON), whose
values are already medians of the repetitions:

- a **time** entry (B1, B2, B2_same_sm, B2_group) is gasync's figure itself; its
  baseline is the best (lowest) of the rows it is compared with;
- a **ratio** entry (B4, B4_cap64, B5, B5a) is gasync's throughput divided by
  the best (highest) hand-written kernel of the same work in that run, and its
  baseline is the figure it was divided by (GB/s);
- a **time ratio** entry (B3) is gasync's time per step (its best variant's,
  chosen by suite2.b3 as the row "gasync best (...)") divided by the lowest
  time of its baselines (the hand-written persistent kernel): lower is better;
- B2b, B6 and B6_cached are gasync's own figures, with no baseline.

A figure that was not measured is ``null``, with a note saying why, never a
guess (``B2`` is null, with ``B2_CROSS_SM_MISSING``, only if a run has no
cross-SM row: suite2.CROSS_SM_RUN gives B2's two tasks two executors of one
warp each, and the row says which SMs ran them; ``B2_same_sm`` is the run in
one block).

Only bench/run.py on a GPU writes the file, and not for ``--quick`` runs
(their sizes are not the goals'). A run of some benchmarks (``--only``, as
scripts/gpu_check.sh does in parts) keeps the other entries of a summary of
the same commit and GPU; any other summary is replaced whole.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SUMMARY = HERE / "results" / "summary.json"
THROUGHPUT = ("numba grid-stride kernel", "numba per-warp contiguous kernel", "numba one thread per element")
PERSISTENT, GRAPH_WHILE = "hand-written persistent kernel", "CUDA graph WHILE loop"  # B3's peers' cases (suite2)


@dataclass(frozen=True)
class Headline:
    """One entry: which rows of a run give it (by case prefix) and its goal."""

    key: str
    label: str  # what the figure is, for the headline table
    bench: str
    gasync: str  # case prefix of gasync's row
    baselines: tuple[str, ...]  # case prefixes of the rows compared with; the best one is the baseline
    unit: str
    goal: str  # "<= 1", ">= 0.85", or "" for context only
    ratio: bool = False  # value = gasync / best baseline throughput; else gasync's own figure (lower is better)
    lower: bool = False  # with ratio: both are times, the best baseline the lowest (lower is better)
    missing: str = "not measured in this run"  # the note when gasync's row is absent


B2_CROSS_SM_MISSING = (
    "no cross-SM gasync figure yet: B2's two tasks run in one block (see B2_same_sm); "
    "suite2.CROSS_SM_RUN takes the run option that places them on different SMs"
)

LOADER = "loader + compute / best hand-written, channel capacity {}"
HEADLINES = (
    Headline(
        "B1",
        "ns per task, 1M tasks (queue executor)",
        "B1",
        "gasync queue, N=1,048,576",
        ("CUDA graph replay per node",),
        "ns/task",
        "<= 1",
    ),
    Headline(
        "B2",
        "us per hand-off across SMs",
        "B2",
        "gasync ping-pong hand-off, cross SM",
        ("hand-written ping-pong, cross SM",),
        "us/hand-off",
        "<= 0.3",
        missing=B2_CROSS_SM_MISSING,
    ),
    Headline(
        "B2_same_sm",
        "us per hand-off on one SM",
        "B2",
        "gasync ping-pong hand-off, same SM",
        ("hand-written ping-pong, same SM",),
        "us/hand-off",
        "< 0.3",
    ),
    Headline(
        "B2_group",
        "us per hand-off between two warps of a group (one block, local channels)",
        "B2",
        "group (two warps of one block, local channels): gasync ping-pong hand-off",
        ("hand-written ping-pong, same SM",),
        "us/hand-off",
        "< 0.3",
    ),
    Headline("B2b", "ns per await of a suspending fn", "B2b", "await chain of state machines", (), "ns/await", "<= 20"),
    Headline(
        "B3",
        "best gasync us/step / the hand-written persistent kernel's",
        "B3",
        "gasync best",
        (PERSISTENT,),
        "ratio",
        "<= 2.0",
        ratio=True,
        lower=True,
    ),
    Headline(
        "B4", LOADER.format(8), "B4", "gasync loader + compute, capacity 8,", THROUGHPUT, "ratio", ">= 0.85", True
    ),
    Headline(
        "B4_cap64", LOADER.format(64), "B4", "gasync loader + compute, capacity 64,", THROUGHPUT, "ratio", "", True
    ),
    Headline("B5", "`bulk for` / best hand-written", "B5", "gasync bulk for", THROUGHPUT, "ratio", ">= 0.95", True),
    Headline("B5a", "task array / best hand-written", "B5a", "gasync task array", THROUGHPUT, "ratio", ">= 0.9", True),
    Headline(
        "B7",
        "staged pipeline (group) / best hand-written",
        "B7",
        "gasync staged pipeline",
        THROUGHPUT,
        "ratio",
        ">= 0.9",
        True,
    ),
    Headline(
        "B8",
        "tiled matmul (group) / hand-written shared-memory kernel",
        "B8",
        "gasync tiled matmul",
        ("numba shared-memory tiled matmul",),
        "ratio",
        ">= 0.8",
        True,
    ),
    Headline("B6", "cold compile s, samples/stencil2d.gasync", "B6", "stencil2d cold: compile_s", (), "s", "<= 2"),
    Headline("B6_cached", "cached compile s (same cache dir)", "B6", "stencil2d cached: compile_s", (), "s", "<= 0.3"),
)
SAME_CODE = "the same generated code as with checks on"  # the start of suite.SAME_CODE
UNCHECKED = "unchecked: "  # suite.UNCHECKED: the case prefix of gasync's rows without run-time bounds checks
# measured with the checks on (the default) and off
CHECKED_PAIRS = ("B1", "B2", "B2_same_sm", "B4", "B5", "B5a", "B7", "B8")


def _checked_pair(h: Headline) -> tuple[Headline, Headline]:
    """``<key>_checked`` (the headline itself: checks on is the default) and ``<key>_unchecked``
    (the same figure of the program generated with ``checked=False``; context, no goal)."""
    on = replace(h, key=f"{h.key}_checked", label=f"{h.label}, bounds checks on")
    label = f"{h.label}, bounds checks off"
    off = replace(h, key=f"{h.key}_unchecked", label=label, gasync=UNCHECKED + h.gasync, goal="")
    return on, off


HEADLINES = (*HEADLINES, *(p for h in HEADLINES if h.key in CHECKED_PAIRS for p in _checked_pair(h)))
CHECKS_GOAL = 1.03  # the checked run may take at most 3% longer than the unchecked one
NO_BASELINE = "none: gasync's own figure"


def find(rows: list[dict[str, Any]], bench: str, prefix: str) -> dict[str, Any] | None:
    """The first row of ``bench`` whose case starts with ``prefix``."""
    return next((r for r in rows if r["bench"] == bench and r["case"].startswith(prefix)), None)


def best(rows: list[dict[str, Any]], bench: str, prefixes: tuple[str, ...], highest: bool) -> dict[str, Any] | None:
    """Of the rows matching any of ``prefixes``, the one with the highest (or lowest) value."""
    found = [r for r in rows if r["bench"] == bench and any(r["case"].startswith(p) for p in prefixes)]
    if not found:
        return None
    return (max if highest else min)(found, key=lambda r: float(r["value"]))


def met(value: float | None, goal: str) -> bool | None:
    """Whether ``value`` meets a goal written "<= 1", "< 0.3" or ">= 0.85"; None without both."""
    m = re.fullmatch(r"\s*(<=|>=|<|>)\s*([0-9.]+)\s*", goal)
    if value is None or m is None:
        return None
    op, limit = m.group(1), float(m.group(2))
    return {"<=": value <= limit, ">=": value >= limit, "<": value < limit, ">": value > limit}[op]


def entry(h: Headline, rows: list[dict[str, Any]], source: str, error: str = "") -> dict[str, Any]:
    """One benchmark's entry of the summary; ``error`` is the benchmark's failure in that run, if any."""
    # a throughput's gasync figure is its best configuration measured (B4: the compute tasks one
    # per executor of the instance-sized launch, or of the whole GPU); "case" says which
    gas = best(rows, h.bench, (h.gasync,), highest=True) if h.ratio and not h.lower else find(rows, h.bench, h.gasync)
    base = best(rows, h.bench, h.baselines, highest=h.ratio and not h.lower)
    value: float | None = None
    if gas is not None and (base is not None or not h.ratio):
        value = float(gas["value"]) / float(base["value"]) if h.ratio and base is not None else float(gas["value"])
    out: dict[str, Any] = {
        "value": value,
        "unit": h.unit,
        "goal": h.goal,
        "baseline": None if base is None else float(base["value"]),
        "baseline_unit": None if base is None else base["unit"],
        "baseline_case": None if base is None else base["case"],
        "case": None if gas is None else gas["case"],
        "met": met(value, h.goal),
        "source": source,
    }
    if h.key.endswith("_unchecked") and gas is not None:
        out["checks_left"] = _checks_left(gas.get("note", ""))
    if h.ratio and gas is not None:
        out["gasync"] = float(gas["value"])  # the throughput (or time) divided by the baseline
        out["gasync_unit"] = gas["unit"]
    if not h.baselines:
        out["baseline_note"] = NO_BASELINE
    if gas is None:
        out["note"] = f"failed: {error}" if error else h.missing
    elif value is None:
        out["note"] = "no hand-written kernel of the same work was measured in this run"
        out["note"] += f" ({error})" if error else ""
    return out


def _checks_left(note: str) -> str:
    """What an unchecked row's note (suite.checks_note) says the checked program tests at run time."""
    if SAME_CODE in note:
        return "none: the same code"
    m = re.search(r"tests (\d+) access sites", note)
    return f"{m.group(1)} access sites" if m else "not recorded"


def build(doc: dict[str, Any], source: str) -> dict[str, Any]:
    """The summary of one results document (bench/run.py's JSON) named ``source``."""
    info, errors = doc["machine"], doc.get("errors", {})
    return {
        "commit": info.get("commit", ""),
        "dirty": bool(info.get("dirty", False)),
        "gpu": info.get("gpu", ""),
        "date": info.get("date", ""),
        "reps": doc.get("reps"),
        "statistic": "median of the reps",
        "benchmarks": {h.key: entry(h, doc["rows"], source, errors.get(h.bench, "")) for h in HEADLINES},
    }


def merge(old: dict[str, Any] | None, new: dict[str, Any], ran: list[str]) -> dict[str, Any]:
    """``new``, keeping ``old``'s entries of the benchmarks this run did not run if ``old`` is of the same
    commit and GPU (a suite run in parts); else ``new`` alone."""
    same = old is not None and all(old.get(k) == new[k] for k in ("commit", "dirty", "gpu"))
    if not same or old is None:
        return new
    keep = {h.key for h in HEADLINES if h.bench not in ran and h.key in old.get("benchmarks", {})}
    merged = {k: (old["benchmarks"][k] if k in keep else v) for k, v in new["benchmarks"].items()}
    return {**new, "benchmarks": merged}


def session(docs: list[tuple[dict[str, Any], str]]) -> dict[str, Any]:
    """The summary of several runs of one session, oldest first (each a results document and its
    name): each benchmark's entry is from the newest run that ran it; an entry measured at
    another commit than the newest run's says which (``commit``), so that no figure passes for a
    measurement of code it was not measured on."""
    newest = build(*docs[-1])
    head = str(newest["commit"])
    benchmarks = dict(newest["benchmarks"])
    ran_newest = set(docs[-1][0].get("benchmarks") or {r["bench"] for r in docs[-1][0]["rows"]})
    for doc, source in reversed(docs[:-1]):
        ran = set(doc.get("benchmarks") or {r["bench"] for r in doc["rows"]})
        older = build(doc, source)
        for h in HEADLINES:
            if h.bench in ran and h.bench not in ran_newest and benchmarks[h.key].get("value") is None:
                entry_ = dict(older["benchmarks"][h.key])
                if older["commit"] != head:
                    entry_["commit"] = str(older["commit"])
                benchmarks[h.key] = entry_
        ran_newest |= ran
    return {**newest, "benchmarks": benchmarks}


def write_summary(doc: dict[str, Any], source: str, path: Path = SUMMARY) -> Path | None:
    """Write (or update) the summary from a results document; None for a ``--quick`` run, which writes none."""
    if doc.get("quick"):
        return None
    old = json.loads(path.read_text()) if path.exists() else None
    ran = doc.get("benchmarks") or sorted({r["bench"] for r in doc["rows"]} | set(doc.get("errors", {})))
    summary = merge(old, build(doc, source), list(ran))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary, indent=2) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    """``python3 bench/summary.py RESULTS.json ...`` (oldest first): write summary.json from a
    session's runs (session)."""
    paths = [Path(a) for a in (sys.argv[1:] if argv is None else argv)]
    if not paths:
        print("usage: bench/summary.py RESULTS.json ... (oldest first)", file=sys.stderr)
        return 2
    docs = [(json.loads(p.read_text()), _source(p)) for p in paths]
    SUMMARY.write_text(json.dumps(session(docs), indent=2) + "\n")
    print(f"wrote {_source(SUMMARY)}")
    return 0


def _source(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


if __name__ == "__main__":
    sys.exit(main())
