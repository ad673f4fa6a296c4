"""Run-time bounds checks on the simulator (issue 13): an index out of bounds stops the run, located.

Each program reads its out-of-bounds index from a buffer (``at``), so that the planner cannot
prove the access in range or reject it at compile time (E0218). The error names the access
(file:line:col of its index), the buffer, the index, the length and the task instance; the
first fault of a run wins and the others are counted; nothing is read or written outside a
buffer. ``checked=False`` (``--unchecked``) leaves the checks out, and an in-bounds program
gives the same results either way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import gasync
from gasync.dsl.codes import BY_CODE
from gasync.runtime.errors import BoundsError

pytestmark = [pytest.mark.sim, pytest.mark.timeout(180)]

HEAD = (
    "buffer out: i32[4] = zeros;\nbuffer at: i64[4] = input;\nbuffer x: f32[4] = iota;\nbuffer m: f32[2, 3] = zeros;\n"
)
OOB = "error[E0312]: index out of bounds in task"
AT = {"at": np.array([1, 2, 3, 7], np.int64)}


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every run here caches into a temporary directory, never the user's."""
    monkeypatch.setenv("GASYNC_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def fault(body: str, inputs: dict[str, np.ndarray] | None = None) -> BoundsError:
    """The bounds error of running ``HEAD + body`` (a file b.gasync) on the simulator."""
    prog = gasync.compile_source(HEAD + body, "b.gasync")
    with pytest.raises(BoundsError) as info:
        prog.run(backend="sim", inputs=AT if inputs is None else inputs, timeout=120)
    return info.value


def test_a_write_in_scalar_task_code_names_the_access_the_index_and_the_instance() -> None:
    err = fault("task worker for w in 0..4 {\n    out[at[w]] = 1;\n}\n")
    assert str(err) == f"b.gasync:6:9: {OOB} worker[3]: the length of 'out' is 4 but the index is 7"
    assert err.notes == ()
    assert (err.buffer, err.index, err.length, err.dimension, err.instance, err.faults) == (
        "out", 7, 4, 1, "task worker[3]", 1
    )  # fmt: skip


def test_a_read_in_scalar_task_code_gives_0_and_stops_the_run() -> None:
    err = fault("task main {\n    let v = x[at[3]];\n    out[0] = v as i32 + 1;\n}\n")
    assert str(err) == f"b.gasync:6:15: {OOB} main: the length of 'x' is 4 but the index is 7"


def test_a_write_inside_a_parallel_for() -> None:
    body = "task main {\n    let k = at[0] as i32;\n    parallel for i in 0..4 { out[i + k] = 1; }\n}\n"
    err = fault(body)
    assert str(err) == f"b.gasync:7:34: {OOB} main: the length of 'out' is 4 but the index is 4"
    assert err.faults == 1  # only lane 3 was outside


def test_a_read_inside_a_bulk_for() -> None:
    body = "task main for w in 0..2 {\n    let k = at[2] as i32;\n    bulk for i in 0..2 { m[w, i] = x[i + k]; }\n}\n"
    err = fault(body)
    assert err.message.endswith("the length of 'x' is 4 but the index is 4")
    assert err.message.startswith("index out of bounds in task main[")
    assert (err.line, err.column) == (7, 38)


def test_an_atomic_and_a_second_dimension() -> None:
    err = fault("task main {\n    atomic_add(out[at[3] - 4], 5);\n    m[1, at[3]] = 1.0;\n}\n")
    assert err.message.endswith("in task main: the length of 'm' along dimension 2 is 3 but the index is 7")
    assert (err.line, err.column) == (7, 10)


@pytest.mark.parametrize(
    "update", ["atomic_add(out[k], 0);", "atomic_max(out[k], -2147483648);", "if i < 2 { atomic_or(out[k], 0); }"]
)
def test_a_combined_atomic_that_changes_nothing_still_checks_its_index(update: str) -> None:
    # combined (codegen/combined.py), its partial stays the identity: the warp issued no atomic,
    # and no check, where each update one by one would have faulted
    err = fault(f"task main {{\n    let k = at[3];\n    parallel for i in 0..4 {{ {update} }}\n}}\n")
    assert err.message == "index out of bounds in task main: the length of 'out' is 4 but the index is 7"
    assert err.line == 7
    assert err.faults == (2 if "if" in update else 4)


def test_the_first_fault_wins_and_the_others_are_counted() -> None:
    err = fault("task main {\n    let n: i64 = at[3];\n    for j in 0..n { out[j] = 1; }\n}\n")
    assert err.message == "index out of bounds in task main: the length of 'out' is 4 but the index is 4"
    assert err.faults == 3
    assert [n.message for n in err.notes] == ["2 more out-of-bounds accesses were counted before the run stopped"]


@pytest.mark.parametrize(
    "wait",
    [
        "task b {\n    while flag[0] == 0 { }\n}\n",  # in a poll (it looks at the deadline anyway)
        "task b {\n    parallel for i in 0..1 { while flag[i] == 0 { } }\n}\n",  # in a loop body
        "fn wait() { while flag[0] == 0 { } }\ntask b {\n    wait();\n}\n",  # in a plain fn
    ],
    ids=["poll", "loop body", "plain fn"],
)
def test_a_loop_waiting_for_a_stopped_task_gives_up(wait: str) -> None:
    """Task b waits for a flag that task a never sets, as its read out of bounds gives 0: the run
    still ends (without the looks at the exit word, the loop in a plain fn or a loop body spins on)."""
    body = "buffer flag: i32[1] = zeros;\ntask a {\n    if x[at[3]] > 0.0 { flag[0] = 1; }\n}\n" + wait
    assert fault(body).message.startswith("index out of bounds in task a:")


def test_an_in_bounds_program_gives_the_same_results_checked_or_not() -> None:
    src = HEAD + (
        "fn get(k: i64) -> f32 { return x[k]; }\n"
        "task main for w in 0..2 {\n"
        "    let k: i64 = at[w];\n"
        "    out[k] += 10;\n"
        "    parallel for i in 0..2 { atomic_add(out[at[i]], 1); m[w, at[i]] = get(k); }\n"
        "    bulk for i in 0..1 { m[w, at[2] - 1] = x[at[i + 1]] * 2.0; }\n"
        "}\n"
    )
    prog = gasync.compile_source(src, "ok.gasync")
    checked = prog.run(backend="sim", inputs=AT, timeout=120)
    unchecked = prog.run(backend="sim", inputs=AT, timeout=120, checked=False)
    assert "db.load(" in prog.source and "db." not in gasync.codegen.generate(prog.plan, checked=False).source
    for name in ("out", "m"):
        np.testing.assert_array_equal(checked.buffers[name], unchecked.buffers[name])
    assert checked.buffers["out"].tolist() == [0, 12, 12, 0]
    assert checked.buffers["m"].tolist() == [[0.0, 1.0, 4.0], [0.0, 2.0, 4.0]]


def gasync_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "gasync", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=150, env=dict(os.environ))


