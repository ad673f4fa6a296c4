"""Runtime: backends, buffers, launching the executor kernel, results.

``run(generated, options) -> Result`` picks the backend (``cuda`` where a GPU
is present, else ``sim``), checks inputs against the declarations, and runs
the generated module (backends.py, launch.py).
"""

from __future__ import annotations

from gasync.codegen import Generated
from gasync.runtime import backends
from gasync.runtime.buffers import check_inputs
from gasync.runtime.options import Result, RunOptions
from gasync.runtime.outputs import output_kind


def run(generated: Generated, options: RunOptions | None = None) -> Result:
    """Run a generated program and return its buffers, shared scalars, signals and stats."""
    options = options or RunOptions()
    output_kind(options.inputs, options.outputs)  # a bad `outputs` fails before the run
    check_inputs(generated.plan, options.inputs)
    return backends.run(generated, options)


__all__ = ["Result", "RunOptions", "run"]
