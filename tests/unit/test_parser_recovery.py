"""Syntax errors: a keyword where a statement belongs, the words of E0101, and recovery at item
level (dsl/block_errors.py, dsl/recovery.py): one error per bad item, in source order, no cascade."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clirun import gasync

from gasync.dsl.diagnostics import ErrorGroup, GasyncError, ParseError, render
from gasync.dsl.parser import parse
from gasync.dsl.recovery import MAX_ERRORS
from gasync.planner.recovery import MAX_BODY_ERRORS


def errors_of(src: str) -> list[GasyncError]:
    with pytest.raises(GasyncError) as info:
        parse(src, "r.gasync")
    return info.value.errors if isinstance(info.value, ErrorGroup) else [info.value]


def rendered(src: str) -> str:
    """Every diagnostic of ``src`` as the command line prints it (code, place, message, notes)."""
    return "\n".join(render(e, "r.gasync", src, code=True) for e in errors_of(src))


def heads(src: str) -> list[str]:
    """Each diagnostic's first line (code, place and message), then its notes, each with its place if it has one."""
    out = []
    for e in errors_of(src):
        notes = [f"{n.span.line}:{n.span.column}: {n.message}" if n.span else n.message for n in e.notes]
        out.append(" / note: ".join([render(e, "r.gasync", src, code=True).splitlines()[0], *notes]))
    return out


# ---- a keyword where a statement belongs (E0101, not E0104) ----


def test_a_task_after_a_task_without_its_closing_brace() -> None:
    src = "buffer out: i32[4] = zeros;\ntask a {\n    out[0] = 1;\ntask b {\n    out[1] = 2;\n}\n"
    (err,) = errors_of(src)
    assert isinstance(err, ParseError) and not isinstance(err, ErrorGroup)  # one error: task b parses
    assert rendered(src) == (
        "r.gasync:4:1: error[E0101]: expected statement or '}', found keyword 'task'\n"
        "   |\n"
        " 4 | task b {\n"
        "   | ^^^^\n"
        "r.gasync:2:8: note: unclosed delimiter: this '{' is not closed before the item at 4:1\n"
        "   |\n"
        " 2 | task a {\n"
        "   |        ^"
    )


def test_a_buffer_after_a_task_without_its_closing_brace() -> None:
    src = "task a {\n    out[0] = 1;\nbuffer out: i32[4] = zeros;\ntask b { out[1] = 2; }\n"
    assert rendered(src) == (
        "r.gasync:3:1: error[E0101]: expected statement or '}', found keyword 'buffer'\n"
        "   |\n"
        " 3 | buffer out: i32[4] = zeros;\n"
        "   | ^^^^^^\n"
        "r.gasync:1:8: note: unclosed delimiter: this '{' is not closed before the item at 3:1\n"
        "   |\n"
        " 1 | task a {\n"
        "   |        ^"
    )


def test_an_async_fn_after_a_loop_without_its_closing_brace() -> None:
    # the task's '}' closed the loop; the note at it says so, by its indentation
    src = "task a {\n    for i in 0..4 {\n        let x = i;\n}\nasync fn f() { }\n"
    assert rendered(src) == (
        "r.gasync:5:1: error[E0101]: expected statement or '}', found 'async fn'\n"
        "   |\n"
        " 5 | async fn f() { }\n"
        "   | ^^^^^^^^\n"
        "r.gasync:1:8: note: unclosed delimiter: this '{' is not closed before the item at 5:1\n"
        "   |\n"
        " 1 | task a {\n"
        "   |        ^\n"
        "r.gasync:4:1: note: this '}' closes the '{' at 2:19 but is indented differently:"
        " a '}' may be missing before it\n"
        "   |\n"
        " 4 | }\n"
        "   | ^"
    )


def test_a_group_without_its_closing_brace_before_a_task_is_one_error() -> None:
    # the task at the start of the line parsed as a member of the group, which the end of the
    # file left open; blanked as an item, it gave the same error again, whose note said the file
    # ended at 3:25, where the group's last member ended
    src = "buffer o: i32[1] = zeros;\ngroup g {\n    task a { o[0] = 1; }\n\ntask b { o[0] = 2; }\n"
    assert heads(src) == [
        "r.gasync:2:9: error[E0105]: unclosed delimiter '{' / note: the file ends at 5:21 before a '}' closes it"
    ]


