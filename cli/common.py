"""Options that several commands share, as Typer annotations, and the planner's options from them."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from gasync.cli import params
from gasync.planner.model import PlanOptions


class Backend(StrEnum):
    cuda = "cuda"
    sim = "sim"
    auto = "auto"


class Color(StrEnum):
    auto = "auto"
    always = "always"
    never = "never"


class Executor(StrEnum):
    queue = "queue"
    spin = "spin"


FileArg = Annotated[Path, typer.Argument(help="A .gasync source file, or - for standard input.", show_default=False)]
DefineOpt = Annotated[
    list[str] | None,
    typer.Option(
        "-D", "--define", metavar="NAME=VALUE", click_type=params.DEFINE, callback=params.no_repeats,
        help="Override a const of the program (repeatable).", show_default=False,
    ),
]  # fmt: skip
StrictOpt = Annotated[bool, typer.Option("--strict", help="Treat concurrent-write warnings as errors.")]
UncheckedOpt = Annotated[
    bool,
    typer.Option(
        "--unchecked",
        help="Leave out the run-time bounds checks of buffer indices the compiler did not prove in range.",
    ),
]
QuietOpt = Annotated[
    bool, typer.Option("-q", "--quiet", help="Print only errors and warnings (and what --json asks for).")
]
VerboseOpt = Annotated[bool, typer.Option("-v", "--verbose", help="Also print compile phases and cache hits.")]
ColorOpt = Annotated[
    Color,
    typer.Option(
        "--color", envvar="GASYNC_COLOR",
        help="Colour diagnostics: auto (on a terminal, unless NO_COLOR is set), always or never.",
    ),
]  # fmt: skip
DiagnosticsJsonOpt = Annotated[
    bool, typer.Option("--json", help="Print the diagnostics as a JSON array on stdout (docs/diagnostics.md).")
]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Show the Python traceback of an internal error.")]
CacheDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--cache-dir", envvar="GASYNC_CACHE_DIR", metavar="DIR", show_default=False, click_type=params.Folder(),
        callback=params.a_folder,
        help="Where compiled programs are cached (default: $XDG_CACHE_HOME/gasync, else ~/.cache/gasync).",
    ),
]  # fmt: skip
CacheMaxOpt = Annotated[
    int,
    typer.Option(
        "--cache-max", envvar="GASYNC_CACHE_MAX", metavar="SIZE", click_type=params.Size(), show_default=False,
        help="Bound on the cache's size, e.g. 500MB, 2GiB (default: 1GiB); the oldest programs are evicted.",
    ),
]  # fmt: skip


# The options only `gasync run` has.
BackendOpt = Annotated[Backend, typer.Option("--backend", help="cuda, sim, or auto (cuda where a GPU is present).")]
InputOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--input", metavar="NAME=FILE.npy", click_type=params.INPUT, callback=params.no_repeats,
        help="Fill an `input` buffer from a .npy file (repeatable).", show_default=False,
    ),
]  # fmt: skip
OutputOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--output", metavar="NAME=FILE.npy", click_type=params.OUTPUT, callback=params.distinct_outputs,
        show_default=False,
        help="Save a buffer to a .npy file after the run (repeatable).",
    ),
]  # fmt: skip
SignalOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--signal", metavar="NAME=DELAY", click_type=params.SIGNAL, callback=params.no_repeats,
        help="Set a signal from the host that long after launch, e.g. stop=5ms, stop=0 (repeatable).",
        show_default=False,
    ),
]  # fmt: skip
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout, also when the run fails.")]
TimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--timeout", metavar="DURATION", click_type=params.Duration(), show_default=False,
        help=f"Bound the whole run, e.g. 10s, 500ms (units: {params.UNIT_WORDS}; at most a week).",
    ),
]  # fmt: skip
ExecutorOpt = Annotated[Executor, typer.Option("--executor", help="queue (wakers and a run queue) or spin (naive).")]
ExecutorsOpt = Annotated[
    int,
    typer.Option(
        "--executors", click_type=params.Count(), metavar="N",
        help=(
            "Warps that run tasks (0: the backend picks; never fewer than the largest group's warps, with"
            " a warning; at most what one launch holds; on the GPU, whole blocks of 4 warps, with a note)."
        ),
    ),
]  # fmt: skip
TraceOpt = Annotated[
    Path | None,
    typer.Option(
        "--trace", metavar="TRACE.json", click_type=params.FileToWrite(), show_default=False,
        help="Record every poll and wake; write a Perfetto trace.",
    ),
]  # fmt: skip
TraceEventsOpt = Annotated[
    int,
    typer.Option(
        "--trace-events", click_type=params.Count(), metavar="N",
        help="Events a traced run's device buffer holds (0: 262144); the events past it are dropped, and said so.",
    ),
]  # fmt: skip
ScheduleOpt = Annotated[
    Path | None,
    typer.Option(
        "--schedule", metavar="FILE.svg", click_type=params.FileToWrite(), show_default=False,
        help="Record the run; draw its schedule (.svg, .png, .pdf, .html or .dot).",
    ),
]  # fmt: skip
ReportOpt = Annotated[
    Path | None,
    typer.Option(
        "--report", metavar="REPORT.html", click_type=params.FileToWrite(), show_default=False,
        help="Record the run; write one self-contained HTML page (graph, timeline, profile, program).",
    ),
]  # fmt: skip


def plan_options(defines: list[Any] | None, strict: bool) -> PlanOptions:
    """The planner's options from ``-D NAME=VALUE`` pairs (checked by Click) and ``--strict``."""
    return PlanOptions(tuple((str(n), str(v)) for n, v in defines or []), strict)
