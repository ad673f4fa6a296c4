"""The command line, run as a user runs it: ``python -m gasync ...`` in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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


def gasync_bytes(*args: str | Path, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "gasync", *map(str, args)], capture_output=True, input=stdin, timeout=60
    )


def test_stdin_that_is_not_utf8_is_e0001_as_a_file_is(tmp_path: Path) -> None:
    (tmp_path / "latin.gasync").write_bytes(b"\xff\xfe task main {}")
    file = gasync_bytes("check", tmp_path / "latin.gasync", "--json")
    stdin = gasync_bytes("check", "-", "--json", stdin=b"\xff\xfe task main {}")
    for res, label in ((file, str(tmp_path / "latin.gasync")), (stdin, "<stdin>")):
        assert res.returncode == 2, res.stderr
        assert res.stderr.decode() == f"gasync: error: not UTF-8 text: {label} (byte 0)\ntry 'gasync check --help'\n"
        assert [d["code"] for d in json.loads(res.stdout)] == ["E0001"]


def test_a_device_is_refused_rather_than_read_for_ever() -> None:
    res = gasync_bytes("check", "/dev/zero")
    assert res.returncode == 2
    message = "gasync: error: is a device, not a .gasync file: /dev/zero\ntry 'gasync check --help'\n"
    assert res.stderr.decode() == message


def test_a_program_past_16_mib_is_refused(tmp_path: Path) -> None:
    big = b"// " + b"x" * (16 << 20) + b"\ntask main {}\n"
    (tmp_path / "big.gasync").write_bytes(big)
    for args, stdin, label in ((["check", tmp_path / "big.gasync"], b"", str(tmp_path / "big.gasync")),
                               (["check", "-"], big, "<stdin>")):  # fmt: skip
        res = gasync_bytes(*args, stdin=stdin)
        assert res.returncode == 2
        assert res.stderr.decode().splitlines()[0] == (
            f"gasync: error: {label} is larger than 16 MiB, the most a program may be"
        )


def test_a_pipe_is_read_as_a_file(tmp_path: Path) -> None:
    fifo = tmp_path / "p.gasync"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"printf 'task main {{ let x = 1 }}' > '{fifo}'"])
    res = gasync_bytes("check", fifo)
    writer.wait(timeout=60)
    # one read: the diagnostic quotes the line without opening the pipe again (which would block)
    assert res.returncode == 1
    assert res.stderr.decode().splitlines()[:3] == [
        f"{fifo}:1:22: error[E0102]: expected ';', found '}}'",
        "   |",
        " 1 | task main { let x = 1 }",
    ]


def test_a_lone_cr_ends_a_line_in_a_file_and_on_stdin(tmp_path: Path) -> None:
    # docs/language.md, "Lexical structure": LF, CR LF or a lone CR
    text = b"task main {}\r// a comment\rlet\r"
    (tmp_path / "cr.gasync").write_bytes(text)
    for args, stdin, label in ((["check", tmp_path / "cr.gasync"], b"", str(tmp_path / "cr.gasync")),
                               (["check", "-"], text, "<stdin>")):  # fmt: skip
        res = gasync_bytes(*args, stdin=stdin)
        assert res.returncode == 1
        assert res.stderr.decode().startswith(f"{label}:3:1: error[E0101]: expected item")


def test_a_bad_define_value_is_a_usage_error_e0212(tmp_path: Path) -> None:
    # docs/decisions-planner.md once said exit status 1
    (tmp_path / "d.gasync").write_text("const N: i32 = 4;\ntask main { }\n")
    res = gasync_bytes("check", tmp_path / "d.gasync", "-D", "N=abc", "--json")
    assert res.returncode == 2
    assert [d["code"] for d in json.loads(res.stdout)] == ["E0212"]
