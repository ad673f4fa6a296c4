"""Errors of a run: bad inputs, a deadlock, a timeout, a failed launch (exit status 1)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gasync.dsl.ast import NOSPAN, Span
from gasync.dsl.diagnostics import GasyncError, Note

if TYPE_CHECKING:
    from gasync.planner.model import Plan, TaskDef


class RunError(GasyncError):
    """Base of errors that happen when running a program; ``trace``: a traced run's
    ``RawTrace`` up to where it stopped (a deadlock, a timeout, a bounds fault), else None."""

    code = "E0309"
    trace: Any = None


class InputError(RunError):
    """A missing, unknown or mis-shaped --input, or an unreadable .npy file."""

    code = "E0301"


class BackendError(RunError):
    """The chosen backend cannot run here (no GPU, Numba missing, launch failed)."""

    code = "E0302"


class DeadlockError(RunError):
    """Unfinished tasks wait on something that nothing can wake."""

    code = "E0303"


class RunTimeoutError(RunError):
    """The run took longer than --timeout."""

    code = "E0304"


class DeviceError(RunError):
    """The kernel stopped on an internal limit (queue full, lanes lost)."""

    code = "E0305"


class BoundsError(RunError):
    """A buffer index out of bounds at run time: the first such access of the run, located
    at the index (:func:`bounds_error` words it).

    ``buffer``, ``shape``, ``dimension`` (1 or 2), ``index``, ``length`` (along that dimension),
    ``instance`` (``task w[3]``) and ``faults`` (the out-of-bounds accesses counted before the
    run stopped, this one included)."""

    code = "E0312"
    buffer, shape, dimension, index, instance, faults = "", (0,), 1, 0, "", 1

    @property
    def length(self) -> int:
        return self.shape[self.dimension - 1]


def bounds_error(
    buffer: str, shape: tuple[int, ...], dim: int, index: int, span: Span, instance: str, faults: int = 1
) -> BoundsError:
    """The error of index ``index`` outside dimension ``dim`` (0-based) of ``buffer``, met by
    ``instance`` at ``span`` (decision 40 of docs/language.md)."""
    along = f" along dimension {dim + 1}" if len(shape) > 1 else ""
    message = f"index out of bounds in {instance}: the length of '{buffer}'{along} is {shape[dim]}"
    message += f" but the index is {index}"
    more = faults - 1
    notes = ()
    if more > 0:
        counted = f"{more} more out-of-bounds access{'es were' if more > 1 else ' was'} counted before the run stopped"
        notes = (Note(counted),)
    err = BoundsError(message, span, notes)
    err.buffer, err.shape, err.dimension, err.index, err.instance, err.faults = (
        buffer, shape, dim + 1, index, instance, faults
    )  # fmt: skip
    return err


class ExternError(RunError):
    """An extern fn that cannot be used (the base of the three kinds below)."""

    code = "E0306"


class ExternImportError(ExternError):
    """An extern fn whose module does not import, or has no such name."""

    code = "E0306"


class ExternNotDeviceError(ExternError):
    """An extern fn that names something other than a CUDA device function."""

    code = "E0307"


class ExternSignatureError(ExternError):
    """An extern fn declared with parameters or a result its Python function does not have."""

    code = "E0308"


def worded(error: RunError, cli_message: str) -> RunError:
    """``error`` (in the Python API's words) with its message in the command line's words too."""
    error.cli_message = cli_message
    return error


def input_error(name: str, detail: str, span: Span = NOSPAN) -> RunError:
    """A problem with the input for buffer ``name``: ``inputs['x']: ...``, and ``--input x: ...`` in the
    CLI; ``span``: the buffer's declaration, where the program has one."""
    return worded(InputError(f"inputs['{name}']: {detail}", span), f"--input {name}: {detail}")


def instances_label(task: str, count: int, ks: list[int]) -> str:
    """How a deadlock report names some instances of a task: ``w`` for a single one, ``w[1, 3]``,
    and past eight the first eight and how many in all: ``w[0, 1, 2, 3, 4, 5, 6, 7, ... (600 in all)]``."""
    if count == 1:
        return task
    return f"{task}[{', '.join(map(str, ks[:8]))}{f', ... ({len(ks)} in all)' if len(ks) > 8 else ''}]"


def members_label(plan: Plan, task: TaskDef, ks: list[int]) -> str:
    """How a report names instances ``ks`` of ``task`` (its places among them, from 0): as
    ``instances_label``, but a group's task by its place in its group instance and that
    instance by the group's index, ``compute[1] in group pipe[2]`` (not ``compute[7]``)."""
    group = plan.group_of(task)
    if group is None:
        return instances_label(task.name, task.count, ks)
    per = max(task.per_copy, 1)
    by: dict[int, list[int]] = {}
    for k in ks:
        by.setdefault(group.start + k // per, []).append(k % per)
    parts = [
        f"{instances_label(task.name, per, own)} in group {group.name}" + (f"[{g}]" if group.var is not None else "")
        for g, own in by.items()
    ]
    return ", ".join(parts[:8]) + (", ..." if len(parts) > 8 else "")
