"""The Python API: typed (py.typed, checked by mypy as a user would), and errors that carry their
diagnostic (path, line, column, code) in the API's words rather than the command line's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import gasync
from gasync.dsl.diagnostics import ErrorGroup, GasyncError

ROOT = Path(__file__).resolve().parents[2]
TWO = "buffer out: f32[2] = zeros;\ntask main {\n    let x: i32 = 1.5;\n    out[0] = x;\n}\n"


def test_a_compile_error_names_its_file_line_column_and_code() -> None:
    with pytest.raises(ErrorGroup) as info:
        gasync.compile_source(TWO, "two.gasync")
    assert str(info.value).splitlines() == [
        "two.gasync:3:18: error[E0204]: mismatched types: expected i32, found floating-point literal",
        "two.gasync:4:14: error[E0204]: mismatched types: expected f32, found i32",
    ]
    first = info.value.errors[0]
    assert (first.path, first.line, first.column, first.code) == ("two.gasync", 3, 18, "E0204")
    assert first.diagnostic == {
        "file": "two.gasync", "line": 3, "column": 18, "end_line": 3, "end_column": 21, "severity": "error",
        "code": "E0204", "message": "mismatched types: expected i32, found floating-point literal", "notes": [],
        "spans": [{"line": 3, "column": 18, "end_line": 3, "end_column": 21, "primary": True, "label": ""}],
    }  # fmt: skip


def test_a_syntax_error_and_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(GasyncError) as info:
        gasync.compile_source("task main {\n    let x = 5\n}\n", "s.gasync")
    assert str(info.value) == "s.gasync:2:14: error[E0102]: expected ';', found '}'"
    with pytest.raises(GasyncError) as missing:
        gasync.compile(tmp_path / "nope.gasync")
    assert str(missing.value) == f"{tmp_path / 'nope.gasync'}: error[E0001]: no such file: {tmp_path / 'nope.gasync'}"


def test_defines_are_named_as_the_api_names_them() -> None:
    with pytest.raises(ErrorGroup) as info:
        gasync.compile_source("const N: i32 = 1;\ntask main { }\n", "d.gasync", defines={"N": "x", "M": 2})
    assert [e.message for e in info.value.errors] == [
        "defines['M']: the program has no const named 'M'",
        "defines['N']: 'x' is not a valid i32",
    ]
    assert "-D" not in str(info.value)


def test_the_package_is_typed() -> None:
    assert (Path(gasync.__file__).parent / "py.typed").is_file()
    assert '"gasync" = ["py.typed"]' in (ROOT / "pyproject.toml").read_text()


def test_mypy_checks_a_users_program_against_the_api(tmp_path: Path) -> None:
    (tmp_path / "gasync").symlink_to(ROOT)  # the repository root is the package, as `make typecheck` does
    (tmp_path / "user.py").write_text(
        "import gasync\n"
        "prog = gasync.compile('x.gasync', defines={'N': 4})\n"
        "res = prog.run(backend='sim', timeout=1.5, outputs='host')\n"
        "n: int = res.stats['polls']\n"
        "reveal_type(prog)\n"
        "prog.run(backend='gpu')\n"
    )
    env = dict(os.environ, MYPYPATH=str(tmp_path))
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--follow-imports=silent", "user.py"],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=240,
    )  # fmt: skip
    lines = [line for line in proc.stdout.splitlines() if line.startswith("user.py:")]
    assert lines[0] == 'user.py:5: note: Revealed type is "gasync.api.Program"'
    assert lines[1].startswith('user.py:6: error: Argument "backend" to "run" of "Program" has incompatible type')
    assert len(lines) == 2, proc.stdout
