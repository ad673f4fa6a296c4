"""Diagnostic codes, `gasync explain`, colour and the JSON form of diagnostics."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from clirun import gasync

from gasync import pipeline
from gasync.cli.report import use_color
from gasync.codegen import UnsupportedConstructError
from gasync.dsl import diagnostics
from gasync.dsl.codes import BY_CODE, CODES, explain
from gasync.dsl.diagnostics import ErrorGroup, GasyncError, render, to_json
from gasync.dsl.parser import parse
from gasync.planner import errors as plan_errors
from gasync.reference.errors import StepLimitError
from gasync.runtime import errors as run_errors
from gasync.runtime.trace import TraceFileError

ROOT = Path(__file__).resolve().parents[2]
BAD = "task main {\n    let x = 5\n    let y = 6;\n}\n"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _classes() -> list[type[GasyncError]]:
    found: list[type[GasyncError]] = []
    todo: list[type[GasyncError]] = [GasyncError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_every_kind_of_diagnostic_has_a_code_in_the_table() -> None:
    assert {UnsupportedConstructError, StepLimitError, TraceFileError, pipeline.InputFileError} <= set(_classes())
    assert plan_errors.TypeMismatchError.code == "E0204"
    assert run_errors.DeadlockError.code == "E0303"
    for cls in _classes():
        if cls is ErrorGroup:  # several diagnostics: its code is its first one's
            continue
        assert cls.code in BY_CODE, cls
    assert len(BY_CODE) == len(CODES)
    assert all(re.fullmatch(r"[EW]0[0-4]\d\d", c.code) for c in CODES)


def test_the_docs_table_is_the_code_table() -> None:
    text = (ROOT / "docs" / "diagnostics.md").read_text()
    rows = re.findall(r"^\| ([EW]\d{4}) \| (.*) \|$", text, re.M)
    assert rows == [(c.code, c.title) for c in CODES]


def _codes_of(source: str) -> list[str]:
    try:
        p = pipeline.deep(lambda: pipeline.check_program(parse(source, "x.gasync")))
    except ErrorGroup as group:
        return [e.code for e in group.errors]
    except GasyncError as exc:
        return [exc.code]
    return [w.code for w in p.warnings]


@pytest.mark.parametrize("code", [c for c in CODES if c.checked], ids=lambda c: c.code)
def test_each_example_gives_its_code(code: object) -> None:
    assert code.example  # type: ignore[attr-defined]
    assert _codes_of(code.example) == [code.code]  # type: ignore[attr-defined]


def test_explain_prints_the_explanation_and_example() -> None:
    res = gasync("explain", "e0102")
    assert res.returncode == 0
    assert res.stdout == (
        "E0102: missing ';'\n\n"
        "A statement or item runs on into the next one: every statement, and every item other than a fn or task,"
        " ends with ';'.\n\n"
        "For example:\n\n"
        "    task main {\n        let x = 5\n        let y = 6;\n    }\n"
    )
    assert explain("E0102") == res.stdout


def test_explain_of_an_unknown_code_is_a_usage_error() -> None:
    res = gasync("explain", "E9999")
    assert (res.returncode, res.stdout) == (2, "")
    assert res.stderr == (
        "gasync: error: no diagnostic has the code 'E9999' (they run E0001..E0401; see docs/diagnostics.md)\n"
        "try 'gasync explain --help'\n"
    )


def test_check_json_gives_each_diagnostic(tmp_path: Path) -> None:
    (tmp_path / "bad.gasync").write_text(BAD)
    res = gasync("check", "bad.gasync", "--json", cwd=tmp_path)
    assert res.returncode == 1
    assert json.loads(res.stdout) == [
        {
            "file": "bad.gasync", "line": 2, "column": 14, "end_line": 2, "end_column": 15,
            "severity": "error", "code": "E0102", "message": "expected ';', found keyword 'let'",
            "notes": [],
            "spans": [{"line": 2, "column": 14, "end_line": 2, "end_column": 15, "primary": True, "label": ""}],
        }
    ]  # fmt: skip
    assert res.stderr.startswith("bad.gasync:2:14: error[E0102]: expected ';'")


def test_check_json_of_a_good_file_and_of_a_missing_one(tmp_path: Path) -> None:
    res = gasync("check", ROOT / "samples" / "counter.gasync", "--json")
    assert (res.returncode, json.loads(res.stdout)) == (0, [])
    res = gasync("check", "nope.gasync", "--json", cwd=tmp_path)
    assert res.returncode == 2
    [diag] = json.loads(res.stdout)
    assert (diag["code"], diag["line"], diag["message"]) == ("E0001", 0, "no such file: nope.gasync")
    res = gasync("check", ROOT / "samples" / "jacobi.gasync", "--json", "-D", "N=abc")
    assert res.returncode == 2
    [diag] = json.loads(res.stdout)
    assert (diag["code"], diag["message"]) == ("E0212", "-D N=abc: 'abc' is not a valid i64")
    res = gasync("check", "--json", "--color", "pink", "x.gasync", cwd=tmp_path)  # Click's own usage error
    assert res.returncode == 2
    assert [d["code"] for d in json.loads(res.stdout)] == ["E0002"]


def test_json_notes_and_warnings(tmp_path: Path) -> None:
    (tmp_path / "w.gasync").write_text(BY_CODE["W0217"].example)
    res = gasync("compile", "w.gasync", "--emit", "plan", "--json", cwd=tmp_path)
    assert res.returncode == 0
    [warn] = json.loads(res.stdout)  # with --json, compile prints only the diagnostics
    assert (warn["severity"], warn["code"], warn["line"], warn["column"]) == ("warning", "W0217", 3, 10)
    assert warn["notes"] == ["'a' writes 'out' here", "order them with 'after a', or write with atomic_add and friends"]
    assert warn["spans"] == [
        {"line": 3, "column": 10, "end_line": 3, "end_column": 21, "primary": True, "label": ""},
        {"line": 2, "column": 10, "end_line": 2, "end_column": 21, "primary": False, "label": "'a' writes 'out' here"},
    ]


def test_a_failed_run_carries_its_diagnostics(tmp_path: Path) -> None:
    (tmp_path / "bad.gasync").write_text("task main {\n    let x = y;\n}\n")
    res = gasync("run", "bad.gasync", "--json", "--backend", "sim", cwd=tmp_path)
    assert res.returncode == 1
    doc = json.loads(res.stdout)
    assert doc["error"]["kind"] == "program"
    assert [(d["code"], d["line"], d["column"]) for d in doc["diagnostics"]] == [("E0202", 2, 13)]


def test_colour_follows_the_option(tmp_path: Path) -> None:
    (tmp_path / "bad.gasync").write_text(BAD)
    always = gasync("check", "bad.gasync", "--color", "always", cwd=tmp_path)
    assert always.stderr.startswith("bad.gasync:2:14: \x1b[1;31merror[E0102]\x1b[0m: \x1b[1mexpected ';'")
    plain = gasync("check", "bad.gasync", cwd=tmp_path)  # not a terminal: no colour
    assert "\x1b[" not in plain.stderr
    assert ANSI.sub("", always.stderr) == plain.stderr
    assert gasync("check", "bad.gasync", "--color", "never", cwd=tmp_path).stderr == plain.stderr


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_auto_colour_on_a_terminal_unless_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert use_color("auto", _Tty()) is True
    assert use_color("auto", io.StringIO()) is False
    assert use_color("never", _Tty()) is False
    assert use_color("always", io.StringIO()) is True
    monkeypatch.setenv("NO_COLOR", "1")
    assert use_color("auto", _Tty()) is False
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("TERM", "dumb")
    assert use_color("auto", _Tty()) is False


def test_render_without_code_or_colour_is_unchanged() -> None:
    with pytest.raises(diagnostics.MissingSemicolonError) as info:
        parse(BAD, "b.gasync")
    assert render(info.value, "b.gasync", BAD) == (
        "b.gasync:2:14: error: expected ';', found keyword 'let'\n   |\n 2 |     let x = 5\n   |              ^"
    )
    assert to_json(info.value, "b.gasync")["code"] == "E0102"
