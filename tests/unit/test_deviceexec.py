"""The executor's loop, one code compiled once for every program (runtime/deviceexec.py).

The generated module hands it the program's numbers and tables in the order deviceexec reads
them; a variant is made once a process per set of switches; and on the GPU backend a second
program of the same variant reads the executor's entries that the first one wrote to the store
(runtime/linked.py), instead of compiling them (that needs NVVM: tests/ptxtools.py skips
without it). What the loop does is the whole simulator suite's: every run goes through it."""

from __future__ import annotations

import ast
import os
from pathlib import Path

from ptxtools import compile_in_process, skip_without_toolchain

import gasync
from gasync.codegen import generate, shared, tasktable
from gasync.runtime import deviceexec as dx

ROOT = Path(__file__).resolve().parents[2]

DIAMOND = """
buffer out: i64[8] = zeros;
task a for i in 0..2 { out[i] = 1; }
task b for i in 0..2 after a { out[2 + i] = out[i] + 1; }
task c after a { out[4] = 3; }
task d for i in 0..3 after b, c { out[5 + i] = out[2] + out[4]; }
"""


def _globals(source: str) -> dict[str, object]:
    """The generated module's top-level assignments of literals (TASKS, SUCC read as lists)."""
    found: dict[str, object] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            if isinstance(value, ast.Call) and getattr(value.func, "attr", "") == "array":
                value = value.args[0]
            try:
                found[node.targets[0].id] = ast.literal_eval(value)
            except ValueError:
                continue
    return found


def test_the_poll_results_are_those_the_polls_return() -> None:
    assert (dx.POLL_READY, dx.POLL_FORK, dx.POLL_ABORT) == (shared.READY, shared.FORK, shared.ABORT)


def test_the_numbers_and_columns_are_in_deviceexecs_order() -> None:
    ex = tasktable.EX_NAMES
    assert (ex.index("TOTAL_INSTANCES"), ex.index("QMASK"), ex.index("IDLE_BACKOFF_MAX")) == (
        dx.EX_TOTAL,
        dx.EX_QMASK,
        dx.EX_BACKOFF_MAX,
    )
    assert len(ex) == dx.EX_WORDS
    cols = tasktable.TASK_COLUMNS
    assert [cols.index(c) for c in ("first", "count", "succ", "claimed")] == [
        dx.TASK_FIRST,
        dx.TASK_COUNT,
        dx.TASK_SUCC,
        dx.TASK_CLAIMED,
    ]
    assert len(cols) == dx.TASK_WORDS


def test_a_programs_tables_give_each_task_its_instances_and_successors() -> None:
    program = gasync.compile_source(DIAMOND, "diamond.gasync")
    found = _globals(generate(program.plan).source)
    tasks, succ = found["TASKS"], found["SUCC"]
    assert isinstance(tasks, list) and isinstance(succ, list)

    def successors(row: list[int]) -> list[int]:
        k, out = row[dx.TASK_SUCC], []
        while succ[k] >= 0:
            out.append(succ[k])
            k += 1
        return out

    # a: 0..1, b: 2..3, c: 4, d: 5..7; a before b and c, both before d
    assert [(r[dx.TASK_FIRST], r[dx.TASK_COUNT]) for r in tasks] == [(0, 2), (2, 2), (4, 1), (5, 3)]
    assert [sorted(successors(r)) for r in tasks] == [[1, 2], [3], [3], []]
    assert [r[dx.TASK_CLAIMED] for r in tasks] == [1, 1, 1, 1]


def test_a_groups_tasks_are_not_claimed_by_the_executor() -> None:
    program = gasync.compile(ROOT / "samples" / "tiled_matmul.gasync")
    found = _globals(generate(program.plan).source)
    tasks = found["TASKS"]
    assert isinstance(tasks, list)
    grouped = [t.group is not None for t in program.plan.tasks]
    assert grouped and all(grouped)
    assert [r[dx.TASK_CLAIMED] for r in tasks] == [0] * len(tasks)
    assert found["HAS_POINT"] is True  # its executor leaves for the block's group phase


def test_one_variant_per_set_of_switches() -> None:
    plain = dx.executor_for(False, False, False, False, False)
    assert dx.executor_for(0, 0, 0, 0, 0) is plain  # type: ignore[arg-type]
    bulk = dx.executor_for(True, False, False, False, False)
    assert bulk is not plain
    names = [f.__name__ for f in (*plain, *bulk)]
    assert names == [
        "ex_enter_plain",
        "ex_next_plain",
        "ex_polled_plain",
        "ex_enter_bulk",
        "ex_next_bulk",
        "ex_polled_bulk",
    ]
    assert dx.executor_for(False, True, True, True, True)[1].__name__ == "ex_next_spin_point_service_traced"


def _how(program: str, store: Path) -> dict[str, str]:
    """How each of deviceexec's and devicetasks' helpers came to a compile of ``program`` with
    ``store``: "read" from it, or "compiled" (and written)."""
    env = dict(os.environ, GASYNC_LINKED="1", GASYNC_LINKED_DIR=str(store))
    ours = "('gasync.runtime.deviceexec.', 'gasync.runtime.devicetasks.')"
    then = f"print({{k.rsplit('.', 1)[1]: v for k, v in linked.HOW.items() if k.startswith({ours})}})"
    got = compile_in_process(then, str(ROOT / program), env)
    return ast.literal_eval(got.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_a_second_program_reads_the_executor_the_first_compiled(tmp_path: Path) -> None:
    skip_without_toolchain()
    first = _how("samples/stencil2d.gasync", tmp_path)
    second = _how("samples/tonemap.gasync", tmp_path)  # the same variant
    step = ("ex_enter_plain", "ex_next_plain", "ex_polled_plain")
    assert [first[k] for k in step] == ["compiled"] * 3
    assert first["claim"] == "compiled"  # (typed where ex_next was compiled, which calls it)
    assert [second[k] for k in step] == ["read"] * 3
    assert set(second.values()) == {"read"}  # (what they call comes with their entries)


def test_a_batch_of_finished_instances_leaves_in_flight_with_release_order() -> None:
    # (DONE up, then in flight down with release: the deadlock check that reads in flight at 0
    # and then fences sees the batch in DONE; relaxed, the two could land in either order, and B1
    # once reported a deadlock of a run whose every task had finished: bench/NOTES.md, run 106)
    skip_without_toolchain()
    then = "import re; print(len(re.findall(r'atom\\.release\\.gpu\\.global\\.add\\.u64', ptx)))"
    env = dict(os.environ, GASYNC_LINKED="0")
    got = compile_in_process(then, str(ROOT / "bench/programs/b1_tasks.gasync"), env)
    # count_done where a batch is full and where the executor finds nothing to run, flush_done as it leaves
    assert int(got.stdout.strip().splitlines()[-1]) == 3
