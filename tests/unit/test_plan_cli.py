"""The planner's commands as a user runs them: check -D/--strict, compile --emit plan, graph --format dot."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import clirun
import pytest
from dottext import bare

SAMPLES = sorted((Path(__file__).parents[2] / "samples").glob("*.gasync"))
RACE = "buffer y: f32[8] = zeros;\ntask a {\n    y[0] = 1.0;\n}\ntask b {\n    y[0] = 2.0;\n}\n"


def gasync(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    res = clirun.gasync(*args, cwd=cwd)
    assert "Traceback" not in res.stderr
    return res


@pytest.fixture
def race(tmp_path: Path) -> Path:
    (tmp_path / "race.gasync").write_text(RACE)
    return tmp_path


def test_check_prints_a_warning_and_succeeds(race: Path) -> None:
    res = gasync("check", "race.gasync", cwd=race)
    assert res.returncode == 0
    assert res.stderr == (
        "race.gasync:6:5: warning[W0217]: tasks 'a' and 'b' may run at once and both write buffer 'y'\n"
        "   |\n"
        " 6 |     y[0] = 2.0;\n"
        "   |     ^^^^^^^^^^^\n"
        "race.gasync:3:5: note: 'a' writes 'y' here\n"
        "   |\n"
        " 3 |     y[0] = 1.0;\n"
        "   |     ^^^^^^^^^^^\n"
        "  = note: order them with 'after a', or write with atomic_add and friends\n"
        "race.gasync: ok, 1 warning\n"
    )


def test_check_strict_makes_the_warning_an_error(race: Path) -> None:
    res = gasync("check", "--strict", "race.gasync", cwd=race)
    assert res.returncode == 1
    assert res.stderr.startswith("race.gasync:6:5: error[E0217]: tasks 'a' and 'b' may run at once")
    assert "race.gasync: ok" not in res.stderr


def test_check_counts_the_warnings_of_each_file(race: Path) -> None:
    # two buffers that a and b both write at element 0: one warning per buffer
    (race / "two.gasync").write_text(
        "buffer y: f32[8] = zeros;\nbuffer z: f32[8] = zeros;\n"
        "task a { y[0] = 1.0; z[0] = 1.0; }\ntask b { y[0] = 2.0; z[0] = 2.0; }\n"
    )
    (race / "clean.gasync").write_text("buffer y: f32[8] = zeros;\ntask a { y[0] = 1.0; }\ntask b { y[1] = 2.0; }\n")
    res = gasync("check", "race.gasync", "two.gasync", "clean.gasync", cwd=race)
    assert res.returncode == 0
    heads = [line for line in res.stderr.splitlines() if ": warning[" in line]
    assert heads == [
        "race.gasync:6:5: warning[W0217]: tasks 'a' and 'b' may run at once and both write buffer 'y'",
        "two.gasync:4:10: warning[W0217]: tasks 'a' and 'b' may run at once and both write buffer 'y'",
        "two.gasync:4:22: warning[W0217]: tasks 'a' and 'b' may run at once and both write buffer 'z'",
    ]
    summaries = [line for line in res.stderr.splitlines() if ": ok" in line]
    assert summaries == ["race.gasync: ok, 1 warning", "two.gasync: ok, 2 warnings", "clean.gasync: ok"]


def test_check_reports_several_errors(tmp_path: Path) -> None:
    (tmp_path / "bad.gasync").write_text("task a after b { }\ntask b after a { }\ntask c { let v = w; }\n")
    res = gasync("check", "bad.gasync", cwd=tmp_path)
    assert res.returncode == 1
    heads = [line for line in res.stderr.splitlines() if ": error[" in line]
    assert heads == [
        "bad.gasync:2:14: error[E0214]: cycle in 'after' edges: a -> b -> a",
        "bad.gasync:3:18: error[E0202]: cannot find value 'w' in this scope",
    ]
    assert res.stderr.endswith("bad.gasync: 2 errors\n")


def test_defines_reach_the_planner(tmp_path: Path) -> None:
    (tmp_path / "n.gasync").write_text("const N: i64 = 4;\nbuffer x: f32[N] = zeros;\ntask main { }\n")
    res = gasync("compile", "n.gasync", "--emit", "plan", "-D", "N=64", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "  N: i64 = 64\n" in res.stdout
    assert "  x: f32[64] = zeros  (256 bytes)\n" in res.stdout
    res = gasync("check", "-D", "N=lots", "n.gasync", cwd=tmp_path)
    assert res.returncode == 2  # a bad option value: a usage error
    assert res.stderr == "gasync: error: -D N=lots: 'lots' is not a valid i64\ntry 'gasync check --help'\n"


@pytest.mark.parametrize("bad", ["N", "=3"])
def test_a_malformed_define_is_a_usage_error(bad: str, race: Path) -> None:
    res = gasync("check", "-D", bad, "race.gasync", cwd=race)
    assert res.returncode == 2
    assert "expected NAME=VALUE" in res.stderr


@pytest.mark.parametrize("path", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_emit_plan_of_each_sample(path: Path) -> None:
    res = gasync("compile", path, "--emit", "plan")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(f"plan of {path}\n")
    assert "tasks (topological order):\n  #0 " in res.stdout
    assert "\n  total: " in res.stdout
    assert res.stdout == gasync("compile", path, "--emit", "plan").stdout  # deterministic


def test_emit_plan_of_a_bad_program(tmp_path: Path) -> None:
    (tmp_path / "bad.gasync").write_text("task main { let x = y; }\n")
    res = gasync("compile", "bad.gasync", "--emit", "plan", cwd=tmp_path)
    assert res.returncode == 1
    assert res.stdout == ""
    assert res.stderr.startswith("bad.gasync:1:21: error[E0202]: cannot find value 'y' in this scope\n")


def test_graph_prints_dot(tmp_path: Path) -> None:
    (tmp_path / "g.gasync").write_text(
        "channel c: i32[2];\ntask p for i in 0..3 { c.send(i).await; }\ntask q { let v = c.recv().await; }\n"
        "task r after q { }\n"
    )
    res = gasync("graph", "g.gasync", "--format", "dot", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    drawing = bare(res.stdout[: res.stdout.index("\tsubgraph cluster_legend")])
    task = 'fillcolor="#eef3fb" style="rounded,filled"'
    use = '[arrowsize=0.7 color="#4a6fa5"]'
    assert drawing.splitlines()[4:] == [
        f'\t"task.p" [label="p x3" {task}]',
        f'\t"task.q" [label=q {task}]',
        f'\t"task.r" [label=r {task}]',
        '\t"channel.c" [label="c: i32[2]" shape=parallelogram]',
        '\t"task.q" -> "task.r" [label=after penwidth=2]',
        f'\t"task.p" -> "channel.c" {use}',  # p sends on c
        f'\t"channel.c" -> "task.q" {use}',  # q receives from it
    ]
    assert res.stdout.endswith("\t}\n}\n")


def test_graph_of_a_missing_file_and_of_a_bad_program(tmp_path: Path) -> None:
    assert gasync("graph", tmp_path / "nope.gasync").returncode == 2
    (tmp_path / "bad.gasync").write_text("task a after a { }\n")
    res = gasync("graph", "bad.gasync", cwd=tmp_path)
    assert res.returncode == 1
    assert res.stdout == ""


def test_graph_image_needs_an_output_file(race: Path) -> None:
    res = gasync("graph", "race.gasync", "--format", "svg", cwd=race)
    assert res.returncode == 2
    assert "give -o FILE" in res.stderr


@pytest.mark.parametrize("emit", ["ast", "plan", "py"])
def test_compile_checks_the_whole_program_whatever_it_prints(tmp_path: Path, emit: str) -> None:
    (tmp_path / "t.gasync").write_text("buffer o: i32[1] = zeros;\ntask main { let x = y + 1; }\n")
    res = gasync("compile", "t.gasync", "--emit", emit, "--json", cwd=tmp_path)
    assert res.returncode == 1
    [diag] = json.loads(res.stdout)
    assert (diag["code"], diag["line"], diag["column"]) == ("E0202", 2, 21)
    (tmp_path / "d.gasync").write_text("const N: i32 = 1;\nbuffer o: i32[1] = zeros;\ntask main { o[0] = N; }\n")
    res = gasync("compile", "d.gasync", "--emit", emit, "-D", "ZZ=3", cwd=tmp_path)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.startswith("gasync: error: -D ZZ: the program has no const named 'ZZ'")
