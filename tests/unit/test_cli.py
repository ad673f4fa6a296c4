"""The command line, run as a user runs it: ``python -m gasync ...`` in a subprocess."""

from __future__ import annotations

from pathlib import Path

import pytest
from clirun import gasync

SAMPLES = sorted((Path(__file__).parents[2] / "samples").glob("*.gasync"))


def test_help_lists_the_commands() -> None:
    res = gasync("--help")
    assert res.returncode == 0
    assert "check" in res.stdout
    assert "compile" in res.stdout
    assert "async/await for GPUs" in res.stdout


def test_no_arguments_prints_help() -> None:
    res = gasync()
    assert res.returncode in (0, 2)  # click's no_args_is_help: usage on stdout
    assert "check" in res.stdout + res.stderr


def test_version() -> None:
    from gasync import __version__

    res = gasync("--version")
    assert res.returncode == 0
    assert res.stdout == f"gasync {__version__}\n"


def test_check_accepts_every_sample() -> None:
    res = gasync("check", *SAMPLES)
    assert res.returncode == 0, res.stderr
    for path in SAMPLES:
        assert f"{path}: ok" in res.stderr


def test_check_of_a_bad_file_prints_the_diagnostic(tmp_path: Path) -> None:
    bad = tmp_path / "bad.gasync"
    bad.write_text("task main {\n    let x = 5\n    let y = 6;\n}\n")
    res = gasync("check", "bad.gasync", cwd=tmp_path)
    assert res.returncode == 1
    assert res.stdout == ""
    assert res.stderr == (
        "bad.gasync:2:14: error[E0102]: expected ';', found keyword 'let'\n"
        "   |\n 2 |     let x = 5\n   |              ^\n"
    )
    assert "Traceback" not in res.stderr


def test_check_reports_each_file_and_fails_if_any_fails(tmp_path: Path) -> None:
    bad = tmp_path / "bad.gasync"
    bad.write_text("signal s\n")
    res = gasync("check", SAMPLES[0], bad)
    assert res.returncode == 1
    assert f"{SAMPLES[0]}: ok" in res.stderr
    assert f"{bad}:1:9: error[E0107]: unexpected end of file: expected ';'" in res.stderr
    assert "Traceback" not in res.stderr


def test_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    res = gasync("check", tmp_path / "nope.gasync")
    assert res.returncode == 2
    assert res.stderr == f"gasync: error: no such file: {tmp_path / 'nope.gasync'}\ntry 'gasync check --help'\n"
    assert "Traceback" not in res.stderr


def test_directory_is_a_usage_error(tmp_path: Path) -> None:
    res = gasync("check", tmp_path)
    assert res.returncode == 2
    assert "is a directory" in res.stderr


def test_unknown_command_is_a_usage_error() -> None:
    res = gasync("frobnicate")
    assert res.returncode == 2
    assert "Traceback" not in res.stderr


def test_compile_emit_ast_prints_the_tree() -> None:
    sample = next(p for p in SAMPLES if p.stem == "async_double")
    res = gasync("compile", sample, "--emit", "ast")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("Buffer(@2:1\n  name='out'\n")
    assert "FnDef(@4:1\n  name='async_double'\n  is_async=True\n" in res.stdout
    assert "Call(func='async_double', args=(IntLit(value=21)@9:27,))@9:14" in res.stdout
    assert "Await(" in res.stdout


@pytest.mark.parametrize("emit", ["bogus"])
def test_compile_rejects_an_unknown_stage(emit: str) -> None:
    res = gasync("compile", SAMPLES[0], "--emit", emit)
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
