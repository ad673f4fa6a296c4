"""The hand-written limit kernels (bench/pingpong.py, bench/baselines.py) compile to PTX for sm_90, no GPU.

Their point is what the PTX does, so the tests read it: each ping-pong's poll stays
inside its loop (gpu-notes: a plain load in a spin loop is hoisted and read once),
each block reads %smid, the per-warp kernel has 4 loads in flight before its
stores, and B3's persistent kernel keeps its barriers inside its step loop. B3's
CUDA C (the CuPy loop's and the graph WHILE loop's kernels) compiles with NVRTC
to an sm_90 cubin, and the graph's kernel arguments are marshalled as their C
types. Skipped, with the reason, where NVRTC or libdevice is missing
(``pip install nvidia-cuda-nvrtc``; CUDA_HOME pointing at a toolkit, as scripts/ptx_check.py says).
"""

from __future__ import annotations

import re

import pytest
from numba import types
from ptxtools import F32, ptx_of

PINGPONG_SIG = (types.int32[::1], types.int64, types.int32[::1], types.int32[::1], types.int64)


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


F64 = types.float64[::1]


def test_the_persistent_kernel_loops_with_its_barriers_inside_the_loop() -> None:
    import converge

    sig = (F64, F64, types.float64, types.int64, types.int64[::1], F64)
    ptx = ptx_of(converge._persistent_kernel(), sig)
    outer = max(loops(ptx), key=len)  # the step loop holds the tree's loop and every barrier
    assert sum("bar.sync" in line for line in outer) == ptx.count("bar.sync") == 3
    assert any("ld.shared.f64" in line for line in outer)


def _nvrtc_or_skip() -> None:
    try:
        from cuda.bindings import nvrtc

        status, *_ = nvrtc.nvrtcVersion()
    except Exception as exc:  # cuda.bindings or the NVRTC library missing: a fact of the machine
        pytest.skip(f"no NVRTC here ({type(exc).__name__}: {str(exc)[:200]})")
    if int(status) != 0:
        pytest.skip(f"no NVRTC here ({status})")


def test_the_graph_and_cupy_kernels_compile_to_an_sm_90_cubin() -> None:
    """What the GPU machine does first for B3's CuPy loop and graph WHILE loop (converge.py, graph_while.py)."""
    _nvrtc_or_skip()
    import converge
    import graph_while

    graph = graph_while.nvrtc_cubin(converge.GRAPH_CUDA, "b3_graph.cu", "90")
    for name in (*(k for ks in converge.GRAPH_BODIES.values() for k in ks), "cudaGraphSetConditional"):
        assert name.encode() in graph, name  # the kernels, and the driver's function they call
    assert b"relax_step" in graph_while.nvrtc_cubin(converge.STEP_CUDA, "b3_step.cu", "90")
    with pytest.raises(graph_while.GraphError, match="NVRTC could not compile bad.cu"):
        graph_while.nvrtc_cubin("this is not CUDA", "bad.cu", "90")


def test_kernel_arguments_are_marshalled_as_cells_of_their_c_types() -> None:
    import ctypes

    import graph_while

    args = [("ptr", 1 << 40), ("i32", -7), ("f64", 1e-300), ("u64", 2**63), ("handle", None)]
    ptrs, cells = graph_while.kernel_params(args, handle=12345)
    read = [ctypes.c_uint64, ctypes.c_int32, ctypes.c_double, ctypes.c_uint64, ctypes.c_uint64]
    got = [kind.from_address(int(p)).value for kind, p in zip(read, ptrs, strict=True)]
    assert got == [1 << 40, -7, 1e-300, 2**63, 12345] and len(cells) == len(args)
    with pytest.raises(ValueError, match="unknown kernel argument kind"):
        graph_while.kernel_params([("f16", 1.0)], handle=0)
