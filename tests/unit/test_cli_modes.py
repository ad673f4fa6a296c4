"""The command line's modes: `-` for standard input, -q, --debug and internal errors, completion, phases."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gasync.cli import app as cli_app
from gasync.cli.params import parse_duration, parse_size
from gasync.cli.progress import Phases, compiled_line

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "async_double.gasync"
BAD = "task main {\n    let x = 5\n    let y = 6;\n}\n"


def gasync(*args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gasync", *args], capture_output=True, text=True, timeout=60, input=stdin,
        env=dict(os.environ, **(env or {})),
    )  # fmt: skip


def test_a_dash_reads_the_program_from_stdin() -> None:
    res = gasync("check", "-", stdin=BAD)
    assert res.returncode == 1
    assert res.stderr == (
        "<stdin>:2:14: error[E0102]: expected ';', found keyword 'let'\n   |\n 2 |     let x = 5\n   |              ^\n"
    )
    ok = gasync("check", "-", stdin=SAMPLE.read_text())
    assert (ok.returncode, ok.stderr) == (0, "<stdin>: ok\n")
    ast = gasync("compile", "-", "--emit", "ast", stdin=SAMPLE.read_text())
    assert ast.returncode == 0 and ast.stdout == gasync("compile", str(SAMPLE), "--emit", "ast").stdout


def test_quiet_check_prints_only_problems(tmp_path: Path) -> None:
    res = gasync("check", "-q", str(SAMPLE))
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    bad = tmp_path / "bad.gasync"
    bad.write_text(BAD)
    res = gasync("check", "-q", str(SAMPLE), str(bad))
    assert res.returncode == 1
    assert res.stderr.startswith(f"{bad}:2:14: error[E0102]: expected ';'")
    assert "ok" not in res.stderr


def boom(*_: object) -> str:
    raise RuntimeError("boom")


def test_an_internal_error_exits_3_with_a_hint(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli_app, "dump", boom)
    with pytest.raises(SystemExit) as exit_:
        cli_app.main(["compile", str(SAMPLE)])
    assert exit_.value.code == 3
    err = capsys.readouterr().err
    assert err == (
        "gasync: internal error: RuntimeError: boom\n"
        "gasync: this is a bug in gasync; re-run with --debug to see the traceback\n"
    )


def test_debug_shows_the_traceback(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(cli_app, "dump", boom)
    with pytest.raises(SystemExit) as exit_:
        cli_app.main(["compile", str(SAMPLE), "--debug"])
    assert exit_.value.code == 3
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):\n")
    assert 'in boom\n    raise RuntimeError("boom")\n' in err
    assert err.endswith("gasync: internal error: RuntimeError: boom\n")


def test_click_errors_come_out_in_gasyncs_style() -> None:
    res = gasync("frobnicate")
    assert res.returncode == 2
    assert res.stderr == "gasync: error: No such command 'frobnicate'.\ntry 'gasync --help'\n"
    res = gasync("compile", str(SAMPLE), "--emit", "bogus")
    assert res.returncode == 2
    assert res.stderr == (
        "gasync: error: Invalid value for '--emit': 'bogus' is not one of 'ast', 'plan', 'py'.\n"
        "try 'gasync compile --help'\n"
    )
    res = gasync("check", "--backend", "sim", str(SAMPLE))  # check has no --backend
    assert (res.returncode, res.stdout) == (2, "")
    assert res.stderr == "gasync: error: No such option '--backend'.\ntry 'gasync check --help'\n"


def test_shell_completion() -> None:
    # the script `--show-completion` prints, asked for bash by name: the flag alone finds the
    # shell among the process's parents, which a detached run (CI) may not have
    script = gasync(env={"_GASYNC_COMPLETE": "source_bash"})
    assert script.returncode == 0
    assert "_GASYNC_COMPLETE=complete_bash" in script.stdout
    words = gasync(env={"_GASYNC_COMPLETE": "complete_bash", "COMP_WORDS": "gasync ch", "COMP_CWORD": "1"})
    assert words.stdout.split() == ["check"]
    choices = gasync(
        env={"_GASYNC_COMPLETE": "complete_bash", "COMP_WORDS": "gasync run x --backend ", "COMP_CWORD": "4"}
    )
    assert choices.stdout.split() == ["cuda", "sim", "auto"]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("10s", 10.0), ("500ms", 0.5), ("250us", 250e-6), ("2m", 120.0), ("1h", 3600.0), ("3", 3.0), ("7ns", 7e-9)],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


def test_a_zero_delay_is_the_same_in_every_unit() -> None:
    assert {parse_duration(t, allow_zero=True) for t in ("0", "0s", "0ms", "0us", "0.0")} == {0.0}
    with pytest.raises(ValueError, match="must be positive"):
        parse_duration("0ms")


@pytest.mark.parametrize(
    ("text", "size"), [("4096", 4096), ("1GB", 10**9), ("1GiB", 1 << 30), ("2G", 2 << 30), ("500 MB", 500 * 10**6)]
)
def test_sizes(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "lots", "1XB", "-1GB"])
def test_bad_sizes(text: str) -> None:
    with pytest.raises(ValueError, match="expected a size such as 1GB"):
        parse_size(text)


def test_the_spinner_shows_the_phase_and_its_time() -> None:
    phases = Phases("p.gasync")
    phases.started = 100.0
    phases.enter("compiling and running")
    phases.phase_started = 101.0
    assert phases.text(now=103.25) == "p.gasync: compiling and running (2.2 s, 3.2 s in all)"


def test_the_compiled_line() -> None:
    assert compiled_line(1.234, cached=True) == "compiled in 1.23 s (cached)"
    assert compiled_line(20.0, cached=False) == "compiled in 20.00 s"


def test_json_of_a_program_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.gasync"
    path.write_text(BAD)
    res = gasync("run", str(path), "--json")
    assert res.returncode == 1
    doc = json.loads(res.stdout)
    headline = f"{path}:2:14: error: expected ';', found keyword 'let'"
    assert doc["error"] == {"kind": "program", "message": headline, "exit_status": 1}
    assert [(d["code"], d["line"], d["column"]) for d in doc["diagnostics"]] == [("E0102", 2, 14)]
    assert res.stderr.startswith(headline.replace("error:", "error[E0102]:") + "\n")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
@pytest.mark.parametrize("args", [["graph", str(SAMPLE)], ["check", str(SAMPLE), "--json"], ["--help"]])
def test_standard_output_that_cannot_be_written_is_one_line_not_a_bug(args: list[str]) -> None:
    with open("/dev/full", "w") as full:
        res = subprocess.run(
            [sys.executable, "-m", "gasync", *args], stdout=full, stderr=subprocess.PIPE, text=True, timeout=60
        )
    assert res.returncode == 1
    assert res.stderr.splitlines()[-1] == "gasync: error: cannot write standard output: No space left on device"
    assert "internal error" not in res.stderr and "Traceback" not in res.stderr


def test_a_closed_standard_output_is_said_once() -> None:
    cmd = f"{sys.executable} -m gasync graph {SAMPLE} >&-"
    res = subprocess.run(cmd, shell=True, stderr=subprocess.PIPE, text=True, timeout=60)
    assert res.returncode == 1
    assert res.stderr == "gasync: error: cannot write standard output: standard output is closed\n"


def test_a_reader_that_goes_away_ends_the_writer_quietly() -> None:
    from gasync.cli.report import CheckedStdout, StdoutError, stdout_failed

    class Gone:
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    with pytest.raises(StdoutError) as info:
        CheckedStdout(Gone()).write("x")
    assert info.value.broken
    assert stdout_failed(StdoutError("the reader closed the pipe")) == 1  # (a full disk: said, status 1)
