"""``map_blocks``'s chunks (gasync/cluster.py): the consts a chunk's shape sets, the output
buffer each chunk shape gives (planned on the client, before anything is submitted), and how
the output chunks tile an array."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

import numpy as np

from gasync.runtime.errors import InputError

if TYPE_CHECKING:
    from gasync.cluster import Recipe


def dim_names(recipe: Recipe, buffer: str, ndim: int) -> tuple[str, ...]:
    """The consts that are ``buffer``'s dimensions, each a plain const name."""
    from gasync.api import located
    from gasync.dsl import ast
    from gasync.dsl.parser import parse
    from gasync.pipeline import deep

    with located(recipe.path):
        program = deep(parse, recipe.text, recipe.path)
    found = next((it for it in program.items if isinstance(it, ast.Buffer) and it.name == buffer), None)
    buffers = [it.name for it in program.items if isinstance(it, ast.Buffer) and it.init.kind == "input"]
    if found is None or found.init.kind != "input":
        has = f"its input buffers are {', '.join(buffers)}" if buffers else "it has no input buffer"
        raise InputError(f"map_blocks: input '{buffer}' is not an input buffer of {recipe.path} ({has})")
    if len(found.type.dims) != ndim:
        raise InputError(f"map_blocks: buffer '{buffer}' has {len(found.type.dims)} dimensions, the array {ndim}")
    names = []
    for k, dim in enumerate(found.type.dims):
        if not isinstance(dim, ast.Name):
            span = getattr(dim, "span", None)
            at = f"{recipe.path}:{span.line}:{span.column}" if span is not None else recipe.path
            raise InputError(
                f"map_blocks: dimension {k} of buffer '{buffer}' ({at}) is not a const's name, so a chunk's"
                " shape cannot set it: declare it as a const (`const H: i64 = ...;`) and use its name"
            )
        names.append(dim.id)
    return tuple(names)


def shape_defines(dims: tuple[str, ...], shape: tuple[int, ...]) -> dict[str, int]:
    given: dict[str, int] = {}
    for name, size in zip(dims, shape, strict=True):
        if given.setdefault(name, size) != size:
            raise InputError(f"map_blocks: a chunk of shape {list(shape)} gives const '{name}' two sizes")
    return given


def chunk_shapes(array: Any) -> set[tuple[int, ...]]:
    return set(itertools.product(*(sorted(set(c)) for c in array.chunks)))


def out_buffer(
    recipe: Recipe, dims: tuple[str, ...], shape: tuple[int, ...], input_name: str, output: str, dtype: Any
) -> tuple[tuple[int, ...], np.dtype[Any]]:
    """The output buffer's shape and dtype for one chunk shape, planned on the client (a program
    error here is raised at once, before anything is submitted)."""
    from gasync.runtime.buffers import dtype_of

    plan = recipe.with_defines(shape_defines(dims, shape)).plan()
    bufs = {b.name: b for b in plan.buffers}
    if output not in bufs:
        raise InputError(f"map_blocks: output '{output}': {recipe.path} has no buffer named '{output}'")
    if dtype_of(bufs[input_name].elem) != np.dtype(dtype):
        raise InputError(
            f"map_blocks: the array's dtype {np.dtype(dtype)} is not buffer '{input_name}''s"
            f" {bufs[input_name].elem} ({dtype_of(bufs[input_name].elem)})"
        )
    if len(bufs[output].shape) != len(shape):
        raise InputError(
            f"map_blocks: output '{output}' has {len(bufs[output].shape)} dimensions, the input {len(shape)}:"
            " each output chunk must sit where its input chunk does"
        )
    return bufs[output].shape, dtype_of(bufs[output].elem)


def out_chunks(
    chunks: tuple[tuple[int, ...], ...], shapes: dict[tuple[int, ...], tuple[int, ...]], output: str
) -> tuple[tuple[int, ...], ...]:
    """Per dimension, each output chunk's size; it must depend only on the input chunk's size
    along that dimension, so that the blocks tile an array."""
    out = []
    for d, sizes in enumerate(chunks):
        by_size: dict[int, int] = {}
        for shape, made in shapes.items():
            if by_size.setdefault(shape[d], made[d]) != made[d]:
                raise InputError(
                    f"map_blocks: output '{output}''s size along dimension {d} depends on more than the"
                    " input chunk's size along it, so its chunks do not tile an array"
                )
        out.append(tuple(by_size[s] for s in sizes))
    return tuple(out)


def meta_like(array: Any, ndim: int, dtype: np.dtype[Any]) -> Any:
    """An empty array of the input's chunk type (NumPy or CuPy), for Dask's metadata."""
    meta = getattr(array, "_meta", None)
    if meta is not None and type(meta).__module__.startswith("cupy"):
        import cupy

        return cupy.empty((0,) * ndim, dtype=dtype)
    return np.empty((0,) * ndim, dtype=dtype)
