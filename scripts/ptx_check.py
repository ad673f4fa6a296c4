"""Compile generated kernels to PTX for sm_90 on a machine without a GPU.

Catches what only the CUDA target rejects (the simulator runs any Python) before
device time is spent. Needs NVRTC: ``pip install nvidia-cuda-nvrtc`` in the venv and
``CUDA_HOME`` pointing at a CUDA toolkit with libdevice (e.g. /usr/local/cuda-13.0).

Usage: python scripts/ptx_check.py [--registers] [--ptx DIR [--lineinfo]] [FILE.gasync ...]
(default: every sample and every contract case, traced and untraced). ``--registers`` also runs
``ptxas -v`` for sm_90 on each untraced kernel and prints its registers and spills;
``--ptx DIR`` writes each untraced kernel's PTX there (NAME.ptx), to read its fences,
atomics and local memory (``ld.local``: an array the compiler did not keep in registers);
with ``--lineinfo`` every device function's PTX carries its generated lines (each module is
copied beside it as NAME.py), so that ``ptxas -lineinfo`` and ``nvdisasm -hex -c -g`` name
the generated line of each instruction (scripts/sass_waits.py reads the listing).
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

os.environ.setdefault("CUDA_HOME", "/usr/local/cuda-13.0")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import numpy as np  # noqa: E402
from numba import cuda, typeof, types  # noqa: E402
from numba.cuda import dispatcher  # noqa: E402

import gasync  # noqa: E402
from gasync.codegen import generate  # noqa: E402
from gasync.runtime import buffers, launch, linked, module  # noqa: E402

# no device here: tell Numba it compiles for an sm_90 one
dispatcher.get_current_device = lambda: SimpleNamespace(compute_capability=(9, 0))  # type: ignore[attr-defined]


REGISTERS = False  # --registers
PTX_DIR: Path | None = None  # --ptx DIR
LINEINFO = False  # --lineinfo


def registers(ptx: str, cap: int | None) -> str:
    """ptxas's line on registers and spills of the kernel, for sm_90, at the generated module's
    ``MAX_REGISTERS`` (``cap``) where it has one, as numba-cuda hands it to the linker."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "k.ptx"
        src.write_text(ptx)
        ptxas = Path(os.environ["CUDA_HOME"]) / "bin" / "ptxas"
        limit = [f"--maxrregcount={cap}"] if cap else []
        run = subprocess.run([str(ptxas), "-v", "-arch=sm_90", *limit, str(src), "-o", str(Path(tmp) / "k.cubin")],
                             capture_output=True, text=True, check=False)  # fmt: skip
    used = re.findall(r"Used \d+ registers[^\n]*", run.stderr)
    spills = re.findall(r"\d+ bytes spill stores, \d+ bytes spill loads", run.stderr)
    return f"{used[-1] if used else run.stderr.strip()[-300:]}; {spills[-1] if spills else ''}"


def check(name: str, program: gasync.Program, inputs: dict[str, Any]) -> bool:
    ok = True
    for trace in (False, True):
        gen = generate(program.plan, trace=trace)
        mod, _ = module.load(gen, None)
        given = {b.name: np.zeros(b.shape, buffers.dtype_of(b.elem)) for b in program.plan.buffers if b.init == "input"}
        host = launch.host_arrays(gen, 4, {**given, **inputs})
        sig = (typeof(launch.device_state(mod, host)), types.int64, types.int64)
        try:
            ptx, _ = cuda.compile_ptx(mod.gasync_kernel.py_func, sig, cc=(9, 0), lineinfo=LINEINFO)
            if REGISTERS and not trace:
                print(f"     {name}: {registers(ptx, getattr(mod, 'MAX_REGISTERS', None))}")
            if PTX_DIR is not None and not trace:
                (PTX_DIR / f"{Path(name).stem}.ptx").write_text(ptx)
                if LINEINFO:
                    (PTX_DIR / f"{Path(name).stem}.py").write_text(Path(str(mod.__file__)).read_text())
        except Exception as exc:  # report every failure, then go on with the next program
            print(f"FAIL {name} (trace={trace}): {type(exc).__name__}: {str(exc)[:2000]}")
            ok = False
    if ok:
        print(f"ok   {name}")
    return ok


def main(paths: list[str]) -> int:
    global REGISTERS, PTX_DIR, LINEINFO
    REGISTERS = "--registers" in paths
    LINEINFO = "--lineinfo" in paths
    paths = [p for p in paths if p not in ("--registers", "--lineinfo")]
    if LINEINFO:  # every device function's lines, not the kernel's alone (before any module loads)
        cuda.jit = functools.partial(cuda.jit, lineinfo=True)
        linked.ENABLED = False  # gasync's helpers compiled here with theirs (runtime/linked.py keeps none)
    if "--ptx" in paths:
        k = paths.index("--ptx")
        PTX_DIR = Path(paths[k + 1])
        PTX_DIR.mkdir(parents=True, exist_ok=True)
        del paths[k : k + 2]
    programs: list[tuple[str, gasync.Program, dict[str, Any]]] = []
    if paths:
        programs = [(p, gasync.compile(p), {}) for p in paths]
    else:
        from contract.programs import CASES

        programs = [(str(p), gasync.compile(p), {}) for p in sorted((ROOT / "samples").glob("*.gasync"))]
        programs += [
            (c.name, gasync.compile_source(c.source, c.path or f"<{c.name}>", c.defines), dict(c.inputs)) for c in CASES
        ]
    failed = [name for name, prog, inputs in programs if not check(name, prog, inputs)]
    print(f"{len(programs) - len(failed)} of {len(programs)} compiled to PTX for sm_90")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
