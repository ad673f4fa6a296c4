"""The hand-written limit kernels (bench/pingpong.py, bench/baselines.py) compile to PTX for sm_90, no GPU.

Their point is what the PTX does, so the tests read it: each ping-pong's poll stays
inside its loop (gpu-notes: a plain load in a spin loop is hoisted and read once),
each block reads %smid, and the per-warp kernel has 4 loads in flight before its
stores. Skipped, with the reason, where NVRTC or libdevice is missing
(``pip install nvidia-cuda-nvrtc``; CUDA_HOME pointing at a toolkit, as scripts/ptx_check.py says).
"""

from __future__ import annotations

import os
import re
from functools import cache
from typing import Any

import pytest

os.environ.setdefault("CUDA_HOME", "/usr/local/cuda-13.0")

from numba import cuda, types  # noqa: E402

PINGPONG_SIG = (types.int32[::1], types.int64, types.int32[::1], types.int32[::1], types.int64)
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


def ptx_of(kernel: Any, sig: tuple[Any, ...]) -> str:
    if why := _toolchain():
        pytest.skip(f"no PTX toolchain here ({why})")
    ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=(9, 0))
    return str(ptx)


def loops(ptx: str) -> list[list[str]]:
    """The bodies of PTX loops: the lines from a label to a branch back to it."""
    lines = ptx.splitlines()
    labels = {m.group(1): i for i, text in enumerate(lines) if (m := re.match(r"^(\$L__BB\d+_\d+):", text))}
    bodies = []
    for j, text in enumerate(lines):
        m = re.search(r"\bbra(?:\.uni)?\s+(\$L__BB\d+_\d+);", text)
        if m and labels.get(m.group(1), j) < j:
            bodies.append(lines[labels[m.group(1)] : j + 1])
    return bodies


POLLS = {
    ("cross SM", "cas"): r"atom\.global\.cas\.b32",
    ("cross SM", "load"): r"ld\.relaxed\.gpu\.global\.b32",
    ("same SM", "cas"): r"atom\.shared\.cas\.b32",
    ("same SM", "load"): r"atom\.shared\.add\.u32",
}


@pytest.mark.parametrize("key", sorted(POLLS))
def test_each_ping_pong_polls_inside_its_loop_and_reads_smid(key: tuple[str, str]) -> None:
    import pingpong

    ptx = ptx_of(pingpong.kernels()[key], PINGPONG_SIG)
    assert "%smid" in ptx
    assert any(any(re.search(POLLS[key], line) for line in body) for body in loops(ptx)), f"{key}: poll hoisted"


def test_the_per_warp_kernel_has_four_loads_in_flight_before_its_stores() -> None:
    import baselines

    ptx = ptx_of(baselines._numba_kernels()["per-warp contiguous"], (F32, F32, types.int64))

    def loads_before_first_store(body: list[str]) -> int:
        text = "\n".join(body)
        return text.split("st.global.f32")[0].count("ld.global.f32") if "st.global.f32" in text else 0

    assert max(loads_before_first_store(body) for body in loops(ptx)) >= 4


@pytest.mark.parametrize("kind", ["grid-stride", "one thread per element"])
def test_the_other_affine_kernels_compile(kind: str) -> None:
    import baselines

    assert ".entry" in ptx_of(baselines._numba_kernels()[kind], (F32, F32))
