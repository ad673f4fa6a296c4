"""Device arrays in, device arrays out, on a real GPU (issue 16): CuPy in gives CuPy out,
PyTorch in gives PyTorch out, without a copy through the host; an input buffer's result is
the caller's own array, written in place."""

from __future__ import annotations

import numpy as np
import pytest

import gasync

pytestmark = [pytest.mark.gpu, pytest.mark.timeout(180)]

SCALE = """
const N: i64 = 1024;
buffer x: f32[N] = input;
buffer y: f32[N] = zeros;
task main { parallel for i in 0..N { y[i] = 2.0 * x[i] + 1.0; } }
"""


def _program() -> gasync.Program:
    return gasync.compile_source(SCALE, "scale.gasync")


def test_cupy_in_gives_cupy_out() -> None:
    cupy = pytest.importorskip("cupy")
    x = cupy.arange(1024, dtype=cupy.float32)
    res = _program().run(backend="cuda", inputs={"x": x})
    assert isinstance(res.buffers["y"], cupy.ndarray) and res.buffers["x"] is x
    np.testing.assert_array_equal(cupy.asnumpy(res.buffers["y"]), 2.0 * np.arange(1024, dtype=np.float32) + 1.0)


def test_torch_in_gives_torch_out() -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("this PyTorch has no CUDA")
    x = torch.arange(1024, dtype=torch.float32, device="cuda")
    res = _program().run(backend="cuda", inputs={"x": x})
    assert isinstance(res.buffers["y"], torch.Tensor) and res.buffers["y"].is_cuda and res.buffers["x"] is x
    expected = 2.0 * np.arange(1024, dtype=np.float32) + 1.0
    np.testing.assert_array_equal(res.buffers["y"].cpu().numpy(), expected)


def test_numpy_in_gives_numpy_out_and_device_can_be_asked_for() -> None:
    x = np.arange(1024, dtype=np.float32)
    host = _program().run(backend="cuda", inputs={"x": x})
    assert isinstance(host.buffers["y"], np.ndarray)
    dev = _program().run(backend="cuda", inputs={"x": x}, outputs="device")
    assert hasattr(dev.buffers["y"], "__cuda_array_interface__")
    np.testing.assert_array_equal(dev.buffers["y"].copy_to_host(), host.buffers["y"])
