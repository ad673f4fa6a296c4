"""`gasync run` option values that are wrong: a usage error (exit 2), never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SAMPLE = str(Path(__file__).resolve().parents[2] / "samples" / "async_double.gasync")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--timeout", "abc"], "Invalid value for --timeout: expected a duration such as 10s or 500ms, found 'abc'"),
        (["--timeout", "-3s"], "Invalid value for --timeout: a duration must be positive, found '-3s'"),
        (["--signal", "stop"], "Invalid value for '--signal': expected NAME=DELAY such as stop=5ms, found 'stop'"),
        (["--executor", "foo"], "Invalid value for '--executor': 'foo' is not one of 'queue', 'spin'"),
    ],
)
def test_bad_option_values_are_usage_errors(args: list[str], message: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "gasync", "run", SAMPLE, *args], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2
    assert f"gasync: error: {message}" in proc.stderr
    assert "Traceback" not in proc.stderr
