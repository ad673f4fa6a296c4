"""The Python API, which the CLI is a thin layer over.

    import gasync
    prog = gasync.compile("pipeline.gasync", defines={"N": 4096})
    result = prog.run(backend="cuda", inputs={"x": array})
    result.buffers["y"], result.shared["hits"], result.stats["kernel_ms"]
    traced = prog.run(backend="sim", trace=True)
    traced.trace (the RawTrace), traced.profile["main"].busy_us

Compiling parses, plans and generates code (no Numba import); running picks a
backend and launches. Errors in the program raise GasyncError subclasses
(``ErrorGroup`` for several) that ``gasync.dsl.render`` prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gasync.codegen import Generated, generate
from gasync.planner import Plan, PlanOptions, plan
from gasync.runtime.options import Result, RunOptions


@dataclass(frozen=True)
class Program:
    """A compiled program: its plan and generated Numba-CUDA source."""

    generated: Generated

    @property
    def plan(self) -> Plan:
        return self.generated.plan

    @property
    def source(self) -> str:
        return self.generated.source

    def run(
        self,
        backend: str = "auto",
        inputs: dict[str, Any] | None = None,
        timeout: float = 0.0,
        executors: int = 0,
        executor: str = "queue",
        cache_dir: str | None = None,
        signals: dict[str, float] | None = None,
        trace: bool = False,
    ) -> Result:
        """Run on ``backend`` ('auto', 'cuda' or 'sim'); ``timeout`` in seconds (0: none);
        ``signals`` sets each named signal from the host that many seconds after launch;
        ``trace`` records every poll and wake (``Result.trace``, ``Result.profile``)."""
        from gasync import runtime
        from gasync.pipeline import deep

        options = RunOptions(backend, dict(inputs or {}), timeout, executors, executor, cache_dir, dict(signals or {}))
        generated = self.generated
        if trace and not generated.trace:
            generated = deep(lambda: generate(self.plan, trace=True))
        return runtime.run(generated, options)


def compile_source(
    text: str, path: str = "<input>", defines: dict[str, Any] | None = None, strict: bool = False
) -> Program:
    """Compile program text."""
    from gasync.dsl import parse
    from gasync.pipeline import deep

    options = PlanOptions(tuple((k, _define_text(v)) for k, v in (defines or {}).items()), strict)
    return Program(deep(lambda: generate(plan(parse(text, path), options))))


def compile(path: str | Path, defines: dict[str, Any] | None = None, strict: bool = False) -> Program:  # noqa: A001
    """Compile a ``.gasync`` file."""
    from gasync.pipeline import deep, load

    program = load(path)
    options = PlanOptions(tuple((k, _define_text(v)) for k, v in (defines or {}).items()), strict)
    return Program(deep(lambda: generate(plan(program, options))))


def _define_text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)
