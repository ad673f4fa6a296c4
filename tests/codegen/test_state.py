"""G, the kernel's one argument: runtime/state.py's groups, then the trace and the program's arrays.

The host allocates every array the groups name and nothing else, and the type of G
that Numba's disk cache keys a compiled kernel on is the same type in a new process
(the generated module's ``State`` class pickles by reference), so a cached kernel is
found again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import gasync
from gasync.runtime import launch
from gasync.runtime.state import GROUPS, STATE_FIELDS

ROOT = Path(gasync.__file__).resolve().parent
SAMPLE = ROOT / "samples" / "join_select.gasync"


def test_the_host_allocates_exactly_the_arrays_of_g() -> None:
    gen = gasync.compile(SAMPLE).generated
    grouped = [name for _, group in GROUPS for name in group._fields]
    assert len(grouped) == len(set(grouped)), "an array named in two groups"
    assert set(launch.host_arrays(gen, 2, {})) == {*grouped, "TRACE", *gen.arrays}
    assert gen.arrays == tuple(f"B_{b.name}" for b in gen.plan.buffers) + tuple(f"S_{s.name}" for s in gen.plan.shared)


PROBE = """
import json, pickle, sys
import gasync
from numba.cuda.serialize import dumps
from gasync.runtime import launch
from gasync.runtime.module import load
prog = gasync.compile(sys.argv[1])
module, _ = load(prog.generated, sys.argv[2])
g = launch.device_state(module, launch.host_arrays(prog.generated, 2, {}))
ty = module.gasync_kernel.typeof_pyval(g)  # the type launch.execute compiles the kernel for
key = sys.argv[3]
if sys.argv[4] == "write":
    open(key, "wb").write(dumps(ty))  # as Numba's cache index pickles a kernel's signature
    same = None
else:
    same = pickle.loads(open(key, "rb").read()) == ty
print(json.dumps({"fields": list(module.State._fields), "same": same}))
"""


def _probe(cache: Path, key: Path, mode: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}  # the CUDA target's types
    res = subprocess.run(
        [sys.executable, "-c", PROBE, str(SAMPLE), str(cache), str(key), mode],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    out: dict[str, object] = json.loads(res.stdout.strip().splitlines()[-1])
    return out


def test_the_type_of_g_is_the_same_in_a_new_process(tmp_path: Path) -> None:
    gen = gasync.compile(SAMPLE).generated
    first = _probe(tmp_path / "cache", tmp_path / "key.pkl", "write")
    assert first["fields"] == [*STATE_FIELDS, *gen.arrays]
    assert _probe(tmp_path / "cache", tmp_path / "key.pkl", "read")["same"] is True
