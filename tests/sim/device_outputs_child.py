"""Run in a child with NUMBA_ENABLE_CUDASIM=1 by test_device_outputs.py: launch.execute (the code
the cuda backend runs, in this process) with the simulator's device arrays as inputs."""

from __future__ import annotations

import json
import sys

import numpy as np
from numba import cuda

import gasync
from gasync.runtime.launch import execute
from gasync.runtime.options import RunOptions

SOURCE = (
    "buffer x: f32[4] = input;\nbuffer y: f32[4] = zeros;\n"
    "task main { for i in 0..4 { y[i] = x[i] * 2.0; x[i] = 1.0; } }\n"
)


def main() -> None:
    gen = gasync.compile_source(SOURCE, "dev.gasync").generated
    out = {}
    for outputs in ("auto", "host", "device"):
        x = cuda.to_device(np.arange(4, dtype=np.float32))
        res = execute(gen, RunOptions("sim", {"x": x}, timeout_s=60, outputs=outputs), sim=True)
        y = res.buffers["y"]
        out[outputs] = {
            "x_is_the_input": res.buffers["x"] is x,
            "y_type": type(y).__name__,
            "x": x.copy_to_host().tolist(),
            "y": (y.copy_to_host() if hasattr(y, "copy_to_host") else y).tolist(),
            "json_y": res.to_json()["buffers"]["y"],
        }
    host = execute(gen, RunOptions("sim", {"x": np.arange(4, dtype=np.float32)}, timeout_s=60), sim=True)
    out["numpy"] = {"y_type": type(host.buffers["y"]).__name__}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
