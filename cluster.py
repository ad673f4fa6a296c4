"""Past one process: a program run over many inputs on a Dask cluster.

    from distributed import Client
    import gasync
    prog = gasync.compile("samples/normalize.gasync")
    futures = prog.map(client, [{"img": a}, {"img": b}], backend="sim")
    results = client.gather(futures)       # gasync.Result each, as prog.run gives

    from gasync.cluster import map_blocks
    ldr = map_blocks("samples/tonemap.gasync", hdr, input="hdr", output="ldr")   # a dask.array

A task carries the program's text and compile options (a :class:`Recipe`), not
compiled code: each worker process compiles a recipe once and keeps it
(:func:`compiled`), so a worker pays the compile, then the kernel's (Numba's
cache on disk, the runtime's in memory), once. Each run is one Dask task with a
key made of its inputs, so a task that Dask runs again after its worker died
gives the same result under the same key: nothing is lost or counted twice. A
program's error on one input fails that input's future alone, with the located
``GasyncError`` itself, its traceback cut to the task's frame.

Dask is an optional dependency (``pip install 'gasync[dask]'``): this module
imports it where it is used, and says how to install it when it is missing.

(The module is ``gasync.cluster`` rather than ``gasync.dask``: the repository root
is the package, so a ``dask.py`` there would shadow Dask itself for a process
started in it with ``python -m``.)
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gasync.clusterchunks import chunk_shapes, dim_names, meta_like, out_buffer, out_chunks, shape_defines
from gasync.dsl.diagnostics import GasyncError
from gasync.runtime.errors import InputError

if TYPE_CHECKING:
    from gasync.api import Program
    from gasync.planner.model import Plan

INSTALL_HINT = "pip install 'gasync[dask]'"


class DaskMissingError(ImportError):
    """Dask (or distributed) is not installed."""


def require(module: str) -> Any:
    """``import module``, or an error that says how to install it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise DaskMissingError(f"running on a cluster needs Dask ({module} is not installed): {INSTALL_HINT}") from exc


@dataclass(frozen=True)
class Recipe:
    """What a worker needs to compile a program as the client did: its text, the path that names
    it in diagnostics, and the planner's options (``-D`` defines as text, ``--strict``)."""

    text: str
    path: str
    defines: tuple[tuple[str, str], ...] = ()
    strict: bool = False

    @classmethod
    def of(cls, program: Program) -> Recipe:
        return cls(program.plan.source, program.path, program.options.defines, program.options.strict)

    @classmethod
    def read(cls, path: str | Path, defines: Mapping[str, Any] | None = None, strict: bool = False) -> Recipe:
        """The recipe of a ``.gasync`` file (read here, on the client)."""
        from gasync.api import located
        from gasync.pipeline import read_program

        with located(str(path)):  # as gasync.compile reads it: `path: error[E0001]: no such file: path`
            text = read_program(path)
        return cls(text, str(path), _define_pairs(defines or {}), strict)

    def with_defines(self, more: Mapping[str, Any]) -> Recipe:
        """The same program with ``more`` defines (replacing any of the same name)."""
        given = dict(self.defines)
        given.update(_define_pairs(more))
        return Recipe(self.text, self.path, tuple(sorted(given.items())), self.strict)

    @property
    def digest(self) -> str:
        h = hashlib.sha256()
        for part in (self.text, self.path, repr(self.defines), repr(self.strict)):
            h.update(part.encode() + b"\0")
        return h.hexdigest()[:16]

    @property
    def stem(self) -> str:
        return Path(self.path).stem or "program"

    def plan(self) -> Plan:
        """Parse and plan only (no code generation, no Numba): what the client checks before submitting."""
        from gasync.api import located
        from gasync.dsl.parser import parse
        from gasync.pipeline import check_program, deep
        from gasync.planner.model import PlanOptions

        with located(self.path):
            return check_program(deep(parse, self.text, self.path), PlanOptions(self.defines, self.strict))


@functools.lru_cache(maxsize=32)
def compiled(recipe: Recipe) -> Program:
    """The recipe compiled, once per process (a worker's cache; keyed by the whole recipe)."""
    from gasync.api import compile_source

    return compile_source(recipe.text, recipe.path, dict(recipe.defines), recipe.strict)


