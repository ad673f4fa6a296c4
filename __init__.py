"""gasync: async/await for GPUs.

The compiler's path, one stage per folder:
``dsl.parse(text, path) -> Program`` then ``planner.plan(program, options) ->
Plan`` then ``codegen.generate(plan) -> Generated`` then
``runtime.run(generated, ...)``. :mod:`gasync.pipeline` chains them.

The public API (:mod:`gasync.api`): :func:`compile`, :func:`compile_source`,
:class:`Program`, :class:`Result`, and the errors :class:`GasyncError` and
:class:`ErrorGroup`. Importing gasync imports neither Numba nor the compiler.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

    from gasync.api import Program
    from gasync.dsl.diagnostics import ErrorGroup, GasyncError
    from gasync.runtime.options import Result

__version__ = "0.1.0"
__all__ = ["ErrorGroup", "GasyncError", "Program", "Result", "compile", "compile_source", "load_ipython_extension"]


def compile(path: str | Path, defines: Mapping[str, Any] | None = None, strict: bool = False) -> Program:  # noqa: A001
    """Compile a ``.gasync`` file into a runnable :class:`gasync.api.Program`."""
    from gasync.api import compile as _compile

    return _compile(path, defines, strict)


def compile_source(
    text: str, path: str = "<input>", defines: Mapping[str, Any] | None = None, strict: bool = False
) -> Program:
    """Compile program text into a runnable :class:`gasync.api.Program`."""
    from gasync.api import compile_source as _compile_source

    return _compile_source(text, path, defines, strict)


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext gasync``: the ``%%gasync`` cell magic (see :mod:`gasync.notebook`)."""
    from gasync.notebook import load_ipython_extension as load

    load(ipython)


def __getattr__(name: str) -> Any:
    # the classes, imported when first asked for, so `import gasync` stays cheap
    if name == "Program":
        from gasync.api import Program

        return Program
    if name == "Result":
        from gasync.runtime.options import Result

        return Result
    if name in ("GasyncError", "ErrorGroup"):
        from gasync.dsl import diagnostics

        return getattr(diagnostics, name)
    raise AttributeError(f"module 'gasync' has no attribute {name!r}")
