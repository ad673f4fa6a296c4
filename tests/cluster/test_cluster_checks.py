"""Program.map and map_blocks check what they are given on the client, before anything is
submitted (no cluster is needed to see it), and their errors name the program as a run's do."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gasync
from gasync.pipeline import InputFileError
from gasync.runtime.errors import BackendError, InputError

da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")

SAMPLE = str(Path(__file__).parents[2] / "samples" / "tonemap.gasync")
SRC = "buffer x: f32[4] = input;\nbuffer y: f32[4] = zeros;\ntask main { y[0] = x[0]; }\n"
X = {"x": np.zeros(4, np.float32)}


class NoClient:
    """A client that must not be used: the mistakes are found before anything is submitted."""

    def submit(self, *args: object, **kwargs: object) -> None:
        raise AssertionError("submitted")


def test_map_checks_the_run_options_values_at_once() -> None:
    prog = gasync.compile_source(SRC, "t.gasync")
    with pytest.raises(ValueError, match=r"^timeout=-1: expected seconds"):
        prog.map(NoClient(), [X], backend="sim", timeout=-1)
    with pytest.raises(BackendError) as raised:
        prog.map(NoClient(), [X], backend="gpu")
    assert str(raised.value) == "t.gasync: error[E0302]: unknown backend 'gpu': expected auto, cuda or sim"


def test_map_wants_a_list_of_dicts_not_one_dict() -> None:
    prog = gasync.compile_source(SRC, "t.gasync")
    with pytest.raises(TypeError, match=r"^inputs: expected a list of dicts, one per run"):
        prog.map(NoClient(), X, backend="sim")


def test_map_blocks_errors_are_located_like_a_runs() -> None:
    from gasync.cluster import map_blocks

    hdr = da.zeros((8, 8), chunks=4, dtype=np.float32)
    with pytest.raises(InputError) as raised:
        map_blocks(SAMPLE, hdr, input="nope", output="ldr", backend="sim")
    assert str(raised.value).startswith(f"{SAMPLE}: error[E0301]: map_blocks: input 'nope' is not an input buffer")
    with pytest.raises(InputFileError) as missing:
        map_blocks("nope.gasync", hdr, input="hdr", output="ldr", backend="sim")
    assert str(missing.value) == "nope.gasync: error[E0001]: no such file: nope.gasync"


def test_map_blocks_checks_its_arguments_at_once() -> None:
    from gasync.cluster import map_blocks

    with pytest.raises(TypeError, match=r"^map_blocks: expected a dask.array, got ndarray"):
        map_blocks(SAMPLE, np.zeros((8, 8), np.float32), input="hdr", output="ldr", backend="sim")
    hdr = da.zeros((8, 8), chunks=4, dtype=np.float32)
    with pytest.raises(BackendError):
        map_blocks(SAMPLE, hdr, input="hdr", output="ldr", backend="gpu")
    with pytest.raises(ValueError, match=r"^timeout=-3: expected seconds"):
        map_blocks(SAMPLE, hdr, input="hdr", output="ldr", backend="sim", timeout=-3)
