"""Run in a child with NUMBA_ENABLE_CUDASIM=1 by test_vector_maps_sim.py: one program of
tests/vector_programs.py through launch.execute in this process, with devicevec's 16-byte
moves counted (the generated module calls them through the module, at run time). Prints
``{"buffers": {name: list}, "ld": n, "st": n, "cp": n, "bk": n}`` as JSON (``cp``: 16-byte copies
from global into shared memory, ``cp.async`` on the GPU; ``bk``: the copy engine's bulk copies).

Usage: python vector_moves_child.py PROGRAM [--bulk] [--rotate] NAME=VALUE ...  (--bulk: with
codegen/groups.py's BULK_COPY on; --rotate: with codegen/vectors.py's ROTATE on)"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import vector_programs  # noqa: E402

import gasync  # noqa: E402
from gasync.codegen import groups, vectors  # noqa: E402
from gasync.runtime import devicevec, worker  # noqa: E402
from gasync.runtime.launch import execute  # noqa: E402
from gasync.runtime.options import RunOptions  # noqa: E402

COUNTS = {"ld": 0, "st": 0, "cp": 0, "bk": 0}


def _count(name: str) -> None:
    real = getattr(devicevec, name)

    def counted(*args):  # type: ignore[no-untyped-def]
        COUNTS["bk" if name == "bulk_copy" else name[:2]] += 1
        return real(*args)

    setattr(devicevec, name, counted)


def main() -> None:
    worker.setup()
    source = getattr(vector_programs, sys.argv[1])
    if "--bulk" in sys.argv:
        groups.BULK_COPY = True
    vectors.ROTATE = "--rotate" in sys.argv
    defines = {k: int(v) for k, v in (a.split("=") for a in sys.argv[2:] if not a.startswith("--"))}
    for name in ("ld_v4", "ld_v2", "lds_v4", "lds_v2", "st_v4", "st_v2", "sts_v4", "sts_v2", "cp_async16", "bulk_copy"):
        _count(name)
    gen = gasync.compile_source(source, "v.gasync", defines).generated
    assert ("tt = w % nt" in gen.source) == vectors.ROTATE, "the rotated walk is generated exactly when asked"
    res = execute(gen, RunOptions("sim", {}, timeout_s=240, outputs="host"), sim=True)
    buffers = {k: v.tolist() for k, v in res.buffers.items()}
    print(json.dumps({"buffers": buffers, **COUNTS}))


if __name__ == "__main__":
    main()
