"""The group samples' results on a GPU (scripts/gpu_check.sh, part groups): each checked with
NumPy, then the staged pipeline at the language spec's sizes. Usage: python3 scripts/groups_gpu.py OUTDIR"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))


def affine(x: np.ndarray, y: np.ndarray) -> bool:
    return bool(np.array_equal(y, np.float32(2) * x + np.float32(1)))


def main(out: Path) -> int:
    import gasync

    ok = True
    for name in ("staged_pipeline", "tiled_matmul"):
        path = out / f"groups-{name}.json"
        if not path.exists() or not path.read_text().strip():
            print(f"{name}: no result")
            ok = False
            continue
        b = {k: np.asarray(v, np.float32) for k, v in json.loads(path.read_text())["buffers"].items()}
        good = (
            affine(b["x"], b["y"])
            if name == "staged_pipeline"
            else bool(np.allclose(b["c"], b["a"].astype(np.float64) @ b["b"].astype(np.float64), rtol=1e-5))
        )
        print(f"{name}: {'ok' if good else 'WRONG'}")
        ok = ok and good
    spec = {"GROUPS": 64, "TILES": 16, "TILE": 4096}
    res = gasync.compile(ROOT / "samples" / "staged_pipeline.gasync", defines=spec).run(backend="cuda", timeout=60)
    good = affine(res.buffers["x"], res.buffers["y"]) and res.shared["checked"] == 1
    print(
        f"staged_pipeline at the spec's sizes: {'ok' if good else 'WRONG'}; {res.stats['kernel_ms']} ms, "
        f"{res.stats['executors']} executors in {res.stats['blocks']} blocks"
    )
    return 0 if ok and good else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
