"""The program generator of tests/differential: every program it draws is valid and ends.

Each drawn program (every shape, the known bugs' too) must pass ``gasync
check`` and run to its end on the reference interpreter: no deadlock, no
step limit, none of the Python errors (math domain, overflow) that the
simulator would hit. Also: the shapes the differential test relies on do
appear.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from differential import groups
from differential.programs import ALL_SHAPES, DEFAULT_SHAPES, Program, programs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gasync import pipeline, reference
from gasync.planner import ir
from gasync.planner.model import Plan
from gasync.planner.walk import exprs_of, stmts_in, subexprs

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(program=st.one_of(programs(DEFAULT_SHAPES), programs(ALL_SHAPES)))
def test_generated_programs_check_and_run_to_the_end(program: Program, tmp_path_factory) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("gen") / "prog.gasync"
    path.write_text(program.text)
    plan = pipeline.check(path)  # what `gasync check` runs
    outcome = reference.run(plan, program.inputs, max_steps=200_000)
    assert outcome.stats["polls"] >= 1


def test_gasync_check_accepts_a_batch_of_generated_programs(tmp_path: Path) -> None:
    paths = []

    @settings(max_examples=20, deadline=None, database=None)
    @given(programs(ALL_SHAPES))
    def write(program: Program) -> None:
        paths.append(tmp_path / f"p{len(paths)}.gasync")
        paths[-1].write_text(program.text)

    write()
    cmd = [sys.executable, "-m", "gasync", "check", *map(str, paths)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (proc.stdout + proc.stderr).count(": ok") == len(paths)


def drawn(examples: int) -> set[str]:
    """The constructs that a fixed set of ``examples`` draws of every shape holds."""
    seen: set[str] = set()

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True)
    @given(programs(ALL_SHAPES))
    def collect(program: Program) -> None:
        from gasync.dsl import parse
        from gasync.planner import plan

        p = plan(parse(program.text, "<gen>"))
        for fn in [*p.functions, *(t.body for t in p.tasks)]:
            seen.add(fn.kind)
            for s in stmts_in(fn.body):
                seen.add(type(s).__name__ if not isinstance(s, ir.For) else f"For:{s.kind}")
                if isinstance(s, ir.For) and s.reduce is not None:  # each operator, each kind of loop
                    seen.update([f"{s.kind} reduce", f"reduce {s.reduce.op}"])
                if isinstance(s, ir.AwaitS):
                    seen.add(type(s.future).__name__)
                    if isinstance(s.future, ir.Join):
                        seen.update(f"Join>{type(f).__name__}" for f in s.future.futures)
                if isinstance(s, ir.Select):
                    seen.update(f"Select>{type(a.future).__name__}" for a in s.arms)
                if isinstance(s, ir.ForAwait) and "." in s.chan:  # a group's local channel: GROUP.NAME
                    seen.add("local ForAwait")
        seen.update(f"task x{t.count}" for t in p.tasks if t.count > 1)
        seen.update("after" for t in p.tasks if t.after)
        seen.update(f"init:{b.init}" for b in p.buffers)
        for g in p.groups:
            shapes = {"group x2": g.count > 1, "group after": g.after, "group task x2": max(g.task_warps) > 1}
            shapes |= {"group": True, "local buffer": g.buffers, "local channel": g.channels}
            seen.update(name for name, drawn in shapes.items() if drawn)
        seen.update(f"{type(e).__name__}:{getattr(e, 'op', '')}" for e in exprs_in(p))
        seen.update("local ChannelClose" for e in exprs_in(p) if isinstance(e, ir.ChannelClose) and "." in e.name)

    collect()
    return seen


def test_the_generator_draws_every_construct() -> None:
    """Over a fixed set of draws, each construct the differential test is meant to cover appears."""
    seen = drawn(600)
    want = {
        "fn", "async", "task", "after", "task x2", "task x3",
        "Let", "Store", "Eval", "If", "Loop", "While", "For:seq", "For:parallel", "For:bulk", "ForAwait",
        "Break", "Continue", "Return", "Select",
        "parallel reduce", "bulk reduce", *(f"reduce {op}" for op in ("sum", "min", "max", "and", "or")),
        "AsyncCall", "YieldNow", "Sleep", "Send", "Recv", "Wait", "Join", "AsyncBlock",
        "Join>AsyncCall", "Join>AsyncBlock", "Join>Join", "Join>Wait", "Join>YieldNow", "Join>Sleep",
        "Select>Wait", "Select>Recv", "Select>AsyncCall", "Select>AsyncBlock", "Select>Join", "Select>YieldNow",
        "group", "group x2", "group after", "group task x2", "local buffer", "local channel",
        "local ChannelClose",  # ("local ForAwait" is drawn, a few times in 600, but not in every full-suite
        # process: the draws differ there for a reason not found yet; contract cases and the samples cover it)
        "init:zeros", "init:iota", "init:random", "init:fill", "init:input",
        "SignalOp:is_set", "SignalOp:set", "ChannelClose:", "Cast:",
        *(f"SharedOp:{op}" for op in ("load", "store", "cas", "fetch_add", "fetch_sub", "fetch_max", "fetch_min")),
        *(f"BufAtomic:{op}" for op in ("add", "sub", "max", "min")),
        *(f"Binary:{op}" for op in ("+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "&&", "||", "==", "<")),
        *(f"Unary:{op}" for op in ("-", "~", "!")),
    }  # fmt: skip
    assert want <= seen, f"never drawn: {sorted(want - seen)}"


def test_programs_with_groups_draw_local_closes_and_for_awaits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where every program holds groups, their rare shapes appear in a fixed set of draws."""
    monkeypatch.setattr(groups, "GROUP_ODDS", 1)
    seen = drawn(200)
    want = {"group", "group x2", "local buffer", "local channel", "local ChannelClose", "local ForAwait"}
    assert want <= seen, f"never drawn: {sorted(want - seen)}"


def exprs_in(p: Plan) -> list[ir.Expr]:
    """Every expression of every function and task body."""
    out: list[ir.Expr] = []
    for fn in [*p.functions, *(t.body for t in p.tasks)]:
        for s in stmts_in(fn.body):
            for e in exprs_of(s):
                out += subexprs(e)
    return out
