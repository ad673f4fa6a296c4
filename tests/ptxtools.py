"""PTX of a kernel for sm_90 on a machine without a GPU, for tests that read what the PTX does
(tests/bench/test_baseline_ptx.py, tests/codegen/test_cta_shared_ptx.py), in this process or a
fresh one (``compile_in_process``: tests/unit/test_linked.py, test_deviceexec.py). Skips the test, with
the reason, where NVRTC or libdevice is missing (``pip install nvidia-cuda-nvrtc``; CUDA_HOME
pointing at a toolkit, as scripts/ptx_check.py says)."""

from __future__ import annotations

import os
import subprocess
import sys
from functools import cache
from types import SimpleNamespace
from typing import Any

import pytest

os.environ.setdefault("CUDA_HOME", "/usr/local/cuda-13.0")

from numba import cuda, types  # noqa: E402
from numba.cuda import dispatcher  # noqa: E402

# The device helpers kernels call are device functions of their own (runtime/order.py, INLINE:
# NVVM inlines them), which Numba compiles for the current device: with no GPU here, an
# sm_90 one, as scripts/ptx_check.py does.
dispatcher.get_current_device = lambda: SimpleNamespace(compute_capability=(9, 0))  # type: ignore[attr-defined]

F32 = types.float32[::1]


@cache
def _toolchain() -> str:
    """'' if a trivial kernel compiles to PTX here, else why not."""

    def probe(a):  # type: ignore[no-untyped-def]
        a[0] = 1.0

    try:
        cuda.compile_ptx(probe, (F32,), cc=(9, 0))
    except Exception as exc:  # NVRTC or libdevice missing: a fact of the machine, not of the kernels
        return f"{type(exc).__name__}: {str(exc)[:200]}"
    return ""


def skip_without_toolchain() -> None:
    """Skip the test, with the reason, where no PTX can be made here."""
    if why := _toolchain():
        pytest.skip(f"no PTX toolchain here ({why})")


def ptx_of(kernel: Any, sig: tuple[Any, ...]) -> str:
    """``kernel``'s PTX for sm_90 and the argument types ``sig`` (the test skipped without a toolchain)."""
    if why := _toolchain():
        pytest.skip(f"no PTX toolchain here ({why})")
    ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=(9, 0))
    return str(ptx)


# a program's kernel compiled to PTX for sm_90 in a fresh process (a helper's lowering is
# registered once a process: tests/unit/test_linked.py), leaving ``ptx``; a test adds what it prints
COMPILE = """
import sys
from types import SimpleNamespace
import numpy as np
from numba import cuda, typeof, types
from numba.cuda import dispatcher
dispatcher.get_current_device = lambda: SimpleNamespace(compute_capability=(9, 0))
import gasync
from gasync.codegen import generate
from gasync.runtime import buffers, launch, linked, module
program = gasync.compile(sys.argv[1])
gen = generate(program.plan)
mod, _ = module.load(gen, None)
given = {b.name: np.zeros(b.shape, buffers.dtype_of(b.elem)) for b in program.plan.buffers if b.init == "input"}
host = launch.host_arrays(gen, 4, given)
sig = (typeof(launch.device_state(mod, host)), types.int64, types.int64)
ptx, _ = cuda.compile_ptx(mod.gasync_kernel.py_func, sig, cc=(9, 0))
"""


def compile_in_process(then: str, program: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run COMPILE and then ``then`` on ``program`` (a path) in a fresh process with ``env``;
    fails the test with its stderr's end where the process fails."""
    got = subprocess.run(
        [sys.executable, "-c", COMPILE + then, program],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert got.returncode == 0, got.stderr[-2000:]
    return got
