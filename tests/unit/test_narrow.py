"""codegen/narrow.py: each generated function's G narrowed to what it and its callees use."""

from __future__ import annotations

import ast
import textwrap

import gasync
from gasync.codegen import narrow

MODULE = textwrap.dedent(
    """
    State = namedtuple("State", ("frames", "sched", "chan", "B_x"))


    @cuda.jit(device=True)
    def poll_a(inst, w, G):
        return G.frames.FI[0] + G.sched.CTL[0]


    @cuda.jit(device=True)
    def poll_b(inst, w, G):
        return G.frames.FI[1] + G.sched.CTL[1]


    @cuda.jit(device=True)
    def dispatch(inst, w, G):
        if inst < 1:
            return poll_a(inst, w, G)
        return poll_b(inst, w, G)


    @cuda.jit(device=True)
    def leaky(w, G):
        keep = G  # a use that is neither a field nor a call here: the whole State
        return keep.B_x[0]


    @cuda.jit(device=True)
    def executor(w, G):
        r = dispatch(0, w, G) + leaky(w, G)
        return r + G.chan.C[0]


    @cuda.jit(cache=True)
    def gasync_kernel(G, timeout_ns, mode):
        executor(0, G)
        dispatch(1, 0, G)  # a kernel keeps the whole State, and builds its callees' part
    """
)


def test_each_function_gets_what_it_and_its_callees_read() -> None:
    out = narrow.narrow_state(MODULE)
    ast.parse(out)
    assert 'G_1 = namedtuple("G_1", ("frames", "sched"))  # poll_a, poll_b, dispatch' in out
    # one class for one set of fields: dispatch hands its own G on as it is
    assert "return poll_a(inst, w, G)" in out and "return poll_b(inst, w, G)" in out
    assert "dispatch(1, 0, G_1(G.frames, G.sched))" in out
    # leaky uses G whole: it and its callers keep the whole State
    assert "G_2" not in out  # leaky and executor: the whole State
    assert "r = dispatch(0, w, G_1(G.frames, G.sched)) + leaky(w, G)" in out
    assert "executor(0, G)" in out


def test_a_function_named_otherwise_than_called_keeps_the_whole_state() -> None:
    source = MODULE + "\nHANDLE = poll_b  # named, not called: its G could be anything\n"
    out = narrow.narrow_state(source)
    assert "poll_b(inst, w, G_" not in out
    # poll_a alone now: dispatch needs what poll_b needs, and poll_b takes dispatch's G
    assert 'G_1 = namedtuple("G_1", ("frames", "sched"))  # poll_a, dispatch' in out
    assert "return poll_b(inst, w, G)" in out


def test_off_leaves_the_module_as_it_is() -> None:
    narrow.ENABLED = False
    try:
        assert narrow.narrow_state(MODULE) == MODULE
    finally:
        narrow.ENABLED = True


def test_a_generated_program_calls_its_polls_with_their_part() -> None:
    src = """
buffer out: i32[4] = zeros;
task t for i in 0..4 { out[i] = i * 2; }
"""
    gen = gasync.compile_source(src, "narrow.gasync").generated
    tree = ast.parse(gen.source)
    fns = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    calls = [c for c in ast.walk(fns["dispatch"]) if isinstance(c, ast.Call) and getattr(c.func, "id", "") == "poll_t"]
    assert calls, "dispatch calls poll_t"
    # poll_t takes dispatch's own G (one class), and the executor builds that class from the State
    assert all(isinstance(c.args[-1], ast.Name) and c.args[-1].id == "G" for c in calls)
    builds = [
        c for c in ast.walk(fns["executor"]) if isinstance(c, ast.Call) and getattr(c.func, "id", "") == "dispatch"
    ]
    part = builds[0].args[-1]
    assert isinstance(part, ast.Call) and part.func.id.startswith("G_")  # type: ignore[attr-defined]
    fields = {a.attr for a in part.args}  # type: ignore[attr-defined]
    read = {
        a.attr
        for f in ("poll_t", "dispatch")
        for a in ast.walk(fns[f])
        if isinstance(a, ast.Attribute) and isinstance(a.value, ast.Name) and a.value.id == "G"
    }
    assert fields == read and "frames" in fields
    state = next(n for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "State")
    assert len(fields) < len(state.value.args[1].elts)  # type: ignore[attr-defined]


LOOPS = """
const N: i64 = 64;
buffer x: f32[N] = iota;
buffer y: f32[N] = zeros;
shared total: i64 = 0;
task main {
    parallel for i in 0..N { y[i] = 2.0 * x[i] + 1.0; }
    bulk for i in 0..N { total.fetch_add(1); }
}
"""


def test_each_loop_takes_the_fields_its_body_uses() -> None:
    # (the values: every contract case and sample with a parallel or bulk for, on both backends)
    src = gasync.compile_source(LOOPS, "<n>").generated.source
    assert "def par_1(w, lane, AI, AF, G):" in src
    assert 'G_2 = namedtuple("G_2", ("exec", "B_x", "B_y"))  # par_1\n' in src
    assert "par_1(w, lane, G.exec.PARGS_I[w], G.exec.PARGS_F[w], G_2(G.exec, G.B_x, G.B_y))" in src
    # the bulk loop's, called with its job's rows
    assert "par_2(w, lane, G.jobs.JOBARGS_I[j], G.jobs.JOBARGS_F[j], G_3(G.exec, G.S_total))" in src
    # what runs them takes what they take, and the kernels build it from the whole State
    assert 'G_5 = namedtuple("G_5", ("jobs", "exec", "B_x", "B_y", "S_total"))  # run_parallel\n' in src
    assert "run_parallel(command, w, lane, G_5(G.jobs, G.exec, G.B_x, G.B_y, G.S_total))" in src
