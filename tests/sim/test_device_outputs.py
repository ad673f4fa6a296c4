"""Outputs that stay on the device: with device arrays in, the run gives device arrays back.

Under the simulator, Numba's device arrays are host objects without
``__cuda_array_interface__``, but ``launch.execute`` (what the cuda backend runs) takes
them and gives them back all the same; the choice of kind for CuPy and PyTorch arrays
is checked on stand-ins that describe themselves as those libraries' arrays do.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gasync
from gasync.runtime.outputs import convert, is_device_array, library, output_kind

pytestmark = [pytest.mark.sim, pytest.mark.timeout(240)]
CHILD = Path(__file__).with_name("device_outputs_child.py")


def test_device_arrays_in_give_device_arrays_out() -> None:
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONWARNINGS="ignore")
    proc = subprocess.run([sys.executable, str(CHILD)], capture_output=True, text=True, env=env, timeout=200)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    for outputs in ("auto", "device"):  # the caller's own array for x (written in place), a device array for y
        assert got[outputs] == {
            "x_is_the_input": True, "y_type": "FakeCUDAArray", "x": [1.0] * 4, "y": [0.0, 2.0, 4.0, 6.0],
            "json_y": [0.0, 2.0, 4.0, 6.0],
        }  # fmt: skip
    assert got["host"]["y_type"] == "ndarray" and not got["host"]["x_is_the_input"]
    assert got["host"]["y"] == [0.0, 2.0, 4.0, 6.0]
    assert got["numpy"] == {"y_type": "ndarray"}


def _stand_in(module: str) -> Any:
    """An object that describes itself as a device array of ``module``'s library does."""
    cls = type("ndarray", (), {"__module__": module})
    obj = cls()
    obj.__cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (0, False), "version": 3}
    return obj


def test_the_kind_of_output_follows_the_inputs() -> None:
    cupy, torch, other = _stand_in("cupy._core.core"), _stand_in("torch"), _stand_in("jax.numpy")
    host = np.zeros(4, np.float32)
    assert [library(x) for x in (cupy, torch, other)] == ["cupy", "torch", "numba"]
    assert is_device_array(cupy) and not is_device_array(host)
    assert output_kind({}, "auto") == "host"
    assert output_kind({"x": host}, "auto") == "host"
    assert output_kind({"x": host, "y": cupy}, "auto") == "cupy"
    assert output_kind({"x": torch}, "auto") == "torch"
    assert output_kind({"x": other}, "auto") == "numba"
    assert output_kind({"x": torch}, "host") == "host"
    assert output_kind({"x": host}, "device") == "numba"
    with pytest.raises(ValueError, match="outputs='gpu': expected one of auto, host, device"):
        output_kind({}, "gpu")
    assert convert("kernel's", "cupy", given=cupy) is cupy  # an input buffer: the caller's own array


def test_the_simulator_backend_gives_numpy_arrays() -> None:
    prog = gasync.compile_source("buffer y: i32[2] = iota;\ntask main { y[0] = 5; }\n", "s.gasync")
    res = prog.run(backend="sim", timeout=60, outputs="device")
    assert isinstance(res.buffers["y"], np.ndarray) and res.buffers["y"].tolist() == [5, 1]
