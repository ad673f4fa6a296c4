"""Deep programs (issue 10): 1,000 levels of nesting pass ``check`` quickly, and past the
documented limit (dsl/depth.py, MAX_DEPTH) the innermost construct that holds too many levels
is a located error, never Python's RecursionError or a traceback."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from clirun import gasync

from gasync import pipeline
from gasync.dsl import parse
from gasync.dsl.depth import MAX_DEPTH
from gasync.dsl.diagnostics import NestingTooDeepError, render

HEAD = "buffer o: i32[1] = zeros;\ntask main {\n"
OPENERS = ("if o[0] == 0 {\n", "while o[0] < 0 {\n", "loop {\n", "for k in 0..1 {\n")
CLOSERS = ("}\n", "}\n", "break; }\n", "}\n")
CHECK_WITHIN_S = 5.0  # CPU seconds, measured 1.5 at most; this only catches a return of quadratic work


def nested_blocks(n: int) -> str:
    """``n`` nested if/while/loop/for blocks, in turn."""
    opens = "".join(OPENERS[k % 4] for k in range(n))
    closes = "".join(CLOSERS[k % 4] for k in reversed(range(n)))
    return HEAD + opens + "o[0] = 1;\n" + closes + "}\n"


def deep_programs(n: int) -> dict[str, str]:
    chain = [f"async fn f{k}() -> i32 {{ return f{k + 1}().await + 1; }}" for k in range(3 * n - 1)]
    chain.append(f"async fn f{3 * n - 1}() -> i32 {{ yield_now().await; return 0; }}")
    return {
        "blocks": nested_blocks(n),
        "parentheses": HEAD + "o[0] = " + "(" * n + "1" + ")" * n + ";\n}\n",
        "sum": HEAD + "o[0] = " + " + ".join(["1"] * n) + ";\n}\n",
        "const sum": "const S: i32 = " + " + ".join(["1"] * n) + ";\n" + HEAD + "o[0] = S;\n}\n",
        "async blocks": HEAD + "async {\n" * n + "o[0] = 1;\n" + "}.await;\n" * n + "}\n",
        "async call chain": "buffer o: i32[1] = zeros;\n" + "\n".join(chain) + "\ntask main { o[0] = f0().await; }\n",
    }


@pytest.mark.parametrize("name", list(deep_programs(1)))
def test_a_thousand_levels_pass_check(tmp_path: Path, name: str) -> None:
    path = tmp_path / "deep.gasync"
    path.write_text(deep_programs(1000)[name])
    start = time.process_time()  # CPU seconds: other work on a shared CI machine moves them little
    plan = pipeline.check(path)
    assert time.process_time() - start < CHECK_WITHIN_S
    assert [t.name for t in plan.tasks] == ["main"]


def test_the_values_of_deep_expressions_are_right(tmp_path: Path) -> None:
    path = tmp_path / "deep.gasync"
    path.write_text(deep_programs(1000)["const sum"])
    assert pipeline.check(path).consts[0].value == 1000


def test_the_limit_itself_is_allowed() -> None:
    # the task's block is the first level, and 'o[0]' in the innermost block the last
    pipeline.deep(parse, nested_blocks(MAX_DEPTH - 2), "t.gasync")
    with pytest.raises(NestingTooDeepError):
        pipeline.deep(parse, nested_blocks(MAX_DEPTH - 1), "t.gasync")


AT_THE_LIMIT = {
    "blocks": nested_blocks(MAX_DEPTH - 2),
    "sum": HEAD + "o[0] = " + " + ".join(["1"] * MAX_DEPTH) + ";\n}\n",  # a level each '+', the task's block
    "async blocks": HEAD
    + "async {\n" * (MAX_DEPTH // 2 - 1)
    + "o[0] = 1;\n"
    + "}.await;\n" * (MAX_DEPTH // 2 - 1)
    + "}\n",
}


@pytest.mark.parametrize("name", list(AT_THE_LIMIT))
def test_every_stage_of_check_survives_the_limit(tmp_path: Path, name: str) -> None:
    path = tmp_path / "deep.gasync"
    path.write_text(AT_THE_LIMIT[name])
    assert [t.name for t in pipeline.check(path).tasks] == ["main"]


def test_one_block_past_the_limit_is_an_error_at_it() -> None:
    src = nested_blocks(MAX_DEPTH)
    with pytest.raises(NestingTooDeepError) as info:
        parse(src, "t.gasync")
    # the task's block holds MAX_DEPTH + 2 levels (itself, the nested blocks, 'o[0]'): the
    # first nested block, on line 3, is the innermost that holds more than MAX_DEPTH
    opener = OPENERS[0]
    assert render(info.value, "t.gasync", src).splitlines()[:4] == [
        f"t.gasync:3:{len(opener) - 1}: error: nesting deeper than {MAX_DEPTH} levels",
        "   |",
        f" 3 | {opener.rstrip()}",
        "   | " + " " * (len(opener) - 2) + "^",
    ]


def test_a_sum_past_the_limit_points_at_an_operator() -> None:
    src = HEAD + "o[0] = 1\n" + "+ 1\n" * (MAX_DEPTH + 1) + ";\n}\n"
    with pytest.raises(NestingTooDeepError) as info:
        parse(src, "t.gasync")
    # a left-deep sum: the k-th '+' holds k levels, so the last of the MAX_DEPTH + 1 is past
    assert (info.value.span.line, info.value.span.column) == (MAX_DEPTH + 4, 1)


@pytest.mark.parametrize(
    "expr",
    ["-" * 5000 + "1", "o[" * 5000 + "0" + "]" * 5000, "1" + " as i32" * 5000, "1 + (" * 5000 + "1" + ")" * 5000],
)
def test_other_deep_expressions_are_located_errors(expr: str) -> None:
    with pytest.raises(NestingTooDeepError) as info:
        parse(HEAD + f"o[0] = {expr};\n}}\n", "t.gasync")
    assert info.value.span.line == 3


def test_check_past_the_limit_exits_1_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "deep.gasync").write_text(nested_blocks(MAX_DEPTH + 10))
    res = gasync("check", "deep.gasync", cwd=tmp_path)
    assert res.returncode == 1
    assert res.stderr.startswith("deep.gasync:13:")  # ten blocks in: the innermost holding too many
    assert f"error[E0115]: nesting deeper than {MAX_DEPTH} levels" in res.stderr
    assert "Traceback" not in res.stderr and "RecursionError" not in res.stderr


@pytest.mark.parametrize("emit", ["ast", "plan"])
def test_deep_programs_print(tmp_path: Path, emit: str) -> None:
    (tmp_path / "deep.gasync").write_text(deep_programs(1000)["sum"])
    res = gasync("compile", "deep.gasync", "--emit", emit, cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-2000:]
    assert ("Binary(" if emit == "ast" else "task main") in res.stdout


def test_a_deep_expression_runs_and_draws(tmp_path: Path) -> None:
    # every stage after check (the code generator's too) runs with the deep stack: 400 levels
    # of parentheses were a RecursionError in `gasync run` and `graph --states` (4,096 may be)
    (tmp_path / "deep.gasync").write_text(HEAD + "o[0] = " + "(1 + " * 1000 + "1" + ")" * 1000 + ";\n}\n")
    res = gasync("run", "deep.gasync", "--backend", "sim", "--output", "o=o.npy", "-q", cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-2000:]
    assert np.load(tmp_path / "o.npy").tolist() == [1001]
    res = gasync("graph", "--states", "deep.gasync", "-o", "states.dot", cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "digraph" in (tmp_path / "states.dot").read_text()