def run_recipe(recipe: Recipe, inputs: Mapping[str, Any], options: Mapping[str, Any]) -> Any:
    """One run on a worker: the :class:`Result`, or the program's error raised bare."""
    try:
        result = compiled(recipe).run(inputs=inputs, **options)
    except GasyncError as err:
        raise bare(err) from None
    result.stats["worker"] = worker_address()
    return result


def bare(err: BaseException) -> BaseException:
    """The error without the frames of the compiler and runtime that raised it: it travels to the
    client as itself (its code, path, line and column), not as a long remote traceback."""
    err.__context__ = err.__cause__ = None
    return err.with_traceback(None)


def worker_address() -> str:
    """The Dask worker this runs in ("" outside one)."""
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return ""


def map_program(program: Program, client: Any, inputs: Iterable[Mapping[str, Any]], **run_options: Any) -> list[Any]:
    """``Program.map``: one future per inputs dict, in order (see the module's docstring)."""
    require("distributed")
    check_run_options(run_options, program.path)
    recipe = Recipe.of(program)
    from dask.base import tokenize

    if isinstance(inputs, Mapping):
        raise TypeError("inputs: expected a list of dicts, one per run (a dict of buffer name -> array each)")
    futures = []
    for i, given in enumerate(inputs):
        if not isinstance(given, Mapping):
            raise TypeError(f"inputs[{i}]: expected a dict of buffer name -> array, got {type(given).__name__}")
        key = f"gasync-{recipe.stem}-{i}-{tokenize(recipe.digest, dict(given), run_options)}"
        futures.append(client.submit(run_recipe, recipe, dict(given), dict(run_options), key=key))
    return futures


def check_run_options(options: Mapping[str, Any], path: str = "") -> None:
    """The options are ``Program.run``'s, with values it takes (a misspelt or wrong one fails here,
    not on every worker); ``path`` names the program in a ``GasyncError``."""
    from gasync.api import Program, located
    from gasync.api import check_run_options as check_values

    allowed = [p for p in inspect.signature(Program.run).parameters if p not in ("self", "inputs")]
    for name in options:
        if name not in allowed:
            raise TypeError(f"unknown run option '{name}' (Program.run takes {', '.join(allowed)})")
    with located(path):
        check_values(**options)  # their values too: a bad one fails here, once


def run_files(
    recipe: Recipe, files: dict[str, str], outdir: str, stem: str, outputs: tuple[str, ...], options: dict[str, Any]
) -> dict[str, Any]:
    """``gasync map``'s run of one input on a worker: its .npy files in, each output buffer to
    ``outdir/NAME/STEM.npy``; gives back what the summary keeps (the arrays stay in the files)."""
    from gasync.runtime.options import json_scalar
    from gasync.runtime.outputs import to_host

    t0 = time.perf_counter()
    try:
        inputs = {name: _reader().read(name, path) for name, path in files.items()}
    except GasyncError as err:
        raise bare(err) from None
    t1 = time.perf_counter()
    result = run_recipe(recipe, inputs, options)
    t2 = time.perf_counter()
    written = {}
    for name in outputs:
        path = Path(outdir) / name / f"{stem}.npy"
        save_npy(path, to_host(result.buffers[name]))
        written[name] = str(path)
    # where the input's time went: its files read, the run, its outputs written
    result.stats["read_s"] = round(t1 - t0, 5)
    result.stats["write_s"] = round(time.perf_counter() - t2, 5)
    return {
        "input": stem,
        "files": files,
        "outputs": written,
        "shared": {k: json_scalar(v.item() if hasattr(v, "item") else v) for k, v in result.shared.items()},
        "signals": dict(result.signals),
        "stats": dict(result.stats),
    }


@functools.cache
def _reader() -> Any:
    """This process's reader of input files (runtime/buffers.py ``NpyReader``: each thread's
    next input of the same shape read into the last one's array)."""
    from gasync.runtime.buffers import NpyReader

    return NpyReader()


