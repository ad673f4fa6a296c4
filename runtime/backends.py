"""Choosing a backend and running a program on it.

``cuda`` runs in this process on a real GPU. ``sim`` runs in a child process
with ``NUMBA_ENABLE_CUDASIM=1`` set before Numba is imported there (the mode
is process-wide), which also makes ``--timeout`` enforceable: a simulated
kernel cannot be interrupted, but its process can be killed. Both run the
same generated module through runtime/launch.py.
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

from gasync.codegen import Generated
from gasync.runtime import outputs
from gasync.runtime.errors import BackendError, RunError, RunTimeoutError, worded
from gasync.runtime.options import Result, RunOptions

SIM_GRACE_S = 30.0  # start-up of the child (imports) on top of --timeout
SIM_DEFAULT_LIMIT_S = 600.0


def gpu_present() -> bool:
    """True if the CUDA driver loads and reports at least one device (no Numba import)."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    if lib.cuInit(0) != 0 or lib.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return False
    return count.value > 0


def choose(backend: str) -> str:
    if backend == "auto":
        return "cuda" if gpu_present() else "sim"
    if backend not in ("cuda", "sim"):
        raise BackendError(f"unknown backend '{backend}': expected auto, cuda or sim")
    if backend == "cuda" and not gpu_present():
        detail = "no CUDA GPU was found on this machine"
        raise worded(
            BackendError(f"backend 'cuda': {detail} (try backend='sim')"),
            f"--backend cuda: {detail} (try --backend sim)",
        )
    return backend


def run(gen: Generated, options: RunOptions) -> Result:
    backend = choose(options.backend)
    if backend == "cuda":
        from numba import config

        if config.ENABLE_CUDASIM:
            raise worded(
                BackendError("this process already runs Numba's CUDA simulator; use backend='sim'"),
                "this process already runs Numba's CUDA simulator; use --backend sim",
            )
        from gasync.runtime.launch import execute

        return execute(gen, options, sim=False)
    return _run_sim(gen, options)


def _run_sim(gen: Generated, options: RunOptions) -> Result:
    # the child gets host copies and gives back NumPy arrays (runtime/outputs.py)
    inputs = {name: outputs.to_host(x) for name, x in options.inputs.items()}
    options = dataclasses.replace(options, inputs=inputs, outputs="host")
    with tempfile.TemporaryDirectory(prefix="gasync-sim-") as tmp:
        job, out = Path(tmp) / "job.pkl", Path(tmp) / "result.pkl"
        from gasync.pipeline import deep  # a deeply nested plan pickles recursively

        job.write_bytes(deep(pickle.dumps, (gen, options)))
        env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONWARNINGS="ignore")
        limit = options.timeout_s + SIM_GRACE_S if options.timeout_s else SIM_DEFAULT_LIMIT_S
        cmd = [sys.executable, "-m", "gasync.runtime.worker", str(job), str(out)]
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=limit)
        except subprocess.TimeoutExpired:
            stopped = f"the simulated run did not finish within {limit:g}s and was stopped"
            if options.timeout_s:
                raise RunTimeoutError(stopped) from None
            raise worded(
                RunTimeoutError(f"{stopped} (pass a timeout to bound it)"), f"{stopped} (set --timeout to bound it)"
            ) from None
        if not out.exists():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
            raise BackendError("the simulator process failed:\n" + "\n".join(tail))
        status, payload = pickle.loads(out.read_bytes())
    if status == "error":
        raise payload
    assert isinstance(payload, Result)
    return payload


__all__ = ["RunError", "choose", "gpu_present", "run"]