def test_the_command_line_shows_the_fault_and_exits_1_without_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "oob.gasync"
    path.write_text(HEAD.replace("= input", "= iota") + "task worker for w in 0..4 {\n    out[at[w] + 1] = 1;\n}\n")
    res = gasync_cli("run", path, "--backend", "sim")
    assert res.returncode == 1, res.stderr
    assert "Traceback" not in res.stdout + res.stderr
    assert (
        f"{path}:6:9: {OOB} worker[3]: the length of 'out' is 4 but the index is 4\n"
        "   |\n"
        " 6 |     out[at[w] + 1] = 1;\n"
        "   |         ^^^^^^^^^\n"
    ) in res.stderr


def test_unchecked_runs_an_in_bounds_program_to_the_same_result(tmp_path: Path) -> None:
    path = tmp_path / "ok.gasync"
    path.write_text(HEAD.replace("= input", "= iota") + "task worker for w in 0..3 {\n    out[at[w] + 1] = 1;\n}\n")
    checked = gasync_cli("run", path, "--backend", "sim", "--json")
    unchecked = gasync_cli("run", path, "--backend", "sim", "--json", "--unchecked")
    assert checked.returncode == unchecked.returncode == 0, checked.stderr + unchecked.stderr
    assert json.loads(checked.stdout)["buffers"] == json.loads(unchecked.stdout)["buffers"]
    assert json.loads(checked.stdout)["buffers"]["out"] == [0, 1, 1, 1]
    assert json.loads(checked.stdout)["stats"]["module"] != json.loads(unchecked.stdout)["stats"]["module"]


