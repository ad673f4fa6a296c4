"""docs/performance.md's sections from bench/results/summary.json (bench/summary.py builds the
file): the headline table of issue 11's goals and what the run-time bounds checks cost."""

from __future__ import annotations

from typing import Any

from summary import CHECKED_PAIRS, CHECKS_GOAL, HEADLINES


def fmt(v: float) -> str:
    if v != v:  # NaN
        return "nan"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.3g}"


def headline(summary: dict[str, Any] | None, name: str) -> list[str]:
    """The headline section of docs/performance.md from a summary (the content of ``name``), or its absence."""
    out = ["## Headline: issue 11's goals", ""]
    if summary is None:
        return out + [
            f"No `{name}` yet: bench/run.py writes it from a GPU run at the goals' sizes (not `--quick`). "
            "Until then no headline figure is stated; the results below are from earlier runs.",
            "",
        ]
    commit = str(summary.get("commit", ""))[:10] or "unknown"
    out += [
        f"From `{name}`: commit {commit}{' (dirty)' if summary.get('dirty') else ''}, {summary.get('gpu', '?')}, "
        f"{summary.get('date', '?')}; {summary.get('statistic', 'medians')} ({summary.get('reps', '?')} reps). "
        "Ratios are gasync's throughput over the best hand-written kernel of the same work in the same run; "
        "B3's is gasync's best time per step over the hand-written persistent kernel's (lower is better)."
        + (
            ' A figure marked "at" a commit is from an earlier run of the session, at that commit '
            "(`bench/summary.py` RESULTS...: each benchmark from the newest run that ran it)."
            if any(e.get("commit") for e in summary.get("benchmarks", {}).values())
            else ""
        ),
        "",
        "| benchmark | figure | gasync | baseline | goal | met |",
        "| --- | --- | ---: | ---: | --- | --- |",
    ]
    labels = {h.key: h.label for h in HEADLINES}
    for key, e in summary.get("benchmarks", {}).items():
        out.append(
            f"| {key} | {labels.get(key, key)} | {_value(e)} | {_baseline(e)} | {e.get('goal') or ''} "
            f"| {_met(e.get('met'))} |"
        )
    return out + [""]


def checks_cost(summary: dict[str, Any] | None) -> list[str]:
    """docs/performance.md's table of each ``<key>_checked`` beside its ``<key>_unchecked``: the
    cost of the run-time bounds checks, as checked time / unchecked time (goal: within 3%)."""
    benchmarks = (summary or {}).get("benchmarks", {})
    keys = [k for k in CHECKED_PAIRS if f"{k}_checked" in benchmarks and f"{k}_unchecked" in benchmarks]
    if not keys:
        return []
    out = [
        "## Bounds checks on and off",
        "",
        "Each figure with the run-time bounds checks on (the default) and off (`checked=False`), in the same run; "
        f"the cost is the checked run's time over the unchecked one's (goal: at most {CHECKS_GOAL:g}, within 3%). "
        "Where the last column says the same code, the compiler proved every index and the two programs are one "
        "module: their gap is the run-to-run spread of that benchmark.",
        "",
        "| benchmark | checks on | checks off | cost | within 3% | run-time checks in the program |",
        "| --- | ---: | ---: | ---: | --- | --- |",
    ]
    for k in keys:
        on, off = benchmarks[f"{k}_checked"], benchmarks[f"{k}_unchecked"]
        cost = _cost(on, off)
        within = "" if cost is None else ("met" if cost <= CHECKS_GOAL else "**not met**")
        cost_text = "not measured" if cost is None else fmt(cost)
        left = off.get("checks_left", "not recorded")
        out.append(f"| {k} | {_value(on)} | {_value(off)} | {cost_text} | {within} | {left} |")
    return out + [""]


def _cost(on: dict[str, Any], off: dict[str, Any]) -> float | None:
    """Checked time / unchecked time: of the figures themselves for times, inverted for throughputs."""
    a, b = on.get("gasync", on.get("value")), off.get("gasync", off.get("value"))
    if a is None or b is None or not a or not b:
        return None
    throughput = on.get("gasync_unit") == "GB/s"
    return float(b) / float(a) if throughput else float(a) / float(b)


def _value(e: dict[str, Any]) -> str:
    if e.get("value") is None:
        note = e.get("note", "")
        return note if note.startswith("not measured") else f"not measured: {note}".rstrip(": ")
    text = fmt(e["value"]) if e["unit"] == "ratio" else f"{fmt(e['value'])} {e['unit']}"
    if "gasync" in e:
        text += f" ({fmt(e['gasync'])} {e.get('gasync_unit', '')})"
    if e.get("commit"):  # an earlier run's, at another commit (session)
        text += f", at {str(e['commit'])[:10]}"
    return text


def _baseline(e: dict[str, Any]) -> str:
    if e.get("baseline") is None:
        return e.get("baseline_note") or "not measured"
    return f"{fmt(e['baseline'])} {e.get('baseline_unit') or ''} ({e.get('baseline_case')})"


def _met(ok: bool | None) -> str:
    return "" if ok is None else ("met" if ok else "**not met**")
