"""gasync.cluster.map_blocks with Dask's local schedulers (threads), on the simulator: values
against NumPy and the whole-array run, Dask's own progress bar and drawing, and each mistake's
message, raised before anything runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import gasync
from gasync.runtime.errors import InputError

da = pytest.importorskip("dask.array")

pytestmark = [pytest.mark.sim, pytest.mark.timeout(600)]

SAMPLES = Path(__file__).parents[2] / "samples"
RUN = {"backend": "sim", "timeout": 120.0}

SCALE = """\
const N: i64 = 16;
const K: f32 = 1.0;
buffer x: f32[N] = input;
buffer offset: f32[1] = input;
buffer y: f32[N] = zeros;
task scale { parallel for i in 0..N { y[i] = K * x[i] + offset[0]; } }
"""


@pytest.fixture
def scale_program(tmp_path: Path) -> Path:
    path = tmp_path / "scale.gasync"
    path.write_text(SCALE)
    return path


def test_chunks_of_one_dimension_with_defines_and_a_shared_input(scale_program: Path) -> None:
    from dask.diagnostics import ProgressBar

    from gasync.cluster import map_blocks

    x = np.arange(40, dtype=np.float32)
    y = map_blocks(
        scale_program, da.from_array(x, chunks=16), input="x", output="y",
        inputs={"offset": np.array([0.5], np.float32)}, K=3.0, **RUN,
    )  # fmt: skip
    assert y.chunks == ((16, 16, 8),)
    with ProgressBar(out=None) as bar:  # Dask's own progress bar sees every block run
        got = y.compute(scheduler="threads", num_workers=2)
    np.testing.assert_array_equal(got, 3 * x + np.float32(0.5))
    assert bar.last_duration > 0


def test_a_compiled_program_keeps_its_defines(scale_program: Path) -> None:
    from gasync.cluster import map_blocks

    prog = gasync.compile(scale_program, defines={"K": 2})
    x = np.arange(20, dtype=np.float32)
    offset = {"offset": np.zeros(1, np.float32)}
    y = map_blocks(prog, da.from_array(x, chunks=7), input="x", output="y", inputs=offset, **RUN)
    np.testing.assert_array_equal(y.compute(scheduler="sync"), 2 * x)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_dask_draws_the_graph_of_blocks(tmp_path: Path) -> None:
    from gasync.cluster import map_blocks

    hdr = np.ones((40, 30), np.float32)
    ldr = map_blocks(SAMPLES / "tonemap.gasync", da.from_array(hdr, chunks=(20, 30)), input="hdr", output="ldr", **RUN)
    out = tmp_path / "blocks.svg"
    ldr.visualize(filename=str(out))
    svg = out.read_text()
    assert svg.count(">gasync&#45;tonemap</text>") == 2  # a task per block, named after the program


MISTAKES = [
    ("input='y'", {"input": "y", "output": "y"},
     "map_blocks: input 'y' is not an input buffer of {path} (its input buffers are x, offset)"),
    ("output='z'", {"input": "x", "output": "z"}, "map_blocks: output 'z': {path} has no buffer named 'z'"),
    ("define of a dimension", {"input": "x", "output": "y", "N": 4},
     "map_blocks: defines['N'] is set by each chunk's shape (a dimension of 'x')"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "kwargs", "message"), MISTAKES, ids=[m[0] for m in MISTAKES])
def test_mistakes_are_said_before_anything_runs(scale_program: Path, case: str, kwargs: dict, message: str) -> None:
    from gasync.cluster import map_blocks

    x = da.from_array(np.zeros(32, np.float32), chunks=16)
    with pytest.raises(InputError) as raised:
        map_blocks(scale_program, x, inputs={"offset": np.zeros(1, np.float32)}, **kwargs, **RUN)
    assert raised.value.message == message.format(path=scale_program)


def test_a_dimension_that_is_not_a_const_name_is_refused(tmp_path: Path) -> None:
    from gasync.cluster import map_blocks

    path = tmp_path / "twice.gasync"
    path.write_text(
        "const N: i64 = 8;\nbuffer x: f32[2 * N] = input;\nbuffer y: f32[2 * N] = zeros;\ntask t { y[0] = x[0]; }\n"
    )
    with pytest.raises(InputError) as raised:
        map_blocks(path, da.zeros(32, dtype=np.float32, chunks=16), input="x", output="y", **RUN)
    assert raised.value.message == (
        f"map_blocks: dimension 0 of buffer 'x' ({path}:2:15) is not a const's name, so a chunk's shape cannot"
        " set it: declare it as a const (`const H: i64 = ...;`) and use its name"
    )


def test_the_arrays_dtype_must_be_the_buffers(scale_program: Path) -> None:
    from gasync.cluster import map_blocks

    with pytest.raises(InputError) as raised:
        map_blocks(scale_program, da.zeros(32, dtype=np.float64, chunks=16), input="x", output="y", **RUN)
    assert raised.value.message == "map_blocks: the array's dtype float64 is not buffer 'x''s f32 (float32)"


def test_an_output_whose_chunks_cannot_tile_is_refused(tmp_path: Path) -> None:
    from gasync.cluster import map_blocks

    path = tmp_path / "halve.gasync"
    path.write_text(
        "const N: i64 = 8;\nconst M: i64 = 4;\nbuffer x: f32[N, M] = input;\nbuffer y: f32[N * M, 1] = zeros;\n"
        "task t { y[0, 0] = x[0, 0]; }\n"
    )
    with pytest.raises(InputError) as raised:
        map_blocks(path, da.zeros((10, 6), dtype=np.float32, chunks=(5, 4)), input="x", output="y", **RUN)
    assert raised.value.message == (
        "map_blocks: output 'y''s size along dimension 0 depends on more than the input chunk's size along it,"
        " so its chunks do not tile an array"
    )


def test_a_program_error_is_located_at_once(tmp_path: Path) -> None:
    from gasync.cluster import map_blocks

    path = tmp_path / "bad.gasync"
    path.write_text("const N: i64 = 8;\nbuffer x: f32[N] = input;\nbuffer y: f32[N] = zeros;\ntask t { y[0] = q; }\n")
    with pytest.raises(gasync.ErrorGroup) as raised:
        map_blocks(path, da.zeros(16, dtype=np.float32, chunks=8), input="x", output="y", **RUN)
    assert str(raised.value) == f"{path}:4:17: error[E0202]: cannot find value 'q' in this scope"
