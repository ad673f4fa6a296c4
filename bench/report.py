"""Turn bench/results into docs/performance.md: ``python3 bench/report.py [results.json ...]``.

The page opens with the headline table of issue 11's goals, rendered from
bench/results/summary.json (summary.py; the table says so when there is no
such file), then the results of one run: the newest results file, or the
files given, merged (a suite run in parts, as scripts/gpu_check.sh does: a
later file's rows replace an earlier one's of the same benchmark). Every
figure comes from the JSON; a measurement that is missing (a benchmark not
run, failed, or a size a ``--quick`` run skips) is written "not run", never
guessed. bench/run.py calls :func:`write_report` at the end.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from lines import LINES, WHAT, Line
from summary import SUMMARY, best, find
from summary_page import checks_cost, fmt, headline

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
OUT = ROOT / "docs" / "performance.md"
NOT_RUN = "not run"
COMPILE_TIME = "compile-time"  # bench/compile_time.py's results (no GPU): a section of their own


def newest() -> Path:
    gpu_runs = (p for p in RESULTS.glob("*.json") if not p.name.startswith(COMPILE_TIME) and p != SUMMARY)
    files = sorted(gpu_runs, key=lambda p: p.stat().st_mtime)
    if not files:
        raise FileNotFoundError(f"no results in {RESULTS}: run bench/run.py first")
    return files[-1]


# Cases renamed since older results files were written, so that their rows still find their lines:
# v1's B2 ran 4 executors, one block of runtime/launch.py's WARPS_PER_BLOCK, so its two tasks shared one SM
# (docs/executor-v2.md 2.1); B4's channel had capacity 64 until the CAP define.
LEGACY = (
    ("B2", "gasync ping-pong hand-off", "gasync ping-pong hand-off, same SM"),
    ("B4", "gasync loader + compute, N=", "gasync loader + compute, capacity 64, N="),
)


def modern(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` with the LEGACY case names replaced (a whole old B2 name, or an old B4 prefix)."""
    out = []
    for r in rows:
        for bench, old, new in LEGACY:
            exact = not old.endswith("=")
            if r["bench"] == bench and (r["case"] == old if exact else r["case"].startswith(old)):
                r = {**r, "case": new + r["case"][len(old) :]}
        out.append(r)
    return out


