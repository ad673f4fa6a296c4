"""The simulator's child process: ``python -m gasync.runtime.worker JOB RESULT``.

Runs one generated program under Numba's CUDA simulator (the parent set
``NUMBA_ENABLE_CUDASIM=1``) and pickles back ``("ok", Result)`` or
``("error", RunError)``.
"""

from __future__ import annotations

import pickle
import sys
import threading
import traceback
import warnings
from pathlib import Path

SIM_RECURSION = 100_000
SIM_THREAD_STACK = 256 * 1024 * 1024  # bytes of (reserved, mostly untouched) stack per simulated thread


def main(job: str, result: str) -> int:
    import numpy as np

    from gasync.dsl.diagnostics import GasyncError
    from gasync.runtime.errors import DeviceError
    from gasync.runtime.launch import execute

    warnings.simplefilter("ignore")  # wrapping integer arithmetic warns in NumPy scalars
    # A chain of awaits is a chain of Python calls here (each poll calls its child's):
    # room for the deepest the compiler accepts, on the threads the simulator starts.
    sys.setrecursionlimit(SIM_RECURSION)
    threading.stack_size(SIM_THREAD_STACK)
    np.seterr(all="ignore")
    gen, options = pickle.loads(Path(job).read_bytes())
    try:
        payload: tuple[str, object] = ("ok", execute(gen, options, sim=True))
    except GasyncError as exc:
        payload = ("error", exc)
    except Exception as exc:  # a failure inside the simulated kernel
        last = traceback.format_exception(exc)[-1].strip()
        payload = ("error", DeviceError(f"the simulated kernel failed: {last}"))
    Path(result).write_bytes(pickle.dumps(payload))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
