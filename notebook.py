"""Notebooks: ``%load_ext gasync``, then a ``%%gasync`` cell compiles and runs the cell's program.

    %%gasync --backend sim -D N=64 --input x=my_array --timeout 10s
    buffer x: f32[64] = input;
    ...

The options are the command line's (``-D``, ``--backend``, ``--timeout``,
``--signal``, ``--executors``, ``--unchecked``), checked by the same Click types, and
``--input NAME=VARIABLE`` takes an array from the notebook's namespace. ``--check``
only compiles; ``--as NAME`` stores the Program (with ``--check``) or the Result
in the namespace; ``--no-graph`` leaves out the task graph. The cell prints the
program's warnings (a race, an unused variable) as ``gasync check`` does, shows the
task graph (``Program._repr_svg_``) and the result table (``Result._repr_html_``),
and returns the Result. A mistake (a bad option, an error in the program, a failed
run) prints its diagnostic, with its code, and no Python traceback.

IPython is an optional dependency (``pip install gasync[notebook]``): this module
imports it only inside the functions IPython calls.
"""

from __future__ import annotations

import html
import shlex
from collections.abc import Sequence
from typing import Any

import click

from gasync.cli import params
from gasync.cli.summary import fmt_value
from gasync.dsl.diagnostics import ErrorGroup, GasyncError, render

CELL_PATH = "<cell>"
SHOWN_VALUES = 6


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext gasync``: register the ``%%gasync`` cell magic."""
    ipython.register_magic_function(_magic(ipython), magic_kind="cell", magic_name="gasync")


def _magic(ipython: Any) -> Any:
    def gasync(line: str, cell: str) -> Any:
        return run_cell(line, cell, ipython.user_ns)

    gasync.__doc__ = __doc__
    return gasync


@click.command(name="%%gasync", add_help_option=False, help="Compile and run the cell's program.")
@click.option(
    "--backend",
    type=click.Choice(["auto", "cuda", "sim"]),
    default="auto",
    help="Where to run (auto: cuda where a GPU is present, else sim).",
)
@click.option(
    "-D",
    "--define",
    "defines",
    type=params.DEFINE,
    multiple=True,
    callback=params.no_repeats,
    help="Set a const: NAME=VALUE.",
)
@click.option(
    "--input",
    "inputs",
    type=params.Pair("input", example="NAME=VARIABLE"),
    multiple=True,
    help="Fill an input buffer from the notebook's VARIABLE: NAME=VARIABLE.",
)
@click.option(
    "--signal",
    "signals",
    type=params.SIGNAL,
    multiple=True,
    callback=params.no_repeats,
    help="Set a signal from the host after a delay: NAME=5ms.",
)
@click.option("--timeout", type=params.Duration(), default=None, help="Bound the whole run, e.g. 10s, 500ms.")
@click.option("--executors", type=params.Count(), default=0, help="Warps that run tasks (0: the backend picks).")
@click.option("--strict", is_flag=True, help="Treat concurrent-write warnings as errors.")
@click.option("--unchecked", is_flag=True, help="Leave out the run-time bounds checks.")
@click.option("--check", "check_only", is_flag=True, help="Only compile (and show the task graph).")
@click.option("--no-graph", is_flag=True, help="Leave out the task graph.")
@click.option(
    "--as", "store_as", default=None, metavar="NAME", help="Keep the Result (with --check, the Program) as NAME."
)
def _options(**kwargs: Any) -> dict[str, Any]:
    return kwargs


def run_cell(line: str, cell: str, namespace: dict[str, Any]) -> Any:
    """What ``%%gasync LINE`` does with ``cell``: the Result (None where something failed)."""
    from IPython.display import display

    try:
        args = shlex.split(line)
        if "--help" in args:  # the options, as `gasync run --help` lists the command line's
            print(_options.get_help(click.Context(_options, info_name="%%gasync")))
            return None
        opts = _options.main(args, standalone_mode=False)
        inputs = {name: _variable(namespace, name, var) for name, var in opts["inputs"]}
    except (click.UsageError, ValueError) as exc:
        message = exc.format_message() if isinstance(exc, click.UsageError) else str(exc)
        print(f"%%gasync: error: {message}")
        return None
    import gasync

    try:
        program = gasync.compile_source(cell, CELL_PATH, dict(opts["defines"]), opts["strict"])
        if program.plan.warnings:
            print("\n".join(render(w, CELL_PATH, cell, code=True) for w in program.plan.warnings))
        if not opts["no_graph"]:
            display(program)  # type: ignore[no-untyped-call]
        if opts["check_only"]:
            _store(namespace, opts["store_as"], program)
            return None
        result = program.run(
            backend=opts["backend"], inputs=inputs, timeout=opts["timeout"] or 0.0, executors=opts["executors"],
            signals=dict(opts["signals"]), checked=not opts["unchecked"],
        )  # fmt: skip
    except (GasyncError, ErrorGroup) as exc:
        errors = exc.errors if isinstance(exc, ErrorGroup) else [exc]
        print("\n".join(render(e, CELL_PATH, cell, code=True) for e in errors))
        return None
    except ValueError as exc:  # an option's value that Program.run refuses (more --executors than a launch holds)
        print(f"%%gasync: error: {exc}")
        return None
    _store(namespace, opts["store_as"], result)
    return result


def _variable(namespace: dict[str, Any], name: str, var: str) -> Any:
    if var not in namespace:
        raise ValueError(f"--input {name}={var}: the notebook has no variable named '{var}'")
    return namespace[var]


def _store(namespace: dict[str, Any], name: str | None, value: Any) -> None:
    if name:
        namespace[name] = value


def result_html(result: Any) -> str:
    """A Result as HTML tables: the buffers (shape, dtype, first values), shared scalars and signals, stats."""
    from gasync.runtime.outputs import to_host

    rows = []
    for name, arr in result.buffers.items():
        host = to_host(arr)
        flat = host.reshape(-1)
        first = ", ".join(fmt_value(v) for v in flat[:SHOWN_VALUES]) + (", ..." if flat.size > SHOWN_VALUES else "")
        rows.append((name, str(list(host.shape)), str(host.dtype), first))
    parts = [_table("buffers", ("name", "shape", "dtype", "first values"), rows)]
    scalars = [(k, fmt_value(v)) for k, v in result.shared.items()]
    scalars += [(f"signal {k}", "set" if v else "not set") for k, v in result.signals.items()]
    if scalars:
        parts.append(_table("shared scalars and signals", ("name", "value"), scalars))
    stats = [(k, str(result.stats[k])) for k in ("backend", "executors", "polls", "kernel_ms") if k in result.stats]
    parts.append(_table("stats", ("stat", "value"), stats))
    return "\n".join(parts)


def _table(title: str, head: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> str:
    esc = html.escape
    cells = "".join(f"<th>{esc(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><caption>{esc(title)}</caption><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>"