def test_unchecked_is_in_the_help_and_the_explained_example_faults() -> None:
    res = gasync_cli("run", "--help")
    assert "--unchecked" in res.stdout
    prog = gasync.compile_source(BY_CODE["E0312"].example, "e.gasync")
    with pytest.raises(BoundsError) as info:
        prog.run(backend="sim", timeout=120)
    assert info.value.code == "E0312"


def test_the_host_words_a_u64_index_unsigned_and_a_site_of_two_dimensions() -> None:
    """The host's report from the arrays a run copies back (runtime/state.py's FAULT words)."""
    from gasync.runtime import RunOptions, exits
    from gasync.runtime.state import CTL_WORDS, Ctl, Exit

    prog = gasync.compile_source("buffer out: i32[4] = zeros;\ntask w for k in 0..4 { out[k] = 1; }\n", "t.gasync")
    ctl = np.zeros(CTL_WORDS, np.int64)
    ctl[[Ctl.EXIT, Ctl.DETAIL, Ctl.FAULTS, Ctl.FAULT_SITE, Ctl.FAULT_INDEX]] = [Exit.BOUNDS, 2, 33, 1, -1]
    back = {"CTL": ctl, "ST": np.zeros(4, np.int32), "WAITON": np.zeros(4, np.int32)}
    sites = (("out", (4,), ((1, 1, 1, 2),), (False,)), ("m", (2, 3), ((5, 6, 5, 7), (5, 9, 5, 10)), (True, True)))
    with pytest.raises(BoundsError) as info:
        exits.check_exit(prog.generated, back, RunOptions(), sites)
    assert info.value.message == (
        "index out of bounds in task w[2]: the length of 'm' along dimension 1 is 2"
        f" but the index is {2**64 - 1}"  # a u64's int64 word, read back unsigned
    )
    assert (info.value.line, info.value.column, info.value.faults) == (5, 6, 33)
    assert [n.message for n in info.value.notes] == [
        "32 more out-of-bounds accesses were counted before the run stopped"
    ]


def test_a_map_with_affine_indices_checks_the_ends_of_its_range_once() -> None:
    """codegen/hoist.py: where every checked index of a map is affine (i64) in its variable, the warp
    looks at the two ends of its range and runs the loop unchecked when both are inside; a range
    that leaves the buffer runs the checked loop, which faults as any checked loop does."""
    body = "task main {\n    let k = at[0];\n    parallel for i in k..k + 3 { out[i] = x[i - k] as i32 + 1; }\n}\n"
    prog = gasync.compile_source(HEAD + body, "h.gasync")
    assert "db.within(G.B_out, (v_i,))" in prog.source and "def itu_" in prog.source
    assert prog.run(backend="sim", inputs=AT, timeout=120).buffers["out"].tolist() == [0, 1, 2, 3]
    err = fault(body, {"at": np.array([2, 0, 0, 0], np.int64)})  # out[2..5]: the last is outside
    assert str(err) == f"b.gasync:7:38: {OOB} main: the length of 'out' is 4 but the index is 4"
    assert err.faults == 1  # lane 2's write, checked in the checked loop


def test_a_map_whose_index_is_not_affine_keeps_a_check_per_iteration() -> None:
    for index in ("at[i - k]", "i * i - k", "i / 2"):
        body = f"task main {{\n    let k = at[0];\n    parallel for i in k..k + 3 {{ out[{index}] = 1; }}\n}}\n"
        source = gasync.compile_source(HEAD + body, "n.gasync").source
        assert "db.inside(G.B_out" in source and "db.within(" not in source, index
