"""runtime/buffers.NpyReader: input .npy files read into the array the last read of that name
kept (gasync map's runs, one input after another), with np.load's values and errors."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from gasync.runtime.buffers import NpyReader
from gasync.runtime.errors import InputError


def saved(tmp_path: Path, name: str, arr: np.ndarray) -> Path:
    path = tmp_path / f"{name}.npy"
    np.save(path, arr)
    return path


def test_the_same_shape_reuses_the_array_and_reads_the_new_values(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    a, b = rng.random((64, 48)).astype(np.float32), rng.random((64, 48)).astype(np.float32)
    reader = NpyReader()
    first = reader.read("img", saved(tmp_path, "a", a))
    np.testing.assert_array_equal(first, a)
    second = reader.read("img", saved(tmp_path, "b", b))
    assert second is first  # read into the kept array: no new allocation
    np.testing.assert_array_equal(second, b)


def test_another_shape_dtype_or_name_gets_a_new_array(tmp_path: Path) -> None:
    reader = NpyReader()
    first = reader.read("img", saved(tmp_path, "a", np.arange(12, dtype=np.int32).reshape(3, 4)))
    wider = reader.read("img", saved(tmp_path, "b", np.arange(15, dtype=np.int32).reshape(3, 5)))
    assert wider is not first and wider.shape == (3, 5)
    as_i64 = reader.read("img", saved(tmp_path, "c", np.arange(15, dtype=np.int64).reshape(3, 5)))
    assert as_i64 is not wider and as_i64.dtype == np.int64
    other = reader.read("mask", saved(tmp_path, "d", np.arange(15, dtype=np.int64).reshape(3, 5)))
    assert other is not as_i64


def test_fortran_order_and_the_other_byte_order_read_as_np_load_does(tmp_path: Path) -> None:
    reader = NpyReader()
    base = np.arange(20, dtype=np.float64).reshape(4, 5)
    reader.read("x", saved(tmp_path, "a", base))
    fortran = reader.read("x", saved(tmp_path, "f", np.asfortranarray(base + 1)))
    np.testing.assert_array_equal(fortran, base + 1)
    swapped = reader.read("x", saved(tmp_path, "s", (base + 2).astype(">f8")))
    np.testing.assert_array_equal(swapped, base + 2)
    assert swapped.dtype.isnative


def test_a_truncated_file_is_the_input_error_np_load_gives(tmp_path: Path) -> None:
    reader = NpyReader()
    reader.read("x", saved(tmp_path, "a", np.zeros(1000, np.float32)))
    path = saved(tmp_path, "b", np.ones(1000, np.float32))
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(InputError, match=r"cannot read .*b\.npy as a \.npy array"):
        reader.read("x", path)
    longer = saved(tmp_path, "c", np.ones(1000, np.float32))
    longer.write_bytes(longer.read_bytes() + b"\0" * 8)  # more data than the header says
    np.testing.assert_array_equal(reader.read("x", longer), np.ones(1000, np.float32))


def test_each_thread_keeps_its_own_arrays(tmp_path: Path) -> None:
    reader = NpyReader()
    paths = [saved(tmp_path, f"p{k}", np.full(256, k, np.int64)) for k in range(2)]
    got: dict[int, list[np.ndarray]] = {}

    def work(k: int) -> None:
        got[k] = [reader.read("x", paths[k]), reader.read("x", paths[k])]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got[0][0] is got[0][1] and got[1][0] is got[1][1] and got[0][0] is not got[1][0]
    assert (got[0][1] == 0).all() and (got[1][1] == 1).all()
