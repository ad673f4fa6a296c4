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