@pytest.mark.parametrize(
    ("item", "shown"), [("const X: i32 = 1;", "keyword 'const'"), ("async fn f() { }", "keyword 'async'")]
)
def test_an_item_after_a_group_without_its_closing_brace_points_at_the_groups_brace(item: str, shown: str) -> None:
    # (as after a task's body: the note at the '{' left open was missing in a group's body)
    src = f"buffer o: i32[1] = zeros;\ngroup g {{\n    task a {{ o[0] = 1; }}\n\n{item}\n"
    assert heads(src)[0] == (
        f"r.gasync:5:1: error[E0101]: expected 'local', 'task' or '}}', found {shown}"
        " / note: 2:9: unclosed delimiter: this '{' is not closed before the item at 5:1"
    )


def test_an_item_keyword_indented_inside_a_body() -> None:
    # not a missing '}': the body goes on, so the note says where items go
    src = "task a {\n    out[0] = 1;\n    buffer y: i32[2] = zeros;\n}\n"
    assert rendered(src) == (
        "r.gasync:3:5: error[E0101]: expected statement or '}', found keyword 'buffer'\n"
        "   |\n"
        " 3 |     buffer y: i32[2] = zeros;\n"
        "   |     ^^^^^^\n"
        "  = note: 'buffer' starts an item, and items are declared at the top level of the file, not in a block"
    )


def test_a_second_else() -> None:
    src = "task a {\n    let x = 2;\n    if x > 1 { } else { } else { }\n}\n"
    assert rendered(src) == (
        "r.gasync:3:27: error[E0101]: expected statement or '}', found keyword 'else'\n"
        "   |\n"
        " 3 |     if x > 1 { } else { } else { }\n"
        "   |                           ^^^^\n"
        "  = note: an 'if' has one 'else' at most: write 'else if CONDITION { ... }' for another branch"
    )


def test_an_else_after_another_statement() -> None:
    src = "task a {\n    let x = 2;\n    if x > 1 { }\n    x = 3;\n    else { }\n}\n"
    assert rendered(src) == (
        "r.gasync:5:5: error[E0101]: expected statement or '}', found keyword 'else'\n"
        "   |\n"
        " 5 |     else { }\n"
        "   |     ^^^^\n"
        "  = note: an 'else' goes right after the '}' of an 'if' block"
    )


@pytest.mark.parametrize(
    ("stmt", "head"),
    [
        ("local buffer b: i32[2];", "r.gasync:2:16: error[E0101]: expected statement or '}', found keyword 'local'"),
        ("return fn;", "r.gasync:2:23: error[E0101]: expected expression or ';', found keyword 'fn'"),
        ("f(loop);", "r.gasync:2:18: error[E0101]: expected expression or ')', found keyword 'loop'"),
        # where only a name belongs it stays E0104
        (
            "let (a, fn) = (1, 2);",
            "r.gasync:2:24: error[E0104]: expected identifier, found keyword 'fn'"
            " / note: 'fn' is a reserved keyword and cannot be used as a name",
        ),
        (
            "let parallel = 1;",
            "r.gasync:2:20: error[E0104]: expected identifier, found keyword 'parallel'"
            " / note: 'parallel' is a reserved keyword and cannot be used as a name",
        ),
    ],
)
def test_a_keyword_where_a_value_or_a_statement_belongs(stmt: str, head: str) -> None:
    assert heads(f"task a {{\n    let x = 1; {stmt}\n}}\n") == [head]


# ---- E0101's words: reductions only where one is likely ----


