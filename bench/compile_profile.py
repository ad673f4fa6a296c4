"""Where a cold compile goes (B6): ``python3 bench/compile_profile.py [FILE.gasync] [--json OUT]``.

In one fresh process, with no GPU needed: the imports, gasync's own stages
(parse and plan, code generation, loading the generated module), then
Numba-CUDA's compile of the kernel to PTX for sm_90 split by exclusive time
into its type inference, its lowering to LLVM IR, NVVM (LLVM IR -> PTX) and
the rest of its pipeline (bytecode analysis, rewrites, linking), and last
``ptxas`` on the PTX, which stands for the driver's PTX -> SASS step that a
GPU run pays. Times are this process's CPU seconds (ptxas's: wall), so other
work on a shared machine moves them less. Needs NVRTC and a CUDA toolkit as scripts/ptx_check.py does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

T0 = time.process_time()
os.environ.setdefault("CUDA_HOME", "/usr/local/cuda-13.0")
ROOT = Path(__file__).resolve().parent.parent

import numpy as np  # noqa: E402
from numba import cuda, typeof, types  # noqa: E402
from numba.cuda import dispatcher  # noqa: E402
from numba.cuda.core import typed_passes  # noqa: E402
from numba.cuda.cudadrv import nvvm  # noqa: E402

import gasync  # noqa: E402
from gasync.codegen import generate  # noqa: E402
from gasync.runtime import buffers, hostgc, launch, module  # noqa: E402

IMPORTS_S = time.process_time() - T0
dispatcher.get_current_device = lambda: SimpleNamespace(compute_capability=(9, 0))  # type: ignore[attr-defined]

SPENT: dict[str, float] = {"typing": 0.0, "lowering": 0.0, "nvvm": 0.0}
BY_FN: dict[str, float] = {}  # a function's own typing and lowering (not its callees')
STACK: list[list[float]] = []  # per open timed call: [its start, time spent in timed calls inside it]


def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, adding its exclusive time (not counting timed calls inside it) to SPENT[name]."""

    def wrapper(*args: Any, **kw: Any) -> Any:
        STACK.append([time.process_time(), 0.0])
        try:
            return fn(*args, **kw)
        finally:
            start, inner = STACK.pop()
            total = time.process_time() - start
            SPENT[name] += total - inner
            state = args[1] if len(args) > 1 else None
            fn_id = getattr(state, "func_id", None)
            if fn_id is not None:
                key = fn_id.func_qualname
                BY_FN[key] = BY_FN.get(key, 0.0) + total - inner
            if STACK:
                STACK[-1][1] += total

    return wrapper


typed_passes.BaseTypeInference.run_pass = timed("typing", typed_passes.BaseTypeInference.run_pass)  # type: ignore[method-assign]
typed_passes.BaseNativeLowering.run_pass = timed("lowering", typed_passes.BaseNativeLowering.run_pass)  # type: ignore[method-assign]
IR_LINES = [0]  # lines of LLVM IR handed to NVVM: a count without the seconds' spread


def _counted(fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(llvmir: Any, **kw: Any) -> Any:
        IR_LINES[0] += sum(m.count("\n") for m in ([llvmir] if isinstance(llvmir, str) else llvmir))
        return fn(llvmir, **kw)

    return wrapper


nvvm.compile_ir = timed("nvvm", _counted(nvvm.compile_ir))


def ptxas_s(ptx: str) -> float:
    """Wall seconds of ``ptxas`` on ``ptx`` for sm_90 (0.0 where the toolkit has none)."""
    if not (Path(os.environ["CUDA_HOME"]) / "bin" / "ptxas").exists():
        return 0.0
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "k.ptx"
        src.write_text(ptx)
        t = time.perf_counter()
        subprocess.run(
            [str(Path(os.environ["CUDA_HOME"]) / "bin" / "ptxas"), "-arch=sm_90", str(src), "-o", str(Path(tmp) / "k")],
            check=True,
            capture_output=True,
        )
        return time.perf_counter() - t


def profile(path: str) -> dict[str, Any]:
    t = time.process_time()
    program = gasync.compile(path)
    t_plan = time.process_time()
    gen = generate(program.plan)
    t_gen = time.process_time()
    mod, _ = module.load(gen, None)
    t_load = time.process_time()
    given = {b.name: np.zeros(b.shape, buffers.dtype_of(b.elem)) for b in program.plan.buffers if b.init == "input"}
    host = launch.host_arrays(gen, 4, given)
    sig = (typeof(launch.device_state(mod, host)), types.int64, types.int64)
    t_sig = time.process_time()
    with hostgc.sparse():  # as a run compiles (runtime/launch.py, _numba_compile)
        ptx, _ = cuda.compile_ptx(mod.gasync_kernel.py_func, sig, cc=(9, 0))
    t_ptx = time.process_time()
    numba_s = t_ptx - t_sig
    stages = {
        "imports (numba, gasync)": IMPORTS_S,
        "gasync: parse + plan": t_plan - t,
        "gasync: generate": t_gen - t_plan,
        "gasync: load the module": t_load - t_gen,
        "gasync: host arrays + signature": t_sig - t_load,
        "numba: type inference": SPENT["typing"],
        "numba: lowering to LLVM IR": SPENT["lowering"],
        "numba: NVVM (LLVM IR -> PTX)": SPENT["nvvm"],
        "numba: the rest of its pipeline": numba_s - sum(SPENT.values()),
        "ptxas (stands for the driver's PTX -> SASS)": ptxas_s(ptx),
    }
    lines = gen.source.count("\n")
    top = dict(sorted(BY_FN.items(), key=lambda kv: -kv[1]))
    return {
        "program": path,
        "generated_lines": lines,
        "ptx_lines": ptx.count("\n"),
        "llvm_ir_lines": IR_LINES[0],
        "stages_s": stages,
        "functions": len(BY_FN),
        "slowest_functions_s": top,
    }


def main(argv: list[str]) -> int:
    out = None
    if "--json" in argv:
        k = argv.index("--json")
        out, argv = argv[k + 1], argv[:k] + argv[k + 2 :]
    path = argv[0] if argv else str(ROOT / "samples" / "stencil2d.gasync")
    res = profile(path)
    total = sum(res["stages_s"].values())
    print(
        f"{res['program']}: {res['generated_lines']} generated lines, {res['llvm_ir_lines']:,} lines of LLVM IR "
        f"to NVVM, {res['ptx_lines']} PTX lines"
    )
    print("| stage | s | share |\n| --- | ---: | ---: |")
    for name, s in res["stages_s"].items():
        print(f"| {name} | {s:.2f} | {100 * s / total:.0f}% |")
    print(f"| total | {total:.2f} | |")
    print(f"{res['functions']} functions typed and lowered; the slowest (own typing + lowering, s):")
    for name, sec in list(res["slowest_functions_s"].items())[:15]:
        print(f"  {sec:6.2f}  {name}")
    if out:
        Path(out).write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
