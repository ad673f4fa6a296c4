"""Defects scripts/fuzz.py found in gasync run on the simulator, each fixed and kept fixed.

- A float builtin outside its domain (``sqrt(-1.0)``, ``log(-1.0)``, ``exp(1000.0)``) gave
  "the simulated kernel failed: ValueError: math domain error": the simulated kernel
  called Python's math, which raises, where the GPU gives NaN or inf (runtime/simmath.py).
- A program whose state does not fit in memory (a buffer of 2^35 f64) gave "the simulated
  kernel failed: numpy._core._exceptions._ArrayMemoryError ...": now E0305 names the
  largest buffers and channels (runtime/exits.out_of_memory).
- A group of 928,549,085,083 instances with only small buffers gave that E0305 with nothing
  named: it now names the largest tasks' frames too, with their instance counts.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import gasync
from gasync import reference
from gasync.runtime.errors import DeviceError

pytestmark = [pytest.mark.sim, pytest.mark.timeout(180)]


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GASYNC_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


MATH = """buffer x: f32[4] = input;
buffer y: f32[4] = zeros;
buffer z: f64[4] = zeros;
task main {
    parallel for i in 0..4 { y[i] = sqrt(x[i]); }
    let v = x[1] as f64;
    z[0] = log(v);
    z[1] = exp(-v * 1000.0);
    z[2] = pow(v, 0.5);
    z[3] = floor(sqrt(v));
}
"""


def test_float_builtins_outside_their_domain_give_nan_and_inf_as_on_the_gpu() -> None:
    inputs = {"x": np.array([4.0, -1.0, 0.0, 9.0], np.float32)}
    res = gasync.compile_source(MATH, "m.gasync").run(backend="sim", inputs=inputs, timeout=120)
    y, z = res.buffers["y"], res.buffers["z"]
    assert y[0] == 2.0 and math.isnan(y[1]) and y[2] == 0.0 and y[3] == 3.0
    assert math.isnan(z[0]) and z[1] == math.inf and math.isnan(z[2]) and math.isnan(z[3])
    want = reference.run(gasync.compile_source(MATH, "m.gasync").plan, inputs=inputs)
    np.testing.assert_array_equal(want.buffers["z"], z)  # the reference interpreter agrees


def _device_limit(source: str, path: str, timeout: float = 120) -> DeviceError:
    """The E0305 error a simulated run of ``source`` stops with."""
    with pytest.raises(DeviceError) as info:
        gasync.compile_source(source, path).run(backend="sim", timeout=timeout)
    assert info.value.code == "E0305"
    return info.value


def test_a_state_over_the_simulators_limit_is_refused_before_the_run() -> None:
    # a fuzzer mutant (2026-12-07): an 8 GiB buffer of zeros ran, then its copy back and the
    # pickle to the caller outlived the simulator's hard limit (32 s), where it was stopped
    source = (
        "buffer a: i32[8] = zeros;\nbuffer b: i32[2147483647] = zeros;\n"
        "task main { bulk for i in 0..8 { b[i] = 2; } }\n"
    )
    error = _device_limit(source, "big.gasync", timeout=2)
    assert str(error) == (
        "big.gasync: error[E0305]: not enough memory for the run's state on the simulator: 8.0 GiB, "
        "over its 1 GiB; the largest: buffer 'b': 8.0 GiB"
    )
    assert [n.message for n in error.notes] == [
        "run it on a GPU (--backend cuda), or make it smaller (-D NAME=VALUE sets a const)"
    ]


@pytest.fixture
def no_sim_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The simulator's state limit lifted (runtime/exits.py), so that the host's memory runs out."""
    from gasync.runtime import exits

    monkeypatch.setattr(exits, "SIM_MAX_STATE_BYTES", 1 << 62)


@pytest.mark.usefixtures("no_sim_limit")
def test_a_state_too_large_for_memory_is_a_device_limit_naming_the_largest_buffers() -> None:
    source = "buffer big: f64[34359738368] = zeros;\nbuffer out: i32[1] = zeros;\ntask main { out[0] = 1; }\n"
    assert str(_device_limit(source, "big.gasync")) == (
        "big.gasync: error[E0305]: not enough memory for the run's state (MemoryError); "
        "the largest: buffer 'big': 256.0 GiB"
    )


@pytest.mark.usefixtures("no_sim_limit")
def test_a_state_too_large_for_memory_names_a_task_of_too_many_instances() -> None:
    # a fuzzer mutant (2026-12-05): a group of 928,549,085,083 instances, every buffer small, was
    # "not enough memory for the run's state (MemoryError)" with nothing named
    source = (
        "const W: i64 = 928549085083;\n"
        "buffer out: f32[1] = zeros;\n"
        "group gg for g in 0..W { task t { out[0] = 1.0; } }\n"
        "task main after gg { out[0] = 2.0; }\n"
    )
    assert str(_device_limit(source, "many.gasync")).startswith(
        "many.gasync: error[E0305]: not enough memory for the run's state (MemoryError); "
        "the largest: task 't' (928,549,085,083 instances): "
    )
