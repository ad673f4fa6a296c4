"""What a long command shows while it works: a spinner with the phase and its elapsed time,
or a bar of the inputs done (``gasync map``: ``Bar``).

The spinner is drawn on stderr only on a terminal, only after a second (a quick
command shows nothing), and never with ``-q``. Numba's own warnings (performance
hints about the grid size or host arrays, deprecations) concern code gasync
generated, so the user can act on none of them: they are silenced unless ``--debug``.
"""

from __future__ import annotations

import importlib
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console

SPINNER_DELAY_S = 1.0


class Phases:
    """The current phase and when it began, rendered by Rich on every refresh."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.phase = "starting"
        self.started = time.perf_counter()
        self.phase_started = self.started

    def enter(self, phase: str) -> None:
        self.phase = phase
        self.phase_started = time.perf_counter()

    def text(self, now: float | None = None) -> str:
        now = time.perf_counter() if now is None else now
        return f"{self.label}: {self.phase} ({now - self.phase_started:.1f} s, {now - self.started:.1f} s in all)"

    def __rich__(self) -> str:
        return self.text()


@contextmanager
def spinner(phases: Phases, enabled: bool) -> Iterator[Phases]:
    """Show ``phases`` in a spinner on a terminal, after SPINNER_DELAY_S, when ``enabled``."""
    console = Console(stderr=True)
    if not enabled or not console.is_terminal:
        yield phases
        return
    status = console.status(phases)
    timer = threading.Timer(SPINNER_DELAY_S, status.start)
    timer.start()
    try:
        yield phases
    finally:
        timer.cancel()
        status.stop()


def compiled_line(seconds: float, cached: bool) -> str:
    """The line after a run: how long compiling took, and whether the kernel came from the cache."""
    return f"compiled in {seconds:.2f} s" + (" (cached)" if cached else "")


def silence_numba_warnings() -> None:
    """Ignore every Numba warning in this process (numba and numba-cuda each have their own classes)."""
    for module in ("numba.core.errors", "numba.cuda.core.errors"):
        try:
            errors = importlib.import_module(module)
        except ImportError:
            continue
        category = getattr(errors, "NumbaWarning", None)
        if isinstance(category, type) and issubclass(category, Warning):
            warnings.filterwarnings("ignore", category=category)


class Bar:
    """A Rich progress bar of inputs done (and failed), or nothing off a terminal."""

    def __init__(self, console: Console, enabled: bool, label: str, total: int) -> None:
        self.enabled, self.total, self.failed = enabled, total, 0
        self.progress: Any = None
        if enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.progress = Progress(
                TextColumn(f"{label}: [progress.description]{{task.description}}"), BarColumn(),
                MofNCompleteColumn(), TimeElapsedColumn(), console=console, transient=True,
            )  # fmt: skip
            self.task = self.progress.add_task("running", total=total)

    def __enter__(self) -> Any:
        if self.progress is not None:
            self.progress.start()
        return self.advance

    def advance(self, ok: bool) -> None:
        if self.progress is None:
            return
        self.failed += not ok
        words = f"running, {self.failed} failed" if self.failed else "running"
        self.progress.update(self.task, advance=1, description=words)

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()
