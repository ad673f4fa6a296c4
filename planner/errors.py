"""The planner's diagnostics: one class per kind of mistake, each with a span."""

from __future__ import annotations

import re

from gasync.dsl.diagnostics import GasyncError


def a_or_an(word: str) -> str:
    """``word`` with its indefinite article, as it is said: an i32, an f64, an async fn, a u32, a buffer."""
    return f"an {word}" if re.match(r"[aeio]|f\d", word) else f"a {word}"


def plural(n: int, word: str) -> str:
    """``n`` and ``word``, plural unless n is 1: 1 argument, 2 arguments, 0 values."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


class PlanError(GasyncError):
    """Base of errors found by the planner."""

    # errors of the same body that were found but not shown after this one (planner/recovery.py's
    # cap), for a summary that counts them
    not_shown = 0


class DependentError(PlanError):
    """A use of an item whose own definition already failed: never shown, since the
    first error says what is wrong (as rustc's error recovery avoids cascades)."""


class NoTaskError(PlanError):
    """A program without a task: nothing would ever run."""

    code = "E0201"


class UnknownNameError(PlanError):
    """A name that resolves to nothing in scope."""

    code = "E0202"


class DuplicateNameError(PlanError):
    """Two items, parameters or bindings with one name."""

    code = "E0203"


class TypeMismatchError(PlanError):
    """Types that do not agree, or an operation a type does not support."""

    code = "E0204"


class ArityError(PlanError):
    """A call with the wrong number of arguments."""

    code = "E0205"


class AwaitContextError(PlanError):
    """``.await`` outside an async fn, async block or task, or inside a parallel/bulk for."""

    code = "E0206"


class FutureMisuseError(PlanError):
    """A future used as a value, or ``.await`` on something that is not a future."""

    code = "E0207"


class ControlFlowError(PlanError):
    """break/continue outside a loop, return where none is allowed, a missing return."""

    code = "E0208"


class ReadOnlyError(PlanError):
    """A write to a task local inside ``parallel for`` or ``bulk for``."""

    code = "E0209"


class ConstEvalError(PlanError):
    """A value needed at compile time that is not a constant, or cannot be computed."""

    code = "E0210"


class IndexBoundsError(PlanError):
    """A buffer index known at compile time that is outside the buffer."""

    code = "E0218"


class ReductionError(PlanError):
    """A reducing loop whose operator does not fit its value, or whose body gives no value."""

    code = "E0219"


class SizeLimitError(PlanError):
    """A buffer or channel larger than any device could hold."""

    code = "E0211"


class DefineError(PlanError):
    """A ``-D NAME=value`` override for an unknown const or with a bad value."""

    code = "E0212"


class RecursionError_(PlanError):
    """Recursion among async fns (or fns): frames would have no static size."""

    code = "E0213"


class AfterCycleError(PlanError):
    """``after`` edges that form a cycle."""

    code = "E0214"


class ChannelUseError(PlanError):
    """A channel that nobody sends on or nobody receives from."""

    code = "E0215"


class ExternPathError(PlanError):
    """An ``extern fn`` path that is not ``dotted.module:name``."""

    code = "E0216"


class ConcurrentWriteWarning(PlanError):
    """Two tasks that may run at once both write one buffer outside atomics."""

    code = "W0217"

    severity = "warning"


class ConcurrentWriteError(ConcurrentWriteWarning):
    """The same, under ``--strict``."""

    code = "E0217"

    severity = "error"


class UnusedWarning(PlanError):
    """An item, or a ``let``, that the program declares and never uses."""

    code = "W0218"

    severity = "warning"


class LocalScopeError(PlanError):
    """A group's local buffer or channel named outside that group."""

    code = "E0220"


class GroupFitError(PlanError):
    """A group instance that does not fit one CUDA block: too many warps or too much shared memory."""

    code = "E0221"


class GroupRuleError(PlanError):
    """A group's task that breaks a rule of groups: its own ``after``, or a ``bulk for``."""

    code = "E0222"
