"""Maps that move 16 bytes an access (codegen/vectors.py) on a real GPU: ``ld.global.v4``,
``ld.shared.v4`` and ``cp.async`` (a group's stages) give the same values as the 4- and 8-byte
forms, which run where an access does not start a 16-byte line (tests/vector_programs.py)."""

from __future__ import annotations

import numpy as np
import pytest
from vector_programs import OFFSET, OFFSET_I64, ROWS, SPEC_STAGED, STAGED, offset_want, rows_want, staged_want

import gasync

pytestmark = [pytest.mark.gpu, pytest.mark.timeout(300)]


def run(source: str, defines: dict[str, int]) -> dict[str, np.ndarray]:
    return gasync.compile_source(source, "v.gasync", defines).run(backend="cuda", timeout=120).buffers


@pytest.mark.parametrize("off", [0, 1, 4])
def test_an_offset_index_on_gpu(off: int) -> None:
    np.testing.assert_array_equal(run(OFFSET, {"OFF": off})["y"], offset_want(off))


@pytest.mark.parametrize("off", [0, 1])
def test_an_offset_index_of_8_byte_integers_on_gpu(off: int) -> None:
    np.testing.assert_array_equal(run(OFFSET_I64, {"OFF": off})["y"], offset_want(off).astype(np.int64))


@pytest.mark.parametrize("cols", [1100, 1101])
def test_the_rows_of_a_2d_buffer_on_gpu(cols: int) -> None:
    np.testing.assert_array_equal(run(ROWS, {"C": cols})["o"], rows_want(cols))


@pytest.mark.parametrize("off", [0, 1])
def test_a_groups_stages_through_shared_memory_on_gpu(off: int) -> None:
    np.testing.assert_array_equal(run(STAGED, {"OFF": off})["y"], staged_want(off))


@pytest.mark.parametrize("program", [STAGED, SPEC_STAGED])
def test_many_stages_copied_without_registers_are_whole_when_computed_on(program: str) -> None:
    """64 tiles a group through 2 stages: a compute warp that read a stage before its
    ``cp.async`` copies had landed would see the tile before it."""
    got = run(program, {"GROUPS": 8, "TILES": 64})["y"]
    np.testing.assert_array_equal(got, staged_want(0, groups=8, tiles=64))
