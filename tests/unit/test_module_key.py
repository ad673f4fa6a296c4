"""The generated module's file name covers every gasync module the kernel runs.

Numba's on-disk cache keys a kernel by its own bytecode only, so an edit of a
device helper module (devicesync.py, not just devicelib.py) must give the
generated module a new name, or a stale compiled kernel is loaded.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import gasync
from gasync.runtime.module import device_layer, imported_modules

ROOT = Path(gasync.__file__).resolve().parent
SAMPLE = ROOT / "samples" / "join_select.gasync"


def test_imported_modules_reads_both_import_forms() -> None:
    text = "from gasync.runtime import devicelib as dl, devicesync\nimport gasync.runtime.trace\nimport math\n"
    assert imported_modules(text) == [
        "gasync.runtime",
        "gasync.runtime.devicelib",
        "gasync.runtime.devicesync",
        "gasync.runtime.trace",
    ]


def test_every_runtime_module_the_generated_code_imports_is_hashed() -> None:
    source = gasync.compile(SAMPLE).source
    names = {p.name for p in device_layer(source)}
    imported = {m.rsplit(".", 1)[1] + ".py" for m in imported_modules(source) if m.startswith("gasync.runtime.")}
    assert imported == {"deviceexec.py", "devicelib.py", "devicesync.py", "devicevec.py"}
    assert imported <= names


PROBE = """
import json, sys
import gasync
from gasync.runtime.module import load, module_path
prog = gasync.compile(sys.argv[1])
path = module_path(prog.generated, sys.argv[2])
module, loaded = load(prog.generated, sys.argv[2])
print(json.dumps({"path": str(path), "loaded": str(loaded), "helper": module.dsync.__file__}))
"""


def _probe(copy: Path, cache: Path) -> dict[str, str]:
    env = {"PYTHONPATH": str(copy), "PATH": "/usr/bin:/bin", "NUMBA_ENABLE_CUDASIM": "1"}
    res = subprocess.run(
        [sys.executable, "-c", PROBE, str(SAMPLE), str(cache)], capture_output=True, text=True, env=env, timeout=120
    )
    assert res.returncode == 0, res.stderr[-2000:]
    out: dict[str, str] = json.loads(res.stdout.strip().splitlines()[-1])
    return out


def test_editing_a_copy_of_devicesync_loads_a_new_module(tmp_path: Path) -> None:
    copy = tmp_path / "site" / "gasync"
    skip = shutil.ignore_patterns(".*", "__pycache__", "build", "tests", "bench", "docs", "samples", "reference")
    shutil.copytree(ROOT, copy, ignore=skip)
    cache = tmp_path / "cache"
    before = _probe(tmp_path / "site", cache)
    assert before["helper"] == str(copy / "runtime" / "devicesync.py")  # the copy runs, not the checkout
    assert _probe(tmp_path / "site", cache)["path"] == before["path"]  # unchanged: the same module
    helper = copy / "runtime" / "devicesync.py"
    helper.write_text(helper.read_text() + "\n# an edit that changes no generated text\n")
    after = _probe(tmp_path / "site", cache)
    assert after["path"] != before["path"]
    assert Path(after["loaded"]).exists() and Path(before["loaded"]).exists()


def test_the_layer_follows_parenthesised_imports() -> None:
    """devicesync.py imports the channel helpers and the memory orders in ``from x import (``
    lists: their files are part of every channel program's key."""
    from gasync.runtime import module

    names = {f.name for f in module.device_layer("from gasync.runtime import devicesync as dsync\n")}
    assert {"devicesync.py", "devicechan.py", "devicelib.py", "order.py", "state.py"} <= names