def save_npy(path: Path, array: np.ndarray[Any, Any]) -> None:
    """Write through a temporary name and a rename: a reader (or a second run of the same input,
    after its first worker died) never sees half a file."""
    import os

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.{id(array):x}.npy")
    np.save(tmp, array, allow_pickle=False)
    os.replace(tmp, path)


# ---- dask.array --------------------------------------------------------------------------------


def map_blocks(
    program: str | Path | Program,
    array: Any,
    input: str,  # the buffer's role, as in the CLI's --input
    output: str,
    *,
    inputs: Mapping[str, Any] | None = None,
    backend: str = "auto",
    timeout: float = 0.0,
    checked: bool = True,
    strict: bool = False,
    **defines: Any,
) -> Any:
    """Run ``program`` on every chunk of the dask.array ``array``: a dask.array of its ``output`` buffer.

    The chunk fills the program's ``input`` buffer, whose dimensions must be consts
    (``buffer x: f32[H, W] = input``): each chunk's shape is given to them as defines, with
    ``defines`` (other consts) beside. ``inputs`` fills the program's other ``input`` buffers,
    the same arrays for every chunk. The output buffer has as many dimensions as the input; its
    chunks are what the program makes of each input chunk's shape. NumPy chunks give NumPy
    chunks; CuPy chunks on a GPU give CuPy chunks. Nothing runs until the array is computed.
    """
    da = require("dask.array")
    from gasync.api import located

    if not isinstance(array, da.Array):
        raise TypeError(
            f"map_blocks: expected a dask.array, got {type(array).__name__} (dask.array.from_array makes one)"
        )
    if inputs is not None and not isinstance(inputs, Mapping):
        raise TypeError(f"map_blocks: inputs: expected a dict of buffer name -> array, got {type(inputs).__name__}")
    if isinstance(program, str | Path):
        recipe = Recipe.read(program, defines, strict)
    else:
        recipe = Recipe.of(program).with_defines(defines)
        recipe = Recipe(recipe.text, recipe.path, recipe.defines, strict or recipe.strict)
    options = {"backend": backend, "timeout": timeout, "checked": checked}
    check_run_options(options, recipe.path)
    with located(recipe.path):  # its errors name the program, as a run's do
        dims = dim_names(recipe, input, array.ndim)
        for name in dims:
            if name in defines:
                raise InputError(
                    f"map_blocks: defines['{name}'] is set by each chunk's shape (a dimension of '{input}')"
                )
        made = {shape: out_buffer(recipe, dims, shape, input, output, array.dtype) for shape in chunk_shapes(array)}
        shapes = {shape: out_shape for shape, (out_shape, _) in made.items()}
        chunks = out_chunks(array.chunks, shapes, output)
    extra = dict(inputs or {})
    elem = next(iter(made.values()))[1]
    meta = meta_like(array, len(chunks), elem)
    return da.map_blocks(
        run_block,
        array,
        dtype=meta.dtype,
        chunks=chunks,
        meta=meta,
        token=f"gasync-{recipe.stem}",  # Dask adds a hash of everything the blocks are given
        recipe=recipe,
        dims=dims,
        input_name=input,
        output_name=output,  # (not `output`: a name of Dask's own blockwise)
        extra=extra,
        options=options,
    )


def run_block(
    block: Any, *, recipe: Recipe, dims: tuple[str, ...], input_name: str, output_name: str, extra: dict[str, Any],
    options: dict[str, Any],
) -> Any:  # fmt: skip
    """One chunk through the program compiled for its shape (on whichever worker Dask picks)."""
    shaped = recipe.with_defines(shape_defines(dims, tuple(block.shape)))
    result = run_recipe(shaped, {**extra, input_name: block}, options)
    out = result.buffers[output_name]
    if not isinstance(block, np.ndarray) and isinstance(out, np.ndarray) and type(block).__module__.startswith("cupy"):
        import cupy

        return cupy.asarray(out)  # the simulator gives NumPy: keep the array's own chunk type
    return out


def _define_pairs(defines: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    from gasync.api import define_text

    return tuple(sorted((str(k), define_text(v)) for k, v in defines.items()))
