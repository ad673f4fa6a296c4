"""The Python API, which the CLI is a thin layer over.

    import gasync
    prog = gasync.compile("pipeline.gasync", defines={"N": 4096})
    result = prog.run(backend="cuda", inputs={"x": array})
    result.buffers["y"], result.shared["hits"], result.stats["kernel_ms"]
    traced = prog.run(backend="sim", trace=True)
    traced.trace (the RawTrace), traced.profile["main"].busy_us
    prog.run(checked=False)   # no run-time bounds checks (with them, an index out of bounds is E0312)
    prog.map(client, [{"x": a}, {"x": b}])   # a Dask future per inputs dict (gasync.cluster)

Compiling parses, plans and generates code (no Numba import); running picks a
backend and launches. Errors in the program raise ``GasyncError`` subclasses
(``ErrorGroup`` for several): each carries its ``code``, ``path``, ``line`` and
``column``, its ``str()`` starts with ``path:line:col:``, ``diagnostic`` is the
JSON object ``gasync check --json`` prints, and ``gasync.dsl.render`` draws it
with the source line. Messages use the API's words (``inputs['x']``,
``defines['N']``, ``timeout``), not the command line's flags.

On a GPU, ``inputs`` may be device arrays (CuPy, PyTorch, Numba: anything with
``__cuda_array_interface__``); the buffers of the result are then device arrays
of the same library, with no copy through the host (``outputs``: see
``gasync.runtime.outputs``).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any, Literal, TypeVar

from gasync.codegen import Generated, generate
from gasync.dsl.diagnostics import ErrorGroup, GasyncError
from gasync.planner import Plan, PlanOptions, plan
from gasync.runtime.options import Result, RunOptions

Backend = Literal["auto", "cuda", "sim"]
Outputs = Literal["auto", "host", "device"]
T = TypeVar("T")


@dataclass(frozen=True, repr=False)
class Program:
    """A compiled program: its plan and generated Numba-CUDA source. In a notebook it
    shows its task graph."""

    generated: Generated
    options: PlanOptions = field(default=PlanOptions(), compare=False)  # the defines and --strict it was compiled with

    def __repr__(self) -> str:
        tasks = ", ".join(t.name for t in self.plan.tasks)
        return f"<gasync.Program {self.path!r}: tasks {tasks}>"

    def _repr_svg_(self) -> str | None:
        """The task graph as SVG (None, so that a notebook shows the repr, without Graphviz's dot)."""
        import graphviz

        from gasync.viz.taskgraph import task_graph

        try:
            return str(task_graph(self.plan).pipe(format="svg", encoding="utf-8"))
        except graphviz.ExecutableNotFound:
            return None

    @property
    def plan(self) -> Plan:
        return self.generated.plan

    @property
    def source(self) -> str:
        """The generated Numba-CUDA module's text."""
        return self.generated.source

    @property
    def path(self) -> str:
        return self.generated.plan.path

    def run(
        self,
        backend: Backend = "auto",
        inputs: Mapping[str, Any] | None = None,
        timeout: float = 0.0,
        executors: int = 0,
        executor: Literal["queue", "spin"] = "queue",
        cache_dir: str | None = None,
        signals: Mapping[str, float] | None = None,
        outputs: Outputs = "auto",
        trace: bool = False,
        warps_per_block: int = 0,
        checked: bool = True,
        trace_events: int = 0,
    ) -> Result:
        """Run on ``backend`` ('auto', 'cuda' or 'sim'); ``timeout`` in seconds (0: none);
        ``signals`` sets each named signal from the host that many seconds after launch;
        ``outputs``: 'host' for NumPy buffers, 'device' for device arrays, 'auto' for device
        arrays where an input was one (on a GPU; the simulator gives NumPy arrays);
        ``trace`` records every poll and wake (``Result.trace``, ``Result.profile``);
        ``warps_per_block`` shapes the GPU launch (0: 4 warps per block, or a program with groups
        its largest group's warps; 1: executors spread
        over SMs, which ``stats["sms"]`` lists);
        ``checked=False`` leaves out the run-time bounds checks of the buffer accesses that
        the compiler could not prove in range (an index out of bounds is then undefined);
        ``trace_events`` is the events a traced run's device buffer holds (0: 262144): past
        it events are dropped, and a ``RuntimeWarning`` says how many (``Result.trace.dropped``)."""
        from gasync import runtime
        from gasync.pipeline import deep

        with located(self.path):
            check_run_options(
                backend=backend, inputs=inputs, timeout=timeout, executors=executors, executor=executor,
                cache_dir=cache_dir, signals=signals, outputs=outputs, trace=trace, warps_per_block=warps_per_block,
                checked=checked, trace_events=trace_events,
            )  # fmt: skip
            _check_executors(backend, executors)
        options = RunOptions(
            backend,
            dict(inputs or {}),
            timeout,
            executors,
            executor,
            cache_dir,
            dict(signals or {}),
            outputs=outputs,
            warps_per_block=warps_per_block,
            **({"trace_capacity": trace_events} if trace_events else {}),
        )
        generated = self.generated
        if (trace and not generated.trace) or checked != generated.checked:
            generated = deep(lambda: generate(self.plan, trace=trace or generated.trace, checked=checked))
        with located(self.path):
            result = runtime.run(generated, options)
        if result.trace is not None and result.trace.dropped:
            import warnings

            warnings.warn(
                f"{self.path}: the trace is incomplete: {result.trace.dropped} "
                f"{'event was' if result.trace.dropped == 1 else 'events were'} dropped, as the device "
                f"buffer holds {result.trace.capacity}; run(trace_events=N) gives more room",
                RuntimeWarning,
                stacklevel=2,
            )
        return result

    def map(self, client: Any, inputs: Iterable[Mapping[str, Any]], **run_options: Any) -> list[Any]:
        """Run once per inputs dict on a Dask cluster: a ``distributed.Future`` per dict, in order,
        each giving the :class:`Result` that ``run(inputs=..., **run_options)`` would (a program's
        error: the same located ``GasyncError``). Each worker compiles the program once, from its
        text. See :mod:`gasync.cluster`."""
        from gasync.cluster import map_program

        return map_program(self, client, inputs, **run_options)


# a run's durations, as the command line's (cli/params.py): finite, from 0 to a week
MAX_SECONDS = 7 * 24 * 3600.0
MAX_WARPS_PER_BLOCK = 32  # a CUDA block holds at most 1024 threads


def check_run_options(
    *,
    inputs: Any = None,
    timeout: Any = 0.0,
    executors: Any = 0,
    executor: Any = "queue",
    cache_dir: Any = None,
    signals: Any = None,
    outputs: Any = "auto",
    trace: Any = False,
    warps_per_block: Any = 0,
    checked: Any = True,
    trace_events: Any = 0,
    backend: Any = "auto",
) -> None:
    """``Program.run``'s options, checked before anything runs: a wrong type is a ``TypeError``, a
    wrong value a ``ValueError``, each naming the argument, and an unknown backend the run's
    ``BackendError`` (E0302). ``Program.map`` and ``map_blocks`` check them on the client."""
    from gasync.runtime.outputs import OUTPUTS

    if not isinstance(backend, str) or backend not in ("auto", "cuda", "sim"):
        from gasync.runtime.errors import BackendError

        raise BackendError(f"unknown backend '{backend}': expected auto, cuda or sim")
    if inputs is not None and not isinstance(inputs, Mapping):
        raise TypeError(f"inputs: expected a dict of buffer name -> array, got {type(inputs).__name__}")
    _seconds("timeout", timeout)
    if signals is not None and not isinstance(signals, Mapping):
        raise TypeError(
            f"signals: expected a dict of signal name -> seconds after launch, got {type(signals).__name__}"
        )
    for name, delay in (signals or {}).items():
        _seconds(f"signals[{name!r}]", delay)
    _count("executors", executors)
    _count("trace_events", trace_events)
    if _count("warps_per_block", warps_per_block) > MAX_WARPS_PER_BLOCK:
        raise ValueError(
            f"warps_per_block={warps_per_block}: a CUDA block holds at most {MAX_WARPS_PER_BLOCK} warps (1024 threads)"
        )
    if executor not in ("queue", "spin"):
        raise ValueError(f"executor={executor!r}: expected 'queue' or 'spin'")
    if outputs not in OUTPUTS:
        raise ValueError(f"outputs={outputs!r}: expected one of {', '.join(OUTPUTS)}")
    for name, flag in (("trace", trace), ("checked", checked)):
        if not isinstance(flag, bool) and type(flag).__name__ != "bool_":
            raise TypeError(f"{name}: expected True or False, got {type(flag).__name__}")
    if cache_dir is not None and (not isinstance(cache_dir, str | PathLike) or str(cache_dir) == ""):
        raise ValueError(f"cache_dir={cache_dir!r}: expected a directory's path (None: the default cache)")


def _seconds(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a number of seconds, got {type(value).__name__} {value!r}")
    seconds = float(value)
    if not math.isfinite(seconds) or not 0 <= seconds <= MAX_SECONDS:
        raise ValueError(f"{name}={value!r}: expected seconds from 0 to a week ({MAX_SECONDS:.0f})")
    return seconds


def _count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__} {value!r}")
    if value < 0:
        raise ValueError(f"{name}={value}: expected 0 or more (0: the default)")
    return int(value)


def _check_executors(backend: str, executors: int) -> None:
    """No more executors than one launch holds (the command line's --executors limit)."""
    from gasync.cli.limits import max_executors
    from gasync.runtime.backends import choose

    if executors:
        most, why = max_executors(choose(backend))
        if executors > most:
            raise ValueError(f"executors={executors}: one launch holds at most {most} executors here ({why})")


def compile_source(
    text: str, path: str = "<input>", defines: Mapping[str, Any] | None = None, strict: bool = False
) -> Program:
    """Compile program text; ``path`` names it in diagnostics. ``strict`` makes the concurrent-write
    warning (W0217) an error; the others (W0218, unused items) stay in ``Program.plan.warnings``."""
    from gasync.dsl import parse
    from gasync.pipeline import deep

    if not isinstance(text, str):
        raise TypeError(f"text: expected the program's text as a str, got {type(text).__name__}")
    options = _options(defines, strict)
    return _compiled(path, options, lambda: deep(lambda: generate(plan(parse(text, path), options))))


def compile(path: str | Path, defines: Mapping[str, Any] | None = None, strict: bool = False) -> Program:  # noqa: A001
    """Compile a ``.gasync`` file (``strict`` as for :func:`compile_source`)."""
    from gasync.pipeline import deep, load

    options = _options(defines, strict)
    return _compiled(str(path), options, lambda: deep(lambda: generate(plan(load(path), options))))


def _compiled(path: str, options: PlanOptions, build: Callable[[], Generated]) -> Program:
    with located(path):
        return Program(build(), options)


@contextmanager
def located(path: str) -> Iterator[None]:
    """Errors raised inside name ``path`` (unless they name a file already)."""
    try:
        yield
    except ErrorGroup as group:
        for err in group.errors:
            err.path = err.path or path
        group.path = group.path or path
        raise
    except GasyncError as err:
        err.path = err.path or path
        raise


def _options(defines: Mapping[str, Any] | None, strict: bool) -> PlanOptions:
    if defines is not None and not isinstance(defines, Mapping):
        raise TypeError(f"defines: expected a dict of const name -> value, got {type(defines).__name__}")
    return PlanOptions(tuple((k, define_text(v)) for k, v in (defines or {}).items()), strict)


def define_text(v: Any) -> str:
    """A define's value as the planner reads it (`-D` text)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)
