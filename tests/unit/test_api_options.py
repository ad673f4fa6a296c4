"""Program.run's options and compile's arguments, checked before anything runs: a wrong type is a
TypeError, a wrong value a ValueError, each naming the API's argument (no run, no Numba), rather
than a run that ignores it or a simulator failure reported as E0305."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gasync
from gasync.runtime.errors import BackendError

SRC = "buffer x: f32[4] = input;\nbuffer y: f32[4] = zeros;\nsignal stop;\ntask main { y[0] = x[0]; }\n"
X = {"x": np.zeros(4, np.float32)}

WRONG: list[tuple[str, dict[str, Any], type[Exception], str]] = [
    ("negative timeout", {"timeout": -1}, ValueError, "timeout=-1: expected seconds from 0 to a week"),
    ("nan timeout", {"timeout": float("nan")}, ValueError, "timeout=nan: expected seconds"),
    ("infinite timeout", {"timeout": float("inf")}, ValueError, "timeout=inf: expected seconds"),
    ("timeout as text", {"timeout": "10s"}, TypeError, "timeout: expected a number of seconds, got str '10s'"),
    ("negative executors", {"executors": -1}, ValueError, "executors=-1: expected 0 or more"),
    ("fractional executors", {"executors": 2.5}, TypeError, "executors: expected an int, got float 2.5"),
    ("more executors than a block", {"executors": 1000}, ValueError, "executors=1000: one launch holds at most 32"),
    ("unknown executor", {"executor": "fast"}, ValueError, "executor='fast': expected 'queue' or 'spin'"),
    ("negative signal delay", {"signals": {"stop": -1}}, ValueError, "signals['stop']=-1: expected seconds"),
    ("signal delay as text", {"signals": {"stop": "5ms"}}, TypeError, "signals['stop']: expected a number"),
    ("negative trace_events", {"trace_events": -5}, ValueError, "trace_events=-5: expected 0 or more"),
    ("negative warps_per_block", {"warps_per_block": -1}, ValueError, "warps_per_block=-1: expected 0 or more"),
    ("too many warps_per_block", {"warps_per_block": 64}, ValueError, "warps_per_block=64: a CUDA block holds"),
    ("checked as text", {"checked": "no"}, TypeError, "checked: expected True or False, got str"),
    ("empty cache_dir", {"cache_dir": ""}, ValueError, "cache_dir='': expected a directory's path"),
]


@pytest.mark.parametrize(("case", "kwargs", "kind", "message"), WRONG, ids=[w[0] for w in WRONG])
def test_a_wrong_run_option_is_refused_before_anything_runs(
    case: str, kwargs: dict[str, Any], kind: type[Exception], message: str
) -> None:
    prog = gasync.compile_source(SRC, "t.gasync")
    with pytest.raises(kind) as raised:
        prog.run(backend="sim", inputs=X, **kwargs)
    assert str(raised.value).startswith(message)


def test_inputs_must_be_a_dict() -> None:
    prog = gasync.compile_source(SRC, "t.gasync")
    with pytest.raises(TypeError, match=r"^inputs: expected a dict of buffer name -> array, got list$"):
        prog.run(backend="sim", inputs=[X["x"]])  # type: ignore[arg-type]


def test_an_unknown_backend_is_the_runs_located_error() -> None:
    prog = gasync.compile_source(SRC, "t.gasync")
    with pytest.raises(BackendError) as raised:
        prog.run(backend="gpu", inputs=X)  # type: ignore[arg-type]
    assert str(raised.value) == "t.gasync: error[E0302]: unknown backend 'gpu': expected auto, cuda or sim"


def test_compile_source_wants_text_and_a_dict_of_defines() -> None:
    with pytest.raises(TypeError, match=r"^text: expected the program's text as a str, got bytes$"):
        gasync.compile_source(SRC.encode())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^defines: expected a dict of const name -> value, got list$"):
        gasync.compile_source(SRC, defines=[("N", 4)])  # type: ignore[arg-type]


def test_the_notebook_magic_says_a_refused_option_without_a_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("IPython")
    from gasync.notebook import run_cell

    assert run_cell("--backend sim --executors 100 --no-graph", "task main { }\n", {}) is None
    assert capsys.readouterr().out.startswith("%%gasync: error: executors=100: one launch holds at most 32 executors")


def test_the_notebook_magic_lists_its_options_on_help(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("IPython")
    from gasync.notebook import run_cell

    assert run_cell("--help", "task main { }\n", {}) is None
    out = capsys.readouterr().out
    assert out.startswith("Usage: %%gasync [OPTIONS]")
    assert "--input INPUT" in out and "--as NAME" in out and "%%gasync: error" not in out
