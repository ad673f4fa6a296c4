"""The warm simulator worker: reused across runs, and still killed when a run hangs."""

from __future__ import annotations

import pytest

import gasync
from gasync.runtime import backends
from gasync.runtime.errors import RunTimeoutError

DOUBLE = (
    "buffer out: i32[1] = zeros;\n"
    "async fn double(x: i32) -> i32 { return x * 2; }\n"
    "task main { out[0] = double(21).await; }\n"
)
HANG = "shared n: i64 = 0;\ntask main { while n.load() >= 0 { n.fetch_add(1); } }\n"


def test_runs_in_one_process_share_one_worker() -> None:
    prog = gasync.compile_source(DOUBLE, "double.gasync")
    assert prog.run(backend="sim").buffers["out"][0] == 42
    pid = backends.sim_worker_pid()
    assert pid is not None
    other = gasync.compile_source(DOUBLE.replace("x * 2", "x * 3"), "triple.gasync")
    assert other.run(backend="sim").buffers["out"][0] == 63
    assert backends.sim_worker_pid() == pid


def test_a_run_past_its_limit_kills_the_worker_and_the_next_run_gets_a_new_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    prog = gasync.compile_source(DOUBLE, "double.gasync")
    prog.run(backend="sim")  # warm, so the short limit below is the hang's alone
    before = backends.sim_worker_pid()
    monkeypatch.setattr(backends, "SIM_DEFAULT_LIMIT_S", 3.0)
    hung = gasync.compile_source(HANG, "hang.gasync")
    with pytest.raises(RunTimeoutError) as err:
        hung.run(backend="sim")  # no timeout: nothing on the device stops it
    assert (
        err.value.message == "the simulated run did not finish within 3s and was stopped (pass a timeout to bound it)"
    )
    assert backends.sim_worker_pid() is None
    monkeypatch.undo()  # the short limit was the hang's: a fresh worker may take longer to start under load
    assert prog.run(backend="sim").buffers["out"][0] == 42
    assert backends.sim_worker_pid() not in (None, before)


def test_a_timeout_under_a_nanosecond_is_one_not_none() -> None:
    # int(timeout * 1e9) was 0, no deadline: the run went on for ever
    hung = gasync.compile_source(HANG, "hang.gasync")
    with pytest.raises(RunTimeoutError) as err:
        hung.run(backend="sim", timeout=1e-12)
    assert err.value.code == "E0304"
    assert err.value.message.startswith("the run exceeded its timeout of 1e-09s")


def test_the_hard_limit_names_the_users_timeout() -> None:
    err = backends._hard_limit(10.0, 40.0, timeout_given=True)
    assert err.message == (
        "the simulated run did not end at its timeout of 10s and was stopped 30s later, at the simulator's hard"
        " limit of 40s"
    )
    assert err.in_cli_words().message == (
        "the simulated run did not end at --timeout 10s and was stopped 30s later, at the simulator's hard limit of 40s"
    )
    spin = backends._hard_limit(30.0, 60.0, timeout_given=False)
    assert spin.message == (
        "the simulated run did not end at its deadline of 30s and was stopped 30s later, at the simulator's hard"
        " limit of 60s"
    )