@pytest.mark.parametrize(
    ("stmt", "message"),
    [
        ("x += ;", "expected expression, found ';'"),
        ("x = ;", "expected expression, found ';'"),
        ("o[0] = ;", "expected expression, found ';'"),
        ("let y = (;", "expected expression, found ';'"),
        ("let r = ;", "expected expression, 'bulk' or 'parallel', found ';'"),
        ("let r: i64 = ;", "expected expression, 'bulk' or 'parallel', found ';'"),
        ("x = for i in 0..2 { };", "expected expression, 'bulk' or 'parallel', found keyword 'for'"),
    ],
)
def test_reduction_keywords_are_named_only_where_a_reduction_is_likely(stmt: str, message: str) -> None:
    (err,) = errors_of(f"task a {{\n    let x = 1;\n    {stmt}\n}}\n")
    assert (err.code, err.message) == ("E0101", message)


def test_a_float_without_digits_before_its_dot() -> None:
    src = "task a {\n    let y = .5;\n}\n"
    assert rendered(src) == (
        "r.gasync:2:13: error[E0111]: invalid numeric literal '.5': a float needs digits before its '.'\n"
        "   |\n"
        " 2 |     let y = .5;\n"
        "   |             ^^\n"
        "  = note: write 0.5"
    )


# ---- recovery at item level ----


def test_three_bad_tasks_give_three_errors() -> None:
    src = (
        "task a {\n    let x = 5\n}\n"
        "task b {\n    let y = (1 + ;\n}\n"
        "task c {\n    let z = 1 @ 2;\n}\n"
    )  # fmt: skip
    assert heads(src) == [
        "r.gasync:2:14: error[E0102]: expected ';', found '}'",
        "r.gasync:5:18: error[E0101]: expected expression, found ';'",
        "r.gasync:8:15: error[E0108]: unexpected character '@'",
    ]
    assert isinstance(errors_of(src)[0], ParseError)


def test_three_bad_literals_give_three_errors() -> None:
    src = "task a { let x = 1.; }\ntask b { let y = .5; }\ntask c { let z = 0xfg; }\n"
    assert heads(src) == [
        "r.gasync:1:18: error[E0111]: invalid numeric literal '1.': a float needs digits after its '.'"
        " / note: write 1.0",
        "r.gasync:2:18: error[E0111]: invalid numeric literal '.5': a float needs digits before its '.'"
        " / note: write 0.5",
        "r.gasync:3:18: error[E0111]: invalid numeric literal '0xfg'",
    ]


def test_one_error_per_item() -> None:
    # the second mistake of a task is in the part skipped, and so is the bad literal before them
    src = "task a {\n    let v = 12abc;\n    let x = 5\n    let y = ;\n}\ntask b { let z = 1 }\n"
    assert heads(src) == [
        "r.gasync:3:14: error[E0102]: expected ';', found keyword 'let'",
        "r.gasync:6:19: error[E0102]: expected ';', found '}'",
    ]


