"""The ``gasync`` command as a user runs it: ``python -m gasync ...`` in a subprocess (every tier)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def gasync(*args: str | Path, cwd: Path | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gasync", *map(str, args)], capture_output=True, text=True, timeout=timeout, cwd=cwd
    )
