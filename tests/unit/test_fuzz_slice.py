"""A short slice of scripts/fuzz.py in CI: mutated programs through ``gasync check``.

300 inputs (the seeds, then mutants) in-process through the function the console
script calls, and 5 through the real command: no traceback, no internal error, no
hang, every failure located with the documented exit status (tests/fuzzing/harness.py's
rules). The full run (10,000 and 500 through ``gasync run``) is recorded in docs/testing.md.
"""

from __future__ import annotations

import random

import pytest
from fuzzing.harness import Worker, judge, through_cli
from fuzzing.mutate import inputs, seeds

pytestmark = pytest.mark.timeout(240)


def test_three_hundred_mutants_through_check_have_no_defect() -> None:
    corpus = seeds(differential=4, seed=13)
    worker = Worker()
    try:
        found = [(label, o.defect) for text, label in inputs(corpus, random.Random(13), 300)
                 if (o := worker.ask("check", text, 60)).defect]  # fmt: skip
    finally:
        worker.close()
    assert found == []


def test_mutants_through_the_real_command_have_no_defect() -> None:
    items = inputs(seeds(differential=0), random.Random(7), 5, with_seeds=False)
    assert [(label, o.defect) for text, label in items if (o := through_cli(text, 60)).defect] == []


def test_the_judge_calls_a_traceback_an_internal_error_and_an_unlocated_compile_error_defects() -> None:
    located = '[{"severity": "error", "code": "E0101", "message": "m", "line": 2}]'
    assert judge("check", 1, located, "") == (("E0101",), "")
    assert judge("check", 0, "[]", "") == ((), "")
    assert judge("check", 1, located, "Traceback (most recent call last):\n")[1] == "a Python traceback"
    assert judge("check", 3, "[]", "")[1] == "an internal error (exit status 3)"
    assert judge("check", 1, located.replace('"line": 2', '"line": 0'), "")[1] == "E0101 without a line"
    assert judge("check", 1, "[]", "")[1] == "a failure without an error diagnostic"
    assert judge("check", 2, located, "")[1] == "exit status 2, not one of (0, 1)"
    run_failed = '{"diagnostics": [{"severity": "error", "code": "E0305", "message": "the simulated kernel failed"}]}'
    assert judge("run", 1, run_failed, "")[1] == "an exception inside the simulated kernel"
    queue_full = run_failed.replace("the simulated kernel failed", "internal error in the executor: the run queue")
    assert judge("run", 1, queue_full, "")[1] == "an internal error of the executor"
    too_large = run_failed.replace("the simulated kernel failed", "not enough memory for the run's state")
    assert judge("run", 1, too_large, "") == (("E0305",), "")


def test_the_worker_checks_each_input_not_the_first_again() -> None:
    # the worker writes every input to one path and the CLI caches a program's text by path
    # (cli/source.py): without clearing it, every answer after the first was the first's
    good = "buffer out: i32[1] = zeros;\ntask main {\n    out[0] = 1;\n}\n"
    bad = good.replace("out[0] = 1;", "out[0] = ;")
    worker = Worker()
    try:
        answers = [worker.ask("check", text, 60) for text in (good, bad, good)]
    finally:
        worker.close()
    assert [(o.status, o.codes) for o in answers] == [(0, ()), (1, ("E0101",)), (0, ())]
