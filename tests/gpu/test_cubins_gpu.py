"""Kept kernels on a real GPU (runtime/cubins.py): a later process launches the kernel its first
process kept, without Numba's compiler, and computes what Numba's own kernel computes.

Each run is a fresh process (a kept kernel matters where Numba's in-process dispatcher has not
compiled yet), over one cache folder, with ``cubins.ENABLED`` set in it: the first compiles and
keeps, the second finds the kept kernel (``stats["kernel_from"]``), the third runs with it off.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = [pytest.mark.gpu, pytest.mark.timeout(600)]

CHILD = """
import json, sys
import numpy as np
import gasync
from gasync.runtime import cubins
cubins.ENABLED = sys.argv[3] == "on"
program = gasync.compile(sys.argv[1])
x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64) / 4096
run = program.run(backend="cuda", cache_dir=sys.argv[2], inputs={"img": x})
print(json.dumps({"from": run.stats["kernel_from"], "path": run.stats["launch_path"],
                  "out": run.buffers["out"].tolist()}))
"""


def run_child(sample: Path, cache: Path, enabled: str) -> dict[str, object]:
    res = subprocess.run([sys.executable, "-c", CHILD, str(sample), str(cache), enabled],
                         capture_output=True, text=True, timeout=500)  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_a_later_process_launches_the_kept_kernel(tmp_path: Path) -> None:
    sample = Path(__file__).parents[2] / "samples" / "normalize.gasync"
    first = run_child(sample, tmp_path, "on")
    assert first["from"] == "Numba" and first["path"] == "prepared"
    assert list((tmp_path / "__pycache__").glob("*.cubin")) and list((tmp_path / "__pycache__").glob("*.kmeta"))
    second = run_child(sample, tmp_path, "on")
    assert second["from"] == "kept cubin" and second["path"] == "prepared"
    off = run_child(sample, tmp_path, "off")
    assert off["from"] == "Numba"
    assert np.array_equal(np.array(second["out"]), np.array(first["out"]))
    assert np.array_equal(np.array(off["out"]), np.array(first["out"]))
