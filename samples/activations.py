"""Device functions for samples/extern_gelu.gasync: an existing Numba-CUDA library.

`extern fn gelu(v: f32) -> f32 from "activations:gelu";` imports ``gelu`` from
this module (found beside the program) when the program is compiled.
"""

import math

from numba import cuda, float32


@cuda.jit(device=True)
def gelu(v):
    # the tanh approximation of GELU
    inner = float32(0.7978845608) * (v + float32(0.044715) * v * v * v)
    return float32(0.5) * v * (float32(1.0) + float32(math.tanh(inner)))