def merged(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """One results document from runs of parts of the suite: a later one's rows replace an earlier one's
    of the same benchmark; the machine is the last one's, with every commit named if they differ."""
    rows: list[dict[str, Any]] = []
    errors: dict[str, str] = {}
    for doc in docs:
        ran = {r["bench"] for r in doc["rows"]} | set(doc.get("errors", {})) | set(doc.get("benchmarks", []))
        rows = [r for r in rows if r["bench"] not in ran] + list(doc["rows"])
        errors = {k: v for k, v in errors.items() if k not in ran} | dict(doc.get("errors", {}))
    machine = dict(docs[-1]["machine"])
    commits = list(dict.fromkeys(str(d["machine"].get("commit", "")) for d in docs))
    if len(commits) > 1:
        machine["commit"] = ", ".join(c[:10] for c in commits)
    return {**docs[-1], "machine": machine, "rows": rows, "errors": errors}


def _figure(row: dict[str, Any] | None, wanted: bool) -> str:
    if row is None:
        return NOT_RUN if wanted else ""
    return f"{fmt(row['value'])} {row['unit']}"


def _ratio(line: Line, gas: dict[str, Any] | None, base: dict[str, Any] | None, ratio_row: Any) -> tuple[Any, str]:
    """A line's ratio and how the table shows it."""
    if ratio_row is not None:
        return float(ratio_row["value"]), f"{fmt(ratio_row['value'])}{'x' if ratio_row['unit'] == 'x' else ''}"
    if gas is None or base is None or not (line.speedup or line.vs_limit or line.throughput):
        return None, NOT_RUN if (line.ratio or line.speedup or line.vs_limit or line.throughput) else ""
    if line.throughput:
        return float(gas["value"]) / float(base["value"]), fmt(float(gas["value"]) / float(base["value"]))
    if not _same_scale(gas, base) or float(gas["value"]) <= 0:
        return None, ""
    if line.speedup:
        r = float(base["value"]) / float(gas["value"])  # both in the same unit of time per item
        return r, f"{fmt(r)}x faster"
    r = float(gas["value"]) / float(base["value"])
    return r, f"{fmt(r)}x the limit"


def summarize(doc: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The results table's lines and the findings' sentences."""
    rows, errors = modern(doc["rows"]), doc.get("errors", {})
    table = [
        "| bench | case | gasync | baseline | ratio | goal | met |",
        "| --- | --- | ---: | ---: | ---: | --- | --- |",
    ]
    findings: list[str] = []
    for line in LINES:
        gas = find(rows, line.bench, line.gasync)
        base = best(rows, line.bench, line.baselines, highest=line.throughput)
        ratio, ratio_text = _ratio(line, gas, base, find(rows, line.bench, line.ratio) if line.ratio else None)
        met = ""
        name = f"{line.bench} ({line.label})"
        if gas is None:
            why = f"failed: {errors[line.bench]}" if line.bench in errors else line.missing
            if line.met is not None or line.bench in errors:
                findings.append(f"{name} {why}.")
            met = NOT_RUN if line.met is not None else ""
        elif line.met is not None:
            ok = line.met(float(gas["value"]), ratio)
            met = "met" if ok else "**not met**"
            shown = ratio_text if (line.ratio or line.throughput) else _figure(gas, True)
            if ok:
                findings.append(f"{name} met its goal ({line.goal}): {shown}.")
            else:
                findings.append(f"{name} missed its goal ({line.goal}): measured {shown}.")
        base_text = _figure(base, bool(line.baselines))
        if base is not None and len(line.baselines) > 1:
            base_text += f" ({base['case']})"
        table.append(
            f"| {line.bench} | {line.label} | {_figure(gas, True)} | {base_text} | {ratio_text} | {line.goal} | {met} |"
        )
    measured = {r["bench"] for r in rows}
    findings += [f"{bench} {msg}." for bench, msg in errors.items() if bench in measured]  # failed in part
    findings += _trace_findings(rows)
    return table, findings


def _same_scale(a: dict[str, Any], b: dict[str, Any]) -> bool:
    scale = {"ns/task": 1e-9, "us/hand-off": 1e-6, "us/node": 1e-6, "ns/node": 1e-9, "us/step": 1e-6}
    return a["unit"] in scale and scale.get(a["unit"]) == scale.get(b["unit"])


def _trace_findings(rows: list[dict[str, Any]]) -> list[str]:
    out = []
    for r in rows:
        if r["bench"] == "T1" and r["case"].startswith("trace on / off"):
            case = r["case"].removeprefix("trace on / off, ")
            out.append(f"Tracing ({case}) multiplies the time per task by {fmt(r['value'])} ({r['note']}).")
    return out


def render(
    doc: dict[str, Any], sources: list[Path], summary: dict[str, Any] | None, summary_path: Path = SUMMARY
) -> str:
    """The page: the headline table from ``summary`` (the content of ``summary_path``, or None), then the run."""
    info = doc["machine"]
    table, findings = summarize(doc)
    quick = doc.get("quick", False)
    names = ", ".join(f"`{_rel(p)}`" for p in sources)
    parts = [
        "# Performance",
        "",
        f"Generated by `bench/report.py`: the headline from `{_rel(summary_path)}`, the rest from {names}.",
        "",
        *headline(summary, _rel(summary_path)),
        *checks_cost(summary),
        "## The run",
        "",
        f"Measured {info.get('date', '?')} on "
        f"{info.get('gpu', '?')} ({info.get('sm_count', '?')} SMs, compute capability "
        f"{'.'.join(map(str, info.get('compute_capability', [])))}, driver {info.get('driver', '?')}, "
        f"CUDA runtime {info.get('cuda_runtime', '?')}), host {info.get('host', '?')}.",
        f"Software: numba {info.get('numba', '?')}, numba-cuda {info.get('numba_cuda', '?')}, "
        f"CuPy {info.get('cupy', '?')}, NumPy {info.get('numpy', '?')}, Python {info.get('python', '?')}; "
        f"commit {_commit(str(info.get('commit', '')))}{' (dirty)' if info.get('dirty') else ''}.",
        f"Each figure is the median of {doc.get('reps', '?')} runs, each benchmark measured beside its baseline "
        "in the same process; gasync times are the persistent kernel's launch + synchronisation "
        "(`kernel_ms`)." + (" **Quick run: smaller sizes than the goals are stated for.**" if quick else ""),
        "",
        "## What each benchmark measures",
        "",
        *[f"- **{b}**: {text}" for b, text in WHAT.items()],
        "",
        "## Results",
        "",
        *table,
        "",
        "## Findings",
        "",
        " ".join(findings) if findings else "No goals were measured in this run.",
        "",
        "## All measurements",
        "",
        "| bench | case | value | unit | goal | note |",
        "| --- | --- | ---: | --- | --- | --- |",
        *[
            f"| {r['bench']} | {r['case']} | {fmt(r['value'])} | {r['unit']} | {r['goal']} | {r['note']} |"
            for r in doc["rows"]
        ],
        *[f"| {name} | FAILED | | | | {msg} |" for name, msg in doc.get("errors", {}).items()],
        "",
    ]
    if "elapsed_s" in info:
        parts += [f"Suite wall time: {info['elapsed_s'].get('total', '?')} s.", ""]
    parts += compile_time_section(RESULTS / f"{COMPILE_TIME}.json")
    notes = Path(__file__).with_name("NOTES.md")  # hand-written analysis, kept across runs
    if notes.exists():
        parts += [notes.read_text().rstrip(), ""]
    return "\n".join(parts)


def compile_time_section(path: Path) -> list[str]:
    """`gasync check` (parse + plan) of large programs, from bench/compile_time.py (no GPU)."""
    if not path.exists():
        return []
    doc = json.loads(path.read_text())
    info = doc["machine"]
    load = info.get("load_average", ["?"])[0]
    out = [
        "## Compile time (`gasync check`, no GPU)",
        "",
        f"From `{_rel(path)}` (`bench/compile_time.py`, best of {doc.get('reps', '?')}): commit "
        f"{_commit(str(info.get('commit', '')))}{' (dirty)' if info.get('dirty') else ''}, {info.get('cpus', '?')} "
        f"CPUs, load average {load} while it ran. Goal: under {doc.get('goal_s', 2.0)} s each.",
        "",
        "| program | size | bytes | parse s | plan s | check s (wall) | check s (CPU) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in doc["rows"]:
        out.append(
            f"| {r['program']} | {r['size']:,} {r['unit']} | {r['bytes']:,} | {r['parse_s']:.2f} | {r['plan_s']:.2f} "
            f"| {r['check_s']:.2f} | {r['check_cpu_s']:.2f} |"
        )
    return [*out, ""]


def _rel(p: Path) -> str:
    try:
        return str(p.resolve().relative_to(ROOT))
    except ValueError:
        return str(p)


def write_report(sources: list[Path] | None = None, out: Path = OUT, summary: Path = SUMMARY) -> Path:
    """Write the page from ``sources`` (merged; default the newest results file) and ``summary`` if it exists."""
    sources = sources or [newest()]
    doc = merged([json.loads(p.read_text()) for p in sources])
    head = json.loads(summary.read_text()) if summary.exists() else None
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(doc, sources, head, summary))
    return out


def _commit(text: str) -> str:
    """A full hash shortened; a note naming several commits (results merged from runs) as it is."""
    if not text:
        return "unknown"
    return text[:10] if all(c in "0123456789abcdef" for c in text) else text


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    path = write_report([Path(a) for a in args] or None)
    print(f"wrote {_rel(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
