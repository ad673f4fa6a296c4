"""`gasync run` option values that are wrong: a usage error (exit 2) before anything compiles.

Each case runs the CLI as a user does, with a temporary cache directory, and checks
the exact message, the hint line, the exit status, and that nothing was compiled
(no "running ... on backend" line, no module written to the cache).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

SAMPLE = str(Path(__file__).resolve().parents[2] / "samples" / "async_double.gasync")
# every item is used (no W0218 warning), so stderr holds only the usage error
PROGRAM = """
const N: i32 = 4;
const K: i32 = 2;
buffer x: f32[4] = input;
buffer y: f32[4] = zeros;
signal stop;
task main {
    for i in 0..N { y[i] = x[i] * K as f32; }
    stop.wait().await;
}
"""
HINT = "try 'gasync run --help'\n"
X_LINE = 4  # buffer x: its line in PROGRAM


@pytest.fixture
def prog(tmp_path: Path) -> Path:
    (tmp_path / "p.gasync").write_text(PROGRAM)
    np.save(tmp_path / "x.npy", np.zeros(4, np.float32))
    return tmp_path


def gasync(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, GASYNC_CACHE_DIR=str(cwd / "cache"))
    return subprocess.run(
        [sys.executable, "-m", "gasync", *args], capture_output=True, text=True, timeout=120, cwd=cwd, env=env,
        input=stdin,
    )  # fmt: skip


def assert_usage_error(res: subprocess.CompletedProcess[str], message: str, cwd: Path) -> None:
    assert res.returncode == 2, res.stderr
    assert res.stderr == f"gasync: error: {message}\n{HINT}"
    assert res.stdout == ""
    assert not (cwd / "cache").exists()  # nothing was generated, let alone compiled


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--backend", "gpu"], "Invalid value for '--backend': 'gpu' is not one of 'cuda', 'sim', 'auto'."),
        (["--executor", "foo"], "Invalid value for '--executor': 'foo' is not one of 'queue', 'spin'."),
        (["--executors", "-1"], "Invalid value for '--executors': -1 is not in the range x>=0."),
        (["--executors", "x"], "Invalid value for '--executors': 'x' is not a valid integer."),
        (
            ["--executors", "33", "--backend", "sim"],
            "--executors 33: one launch holds at most 32 executors here"
            " (the simulator runs one block of at most 1024 threads, one warp each)",
        ),
        (
            ["--timeout", "abc"],
            "Invalid value for '--timeout': expected a duration such as 10s or 500ms"
            " (units: ns, us, ms, s, m or h; a bare number is seconds), found 'abc'",
        ),
        (["--timeout", "-3s"], "Invalid value for '--timeout': a duration must be positive, found '-3s'"),
        (["--timeout", "0ms"], "Invalid value for '--timeout': a duration must be positive, found '0ms'"),
        (["--timeout", "infs"], "Invalid value for '--timeout': 'infs' is not a finite duration"),
        (["--timeout", "nan"], "Invalid value for '--timeout': 'nan' is not a finite duration"),
        (
            ["--timeout", "10000000000s"],
            "Invalid value for '--timeout': '10000000000s' is longer than the longest duration accepted,"
            " a week (604800s)",
        ),
        (["--signal", "stop"], "Invalid value for '--signal': expected NAME=DELAY such as stop=5ms, found 'stop'"),
        (["--signal", "stop=nanms"], "Invalid value for '--signal': stop: 'nanms' is not a finite duration"),
        (["--signal", "stop=1e400s"], "Invalid value for '--signal': stop: '1e400s' is not a finite duration"),
        (
            ["--signal", "stop=-1ms"],
            "Invalid value for '--signal': stop: a duration must be zero or more, found '-1ms'",
        ),
        (
            ["--signal", "stop=1ms", "--signal", "stop=2ms"],
            "Invalid value for '--signal': 'stop' is given more than once; give it once",
        ),
        (["--signal", "go=1ms"], "--signal go: the program has no signal named 'go' (it has stop)"),
        (["-D", "NOPE=3"], "-D NOPE: the program has no const named 'NOPE' (its consts are N, K)"),
        (["-D", "N=3", "-D", "N=4"], "Invalid value for '-D' / '--define': 'N' is given more than once; give it once"),
        (["-D", "N=lots"], "-D N=lots: 'lots' is not a valid i32"),
        (["--input", "x=missing.npy"], "Invalid value for '--input': x: no such file: missing.npy"),
        (["--input", "x=."], "Invalid value for '--input': x: is a directory, not a file: ."),
        (["--input", "x"], "Invalid value for '--input': expected NAME=FILE.npy, found 'x'"),
        (
            ["--input", "x=x.npy", "--input", "x=x.npy"],
            "Invalid value for '--input': 'x' is given more than once; give it once",
        ),
        (["--input", "z=x.npy"], "--input z: the program has no buffer named 'z' (it has x, y)"),
        (["--input", "y=x.npy"], "--input y: buffer 'y' is initialised with 'zeros', not 'input'"),
        (
            ["--output", "y=/nonexistent/o.npy"],
            "Invalid value for '--output': y: cannot write /nonexistent/o.npy: no such directory: /nonexistent",
        ),
        (
            ["--output", "y=/proc/sys/o.npy"],  # read-only even for root
            "Invalid value for '--output': y: cannot write /proc/sys/o.npy: the directory /proc/sys is not writable",
        ),
        (["--output", "nope=o.npy"], "--output nope: the program has no buffer named 'nope' (it has x, y)"),
        (
            ["--output", "y=a.npy", "--output", "y=b.npy"],
            "Invalid value for '--output': 'y' is given more than once; give it once",
        ),
        (
            ["--output", "x=a.npy", "--output", "y=a.npy"],
            "Invalid value for '--output': 'y' and 'x' are both written to a.npy",
        ),
        (
            ["--cache-dir", "x.npy"],
            "Invalid value for '--cache-dir' (env var: 'GASYNC_CACHE_DIR'): x.npy is a file, not a folder",
        ),
        (
            ["--trace", "/nonexistent/t.json"],
            "Invalid value for '--trace': cannot write /nonexistent/t.json: no such directory: /nonexistent",
        ),
        (["-q", "-v"], "-q/--quiet and -v/--verbose cannot be given together"),
        (["--frob"], "No such option '--frob'."),
        # a timeout under the device clock's tick was no deadline at all (the run went on)
        (["--timeout", "0.4ns"], "Invalid value for '--timeout': '0.4ns' is shorter than the shortest duration"
                                 " accepted, 1ns"),
        (["--timeout", "1e-12s"], "Invalid value for '--timeout': '1e-12s' is shorter than the shortest duration"
                                  " accepted, 1ns"),
        # no output overwrites the program, an input file or another output
        (["--report", "p.gasync"], "--report p.gasync: that is the program's source file, which would be overwritten"),
        (["--schedule", "./p.gasync"],
         "--schedule p.gasync: that is the program's source file, which would be overwritten"),
        (["--output", "y=p.gasync"],
         "--output y=p.gasync: that is the program's source file, which would be overwritten"),
        (["--output", "y=x.npy"], "--output y=x.npy: that is --input x's file, which would be overwritten"),
        (["--trace", "same.json", "--report", "same.json"],
         "--trace same.json and --report same.json write one file: one would replace the other"),
        (["--output", "y=t.json", "--trace", "./t.json"],
         "--output y=t.json and --trace t.json write one file: one would replace the other"),
        (["--cache-dir", ""],
         "Invalid value for '--cache-dir' (env var: 'GASYNC_CACHE_DIR'): an empty path names no folder (give DIR,"
         " or leave the option out for the default)"),
    ],
)  # fmt: skip
def test_bad_option_values_are_usage_errors(args: list[str], message: str, prog: Path) -> None:
    inputs = [] if any(a.startswith(("x=", "--input")) for a in args) or args == [] else ["--input", "x=x.npy"]
    res = gasync("run", "p.gasync", "--backend", "sim", *inputs, *args, cwd=prog)
    assert_usage_error(res, message, prog)


def test_a_missing_input_is_a_usage_error_at_its_declaration(prog: Path) -> None:
    res = gasync("run", "p.gasync", "--backend", "sim", cwd=prog)
    assert res.returncode == 2, res.stderr
    message = "buffer 'x' is declared '= input' but no --input x=FILE.npy was given"
    assert res.stderr.splitlines()[0] == f"p.gasync:{X_LINE}:1: error[E0301]: {message}"
    assert res.stderr.endswith(HINT)
    assert not (prog / "cache").exists()
    res = gasync("run", "p.gasync", "--backend", "sim", "--json", cwd=prog)
    doc = json.loads(res.stdout)
    assert doc["error"] == {"kind": "usage", "message": message, "exit_status": 2}
    assert (doc["diagnostics"][0]["line"], doc["diagnostics"][0]["column"]) == (X_LINE, 1)


def test_a_missing_program_is_a_usage_error(prog: Path) -> None:
    assert_usage_error(gasync("run", "nope.gasync", cwd=prog), "no such file: nope.gasync", prog)
    assert_usage_error(gasync("run", cwd=prog), "Missing argument 'FILE'.", prog)


def test_json_usage_errors_print_one_object(prog: Path) -> None:
    for args in (["--backend", "gpu"], ["-D", "NOPE=3"]):
        res = gasync("run", "p.gasync", "--json", *args, cwd=prog)
        assert res.returncode == 2
        err = json.loads(res.stdout)["error"]
        assert err["kind"] == "usage" and err["exit_status"] == 2
        assert err["message"] in res.stderr


def test_the_help_of_run_renders_types_and_words(prog: Path) -> None:
    env = dict(os.environ, COLUMNS="200", TERM="dumb")
    res = subprocess.run(
        [sys.executable, "-m", "gasync", "run", "--help"], capture_output=True, text=True, timeout=60, env=env
    )
    assert res.returncode == 0
    lines = [" ".join(line.strip("│ ").split()) for line in res.stdout.splitlines()]
    assert "Usage: gasync run [OPTIONS] FILE" in lines
    assert "--backend [cuda|sim|auto] cuda, sim, or auto (cuda where a GPU is present). [default: auto]" in lines
    assert "--json Print one JSON object on stdout, also when the run fails." in lines
    timeout = "--timeout DURATION Bound the whole run, e.g. 10s, 500ms (units: ns, us,"
    assert any(line.startswith(timeout) for line in lines)
    assert any(line.startswith("--executors N [x>=0] Warps that run tasks") for line in lines)
    assert "* file PATH A .gasync source file, or - for standard input. [required]" in lines
    assert "<bool>" not in res.stdout and "{file}" not in res.stdout and "<str>" not in res.stdout


def test_spin_on_a_program_with_groups_is_a_usage_error(tmp_path: Path) -> None:
    # decision 54 (it was E0301, bad input data, exit status 1, after compiling)
    (tmp_path / "g.gasync").write_text(
        "buffer out: i32[2] = zeros;\ngroup gg for g in 0..2 { task a for k in 0..2 { out[g] += 1; } }\n"
        "group hh after gg { task b { out[0] += 1; } }\n"
    )
    message = (
        "--executor spin: spin does not run groups, and the program has groups 'gg', 'hh';"
        " a program with groups runs the queue executor (the default)"
    )
    res = gasync("run", "g.gasync", "--backend", "sim", "--timeout", "60s", "--executor", "spin", cwd=tmp_path)
    assert_usage_error(res, message, tmp_path)
    res = gasync("run", "g.gasync", "--backend", "sim", "--json", "--executor", "spin", cwd=tmp_path)
    assert (res.returncode, res.stderr) == (2, f"gasync: error: {message}\n{HINT}")
    doc = json.loads(res.stdout)
    assert doc["error"] == {"kind": "usage", "message": message, "exit_status": 2}
    assert [(d["code"], d["line"]) for d in doc["diagnostics"]] == [("E0002", 0)]
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("flag", ["--output", "--input"])
def test_a_local_buffer_named_by_an_option_is_said_to_be_one(tmp_path: Path, flag: str) -> None:
    # (it was "--output st: the program has no buffer named 'st'")
    (tmp_path / "g.gasync").write_text(
        "buffer out: i64[2] = zeros;\ngroup gg for g in 0..2 {\n    local buffer st: i64[4];\n"
        "    task a { st[0] = 1; out[g] = st[0]; }\n}\n"
    )
    np.save(tmp_path / "st.npy", np.zeros(4, np.int64))
    local = "'st' is a local buffer of group 'gg': each group instance has its own, in its block's shared memory"
    message = {
        "--output": f"--output gg.st: {local}, gone when the instance ends, so it cannot be saved; copy what you need"
        " into a global buffer (it has out) from a task of the group, and --output that",
        "--input": f"--input gg.st: {local}, zeroed as the instance starts, so it cannot be read from a file;"
        " declare a global buffer '= input' and copy it in from a task of the group",
    }[flag]
    res = gasync("run", "g.gasync", "--backend", "sim", flag, "gg.st=st.npy", cwd=tmp_path)
    assert_usage_error(res, message, tmp_path)
    res = gasync("run", "g.gasync", "--backend", "sim", flag, "st=st.npy", cwd=tmp_path)
    assert_usage_error(res, message.replace(f"{flag} gg.st:", f"{flag} st:"), tmp_path)


@pytest.mark.parametrize(
    ("asked", "groups", "ran", "blocks", "note"),
    [
        (5, "", 8, 2, "note: --executors 5: executors are launched in whole blocks of 4 warps, so 8 ran (2 blocks)"),
        (1, "", 4, 1, "note: --executors 1: executors are launched in whole blocks of 4 warps, so 4 ran (1 block)"),
        (9000, "", 528, 132, "note: --executors 9000: the kernel fits 528 resident warps on this GPU, so 528 ran"),
        (8, "", 8, 2, None),
        (0, "", 528, 132, None),  # the backend picked
        (1, "g", 2, 1, None),  # fewer than a group's warps: warned of before the run
        (3, "g", 4, 2, "note: --executors 3: executors are launched in whole blocks of 2 warps, so 4 ran (2 blocks)"),
    ],
)
def test_executors_other_than_asked_are_said(
    capsys: pytest.CaptureFixture[str], asked: int, groups: str, ran: int, blocks: int, note: str | None
) -> None:
    from gasync.cli.report import Reporter
    from gasync.cli.run import _say_other_executors
    from gasync.dsl.parser import parse
    from gasync.planner import plan
    from gasync.runtime.options import Result

    src = (
        "group g for k in 0..2 { local buffer t: f32[4]; task a { t[0] = 1.0; } task b { } }"
        if groups
        else "task main { }"
    )
    program = plan(parse(src, "p.gasync"))
    _say_other_executors(Reporter(), asked, program, Result({}, {}, {}, {"executors": ran, "blocks": blocks}))
    err = capsys.readouterr().err
    assert err == (f"gasync: {note}\n" if note else "")


TWO_INPUTS = """buffer x: f32[8] = input;
buffer m: i32[2, 3] = input;
buffer o: f32[1] = zeros;
task main { o[0] = x[1] + (m[1, 2] as f32); }
"""


def test_every_bad_input_is_said_before_anything_compiles(tmp_path: Path) -> None:
    (tmp_path / "in.gasync").write_text(TWO_INPUTS)
    res = gasync("run", "in.gasync", "--backend", "sim", cwd=tmp_path)
    assert res.returncode == 2
    assert [line for line in res.stderr.splitlines() if "error[" in line] == [
        "in.gasync:1:1: error[E0301]: buffer 'x' is declared '= input' but no --input x=FILE.npy was given",
        "in.gasync:2:1: error[E0301]: buffer 'm' is declared '= input' but no --input m=FILE.npy was given",
    ]
    np.save(tmp_path / "x.npy", np.zeros(7, np.float32))
    np.save(tmp_path / "m.npy", np.zeros((2, 3), np.int64))
    res = gasync("run", "in.gasync", "--backend", "sim", "--input", "x=x.npy", "--input", "m=m.npy", cwd=tmp_path)
    assert res.returncode == 1
    assert "on backend" not in res.stderr and not (tmp_path / "cache").exists()
    assert [line for line in res.stderr.splitlines() if "error[" in line] == [
        "in.gasync:1:1: error[E0301]: --input x: shape [7] does not match the declaration f32[8]",
        "in.gasync:2:1: error[E0301]: --input m: dtype int64 does not match the declaration i32[2, 3] (int32)",
    ]


def test_an_input_of_the_other_byte_order_is_read_as_its_numbers(tmp_path: Path) -> None:
    (tmp_path / "in.gasync").write_text(TWO_INPUTS)
    np.save(tmp_path / "x.npy", np.arange(8, dtype=">f4") + 0.5)
    np.save(tmp_path / "m.npy", np.arange(6, dtype=">i4").reshape(2, 3))
    args = ["--input", "x=x.npy", "--input", "m=m.npy", "--output", "o=o.npy", "-q"]
    res = gasync("run", "in.gasync", "--backend", "sim", *args, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert np.load(tmp_path / "o.npy").tolist() == [6.5]  # x[1] + m[1, 2] = 1.5 + 5