def test_the_parser_s_other_mistakes_come_in_source_order() -> None:
    src = (
        "buffer a: f32[4] = ones;\n"
        "task b { let x = 5 }\n"
        "task c { 1 + 2 = 3; let w = 0xfg; }\n"
    )  # fmt: skip
    assert heads(src) == [
        "r.gasync:1:20: error[E0113]: unknown buffer initialiser 'ones'; expected zeros, iota, input, random(seed)"
        " or fill(value)",
        "r.gasync:2:19: error[E0102]: expected ';', found '}'",
        "r.gasync:3:10: error[E0112]: invalid left-hand side of assignment: expected a variable or a buffer element",
    ]


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        (  # a missing '{': the task's own '}' is skipped with it, not reported as stray
            "task a\n    let x = 1;\n    if x > 0 { x = 2; }\n}\ntask b { let y = ; }\n",
            ["r.gasync:2:5: error[E0101]: expected 'after', 'for' or '{', found keyword 'let'",
             "r.gasync:5:18: error[E0101]: expected expression, 'bulk' or 'parallel', found ';'"],
        ),
        (  # a stray '}' between items
            "task a { }\n}\ntask b { let y = ; }\n",
            ["r.gasync:2:1: error[E0106]: unexpected closing delimiter '}'",
             "r.gasync:3:18: error[E0101]: expected expression, 'bulk' or 'parallel', found ';'"],
        ),
        (  # a statement at the top level, before any item
            "let x = 1;\nsignal s\nsignal t;\n",
            ["r.gasync:1:1: error[E0101]: expected item (const, buffer, shared, signal, channel, fn, extern fn, task"
             " or group) or end of file, found keyword 'let'",
             "r.gasync:2:9: error[E0102]: expected ';', found keyword 'signal'"],
        ),
        (  # items on one line: the next one after a '}' at depth 0
            "task a { let x = 5 } task b { let y = ; }\n",
            ["r.gasync:1:19: error[E0102]: expected ';', found '}'",
             "r.gasync:1:39: error[E0101]: expected expression, 'bulk' or 'parallel', found ';'"],
        ),
        (  # a '}' too many inside a group's task: the group's other tasks are not items of their own
            "group g {\n    task t { let x = (1 } }\n    task u { }\n}\nshared s: i64 = ;\n",
            ["r.gasync:2:25: error[E0106]: mismatched closing delimiter: expected ')', found '}'"
             " / note: 2:22: '(' opened here",
             "r.gasync:5:17: error[E0101]: expected expression, found ';'"],
        ),
        (  # an unterminated string is skipped with its item
            'extern fn g(v: f32) -> f32 from "m.k:g;\nconst N: i64 = ;\n',
            ["r.gasync:1:33: error[E0110]: unterminated string: a '\"' with no closing quote on this line",
             "r.gasync:2:16: error[E0101]: expected expression, found ';'"],
        ),
        (  # an unterminated comment takes the rest of the file with it
            "task a { /* x }\ntask b { let y = ; }\n",
            ["r.gasync:1:10: error[E0109]: unterminated block comment: '/*' has no matching '*/'"],
        ),
        (  # a missing '}' at the end of the file
            "const N: i64 = ;\ntask a {\n",
            ["r.gasync:1:16: error[E0101]: expected expression, found ';'",
             "r.gasync:2:8: error[E0105]: unclosed delimiter '{' / note: the file ends at 2:9 before a '}' closes it"],
        ),
    ],
)  # fmt: skip
def test_recovery_goes_on_at_the_next_item(src: str, expected: list[str]) -> None:
    assert heads(src) == expected


def test_lines_and_columns_after_a_skipped_item_are_the_source_s() -> None:
    src = "task a {\n    let x = 5\n\n\n}\n\ttask b { let y = ; }\n"
    (_, second) = errors_of(src)
    assert (second.line, second.column) == (6, 19)


def test_the_errors_of_a_file_are_capped_as_those_of_a_body() -> None:
    assert MAX_ERRORS == MAX_BODY_ERRORS
    many = "".join(f"task t{k} {{ let x = 5 }}\n" for k in range(MAX_ERRORS + 3))
    errs = errors_of(many)
    assert [e.line for e in errs] == list(range(1, MAX_ERRORS + 1))
    assert errs[-1].notes[-1].message == "more errors not shown: at most 10 syntax errors are shown per file"
    # counted exactly where the rest of the file parsed: one more, a bad literal of the last item
    one_more = "".join(f"task t{k} {{ let x = 5 }}\n" for k in range(MAX_ERRORS)) + "task z { let w = 0xfg; }\n"
    assert errors_of(one_more)[-1].notes[-1].message == (
        "1 more error not shown: at most 10 syntax errors are shown per file"
    )


def test_a_good_file_still_parses_and_one_error_is_raised_alone() -> None:
    assert len(parse("task a { }\ntask b { }\n").items) == 2
    with pytest.raises(ParseError):
        parse("task a { let x = 5 }\ntask b { }\n")


def test_check_reports_every_bad_item(tmp_path: Path) -> None:
    (tmp_path / "three.gasync").write_text("task a { let x = 5 }\ntask b { let y = ; }\ntask c { let z = 1 @ 2; }\n")
    res = gasync("check", "three.gasync", "--json", cwd=tmp_path)
    assert res.returncode == 1
    found = [(d["code"], d["line"], d["column"]) for d in json.loads(res.stdout)]
    assert found == [("E0102", 1, 19), ("E0101", 2, 18), ("E0108", 3, 20)]
    assert res.stderr.endswith("three.gasync: 3 errors\n")
