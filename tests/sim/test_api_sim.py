"""Errors of a run through the Python API: located at the program and in the API's words."""

from __future__ import annotations

import numpy as np
import pytest

import gasync
from gasync.runtime.errors import InputError

pytestmark = [pytest.mark.sim, pytest.mark.timeout(120)]
SOURCE = "buffer x: f32[4] = input;\nbuffer y: f32[4] = zeros;\nsignal stop;\ntask main { y[0] = x[0]; }\n"


@pytest.mark.parametrize(
    ("inputs", "signals", "where", "message"),
    [
        # an input that does not fit its buffer points at the buffer's declaration
        ({}, {}, "in.gasync:1:1", "buffer 'x' is declared '= input' but inputs has no 'x'"),
        (
            {"x": np.zeros(3, np.float32)},
            {},
            "in.gasync:1:1",
            "inputs['x']: shape [3] does not match the declaration f32[4]",
        ),
        (
            {"x": np.zeros(4, np.float64)},
            {},
            "in.gasync:1:1",
            "inputs['x']: dtype float64 does not match the declaration f32[4] (float32)",
        ),
        (
            {"x": np.zeros(4, np.float32), "z": np.zeros(1)},
            {},
            "in.gasync",
            "inputs['z']: the program has no buffer named 'z'",
        ),
        ({"x": [1.0, 2.0]}, {}, "in.gasync", "inputs['x']: expected a NumPy array or a CUDA device array, found list"),
        (
            {"x": np.zeros(4, np.float32)},
            {"go": 0.0},
            "in.gasync",
            "signals['go']: the program has no signal named 'go'",
        ),
    ],
)
def test_input_errors(inputs: dict[str, object], signals: dict[str, float], where: str, message: str) -> None:
    prog = gasync.compile_source(SOURCE, "in.gasync")
    with pytest.raises(InputError) as info:
        prog.run(backend="sim", inputs=inputs, signals=signals, timeout=60)
    assert info.value.message == message
    assert str(info.value) == f"{where}: error[E0301]: {message}"
    assert "--" not in str(info.value)


def test_a_timeout_in_the_apis_words() -> None:
    source = "signal s;\ntask main { s.wait().await; }\ntask t { loop { yield_now().await; } }\n"
    prog = gasync.compile_source(source, "t.gasync")
    with pytest.raises(gasync.GasyncError) as info:
        prog.run(backend="sim", timeout=0.5)
    assert str(info.value).startswith("t.gasync: error[E0304]: the run exceeded its timeout of 0.5s; unfinished tasks:")
    assert info.value.in_cli_words().message.startswith("the run exceeded --timeout 0.5s")
