"""Errors of a reference run.

A deadlock is the runtime's own :class:`~gasync.runtime.errors.DeadlockError`,
with the same wording, so a test can expect one class from either executor.
"""

from __future__ import annotations

from gasync.runtime.errors import DeadlockError, RunError


class StepLimitError(RunError):
    """The run executed more statements (and loop turns) than its step limit allows."""

    code = "E0310"


__all__ = ["DeadlockError", "StepLimitError"]
