"""What ``gasync map`` says when its runs are done: ``summary.json`` and the terminal's report
(each failed input's error, a table of the runs, the totals)."""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from gasync.cli.report import Reporter
from gasync.cli.source import Source
from gasync.dsl.diagnostics import GasyncError

TABLE_ROWS = 20  # inputs listed in the terminal's table; summary.json has them all


@dataclass
class Outcome:
    """What came back for one input: the worker's record, or the error."""

    stem: str
    given: dict[str, str]  # the files, as the user's patterns named them (for messages)
    files: dict[str, str]  # the same, absolute (what the workers read, and summary.json lists)
    record: dict[str, Any] | None = None
    error: BaseException | None = None


@dataclass
class Tally:
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.error is not None]


def summary_doc(label: str, workers: str, wall_s: float, tally: Tally) -> dict[str, Any]:
    """summary.json: the command's totals and one entry per input."""
    entries = []
    for o in tally.outcomes:
        if o.error is None:
            assert o.record is not None
            entries.append({"ok": True, **o.record})
        else:
            entries.append({"ok": False, "input": o.stem, "files": o.files, "error": _error_doc(o.error, label)})
    totals = [float(o.record["stats"]["total_s"]) for o in tally.outcomes if o.record is not None]
    return {
        "program": label,
        "workers": workers,
        # where the runs ran, from their stats: "sim", or each GPU's name and PCI address
        "devices": sorted({str(o.record["stats"].get("device", "")) for o in tally.outcomes if o.record is not None}),
        "inputs": len(tally.outcomes),
        "ok": len(tally.outcomes) - len(tally.failed),
        "failed": len(tally.failed),
        "wall_s": round(wall_s, 3),
        "run_s_median": round(statistics.median(totals), 4) if totals else None,
        "runs": entries,
    }


def _error_doc(err: BaseException, label: str) -> dict[str, Any]:
    if isinstance(err, GasyncError):
        from gasync.dsl.diagnostics import to_json

        return to_json(err.in_cli_words(), label)
    return {"code": None, "message": f"{type(err).__name__}: {err}"}


def report(rep: Reporter, src: Source, tally: Tally, doc: dict[str, Any], outdir: Path, as_json: bool) -> None:
    """Each failed input's error, then the totals (and a table of the inputs on a terminal)."""
    for o in tally.failed:
        files = ", ".join(f"{k}={v}" for k, v in o.given.items())
        print(f"gasync: input '{o.stem}' ({files}) failed:", file=sys.stderr)
        if isinstance(o.error, GasyncError):
            rep.diagnostics([o.error], src)
        else:
            assert o.error is not None
            rep.internal(o.error)
    if rep.verbosity > 0 and not as_json:
        _table(tally)
    n, failed = doc["inputs"], doc["failed"]
    median = f", {doc['run_s_median']:.3f} s a run (median)" if doc["run_s_median"] is not None else ""
    rep.say(
        f"mapped {src.label} over {n} input{'s' if n != 1 else ''} on {doc['workers']} in {doc['wall_s']:.1f} s"
        f"{median}: {n - failed} ok, {failed} failed; outputs and summary.json in {outdir}"
    )


def _table(tally: Tally) -> None:
    table = Table(title="runs", title_justify="left")
    for col in ("input", "worker", "kernel_ms", "total_s", "result"):
        table.add_column(col)
    for o in tally.outcomes[:TABLE_ROWS]:
        if o.record is not None:
            stats = o.record["stats"]
            table.add_row(
                o.stem, stats.get("worker", ""), str(stats.get("kernel_ms", "")), str(stats.get("total_s", "")), "ok"
            )
        else:
            code = getattr(o.error, "code", type(o.error).__name__)
            table.add_row(o.stem, "", "", "", f"failed ({code})")
    Console().print(table)
    if len(tally.outcomes) > TABLE_ROWS:
        print(f"... and {len(tally.outcomes) - TABLE_ROWS} more (summary.json lists every run)")
