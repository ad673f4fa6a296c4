"""A program without a task is an error at check and at run (issue 10): it would run nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from clirun import gasync

from gasync.dsl import parse
from gasync.dsl.diagnostics import ErrorGroup
from gasync.planner import errors as E
from gasync.planner import plan

EMPTY_FILE_DIAGNOSTIC = (
    "empty.gasync:1:1: error[E0201]: this program has no task, so nothing would run\n"
    "   |\n"
    " 1 | \n"
    "   | ^\n"
    "  = note: add a task, e.g. 'task main { ... }': a program runs its tasks and nothing else\n"
)


@pytest.mark.parametrize("command", [("check",), ("run", "--backend", "sim")])
def test_an_empty_file_fails_check_and_run(tmp_path: Path, command: tuple[str, ...]) -> None:
    (tmp_path / "empty.gasync").write_text("")
    res = gasync(command[0], "empty.gasync", *command[1:], cwd=tmp_path)
    assert res.returncode == 1
    assert res.stderr.endswith(EMPTY_FILE_DIAGNOSTIC), res.stderr


def test_items_without_a_task_point_at_the_first_line() -> None:
    src = "// constants only\nconst N: i32 = 4;\nbuffer x: f32[N] = zeros;\n"
    with pytest.raises(ErrorGroup) as info:
        plan(parse(src, "t.gasync"))
    [err] = info.value.errors
    assert isinstance(err, E.NoTaskError)
    assert (err.span.line, err.span.column) == (1, 1)


def test_other_errors_are_reported_with_it() -> None:
    with pytest.raises(ErrorGroup) as info:
        plan(parse("const N: i32 = 1 << 40;\n", "t.gasync"))
    assert [type(e) for e in info.value.errors] == [E.NoTaskError, E.ConstEvalError]


def test_check_without_externs_imports_no_numba(tmp_path: Path) -> None:
    # check must stay fast: only a program with an extern fn pays for importing Numba
    sample = Path(__file__).parents[2] / "samples" / "jacobi.gasync"
    script = (
        f"import sys, gasync.pipeline as p; p.check({str(sample)!r}); "
        "print(sorted(m for m in sys.modules if m.startswith('numba')))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "[]\n"
