"""The planner's diagnostics: one class per kind of mistake, each with a span."""

from __future__ import annotations

from gasync.dsl.diagnostics import GasyncError


class PlanError(GasyncError):
    """Base of errors found by the planner."""


class DependentError(PlanError):
    """A use of an item whose own definition already failed: never shown, since the
    first error says what is wrong (as rustc's error recovery avoids cascades)."""


class NoTaskError(PlanError):
    """A program without a task: nothing would ever run."""


class UnknownNameError(PlanError):
    """A name that resolves to nothing in scope."""


class DuplicateNameError(PlanError):
    """Two items, parameters or bindings with one name."""


class TypeMismatchError(PlanError):
    """Types that do not agree, or an operation a type does not support."""


class ArityError(PlanError):
    """A call with the wrong number of arguments."""


class AwaitContextError(PlanError):
    """``.await`` outside an async fn, async block or task, or inside a parallel/bulk for."""


class FutureMisuseError(PlanError):
    """A future used as a value, or ``.await`` on something that is not a future."""


class ControlFlowError(PlanError):
    """break/continue outside a loop, return where none is allowed, a missing return."""


class ReadOnlyError(PlanError):
    """A write to a task local inside ``parallel for`` or ``bulk for``."""


class ConstEvalError(PlanError):
    """A value needed at compile time that is not a constant, or cannot be computed."""


class SizeLimitError(PlanError):
    """A buffer or channel larger than any device could hold."""


class DefineError(PlanError):
    """A ``-D NAME=value`` override for an unknown const or with a bad value."""


class RecursionError_(PlanError):
    """Recursion among async fns (or fns): frames would have no static size."""


class AfterCycleError(PlanError):
    """``after`` edges that form a cycle."""


class ChannelUseError(PlanError):
    """A channel that nobody sends on or nobody receives from."""


class ExternPathError(PlanError):
    """An ``extern fn`` path that is not ``dotted.module:name``."""


class ConcurrentWriteWarning(PlanError):
    """Two tasks that may run at once both write one buffer outside atomics."""

    severity = "warning"


class ConcurrentWriteError(ConcurrentWriteWarning):
    """The same, under ``--strict``."""

    severity = "error"
