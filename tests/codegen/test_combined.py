"""Which atomics of a loop body are combined (codegen/combined.py): one atomic per warp after
the loop, or one per element where it was. The values are checked on the simulator by
tests/sim/test_combined_atomics_sim.py; this checks the generated code's shape, as
``gasync compile --emit py`` prints it."""

from __future__ import annotations

import re

from clirun import gasync as run_cli

import gasync

HEAD = """
const N: i64 = 300;
buffer x: f32[N] = iota;
buffer y: f32[N] = zeros;
buffer h: i64[8] = zeros;
buffer st: i64[2] = zeros;
shared n: i64 = 0;
shared f: f32 = 0.0;
fn peek() -> i64 { return n.load(); }
fn half(v: f32) -> f32 { return v * 0.5; }
"""


def par_body(task: str) -> list[str]:
    """The lines of the one ``par_`` function that the program's loop became."""
    source = gasync.compile_source(HEAD + task, "<combined>").source
    match = re.search(r"^def par_1\(.*?(?=^@cuda\.jit|\Z)", source, re.S | re.M)
    assert match is not None
    return match.group(0).splitlines()


def atomics(lines: list[str], target: str) -> tuple[int, int]:
    """How many atomics on ``target`` run per element (inside the lanes' loop) and per warp
    (after it, in lane 0)."""
    per_element = per_warp = 0
    in_loop = False
    for line in lines:
        if line.startswith("    while k"):
            in_loop = True
        elif line.startswith("    ") and not line.startswith("     ") and not line.lstrip().startswith("#"):
            in_loop = False
        # a plain atomic, or one whose index is checked (codegen/bounds.py: db.rmw)
        if re.search(rf"(dl\.(add|sub|amax|amin|aand|aor)\(|db\.rmw2?\(db\.RMW_\w+, ){re.escape(target)}\b", line):
            if in_loop:
                per_element += 1
            else:
                per_warp += 1
    return per_element, per_warp


def test_an_unused_fetch_on_a_shared_scalar_is_one_atomic_per_warp() -> None:
    lines = par_body("task t { parallel for i in 0..N { n.fetch_add(i); } }")
    assert atomics(lines, "G.S_n") == (0, 1)
    text = "\n".join(lines)
    assert "t_atom_0 = int64(0)  # n.fetch_add" in text
    assert "if lane == 0 and t_atom_0 != int64(0):" in text
    assert text.count("dl.shfl_down(") == 5


def test_a_bulk_loop_and_a_conditional_update_combine_too() -> None:
    lines = par_body("task t { bulk for i in 0..N { if x[i] > 3.0 { f.fetch_max(x[i]); } } }")
    assert atomics(lines, "G.S_f") == (0, 1)
    assert any("dl.fmax(t_atom_0" in line for line in lines), "a NaN is no candidate, as in the atomic"


def test_an_element_at_an_invariant_index_is_combined() -> None:
    task = "task t { let p: i64 = 3; parallel for i in 0..N { atomic_add(h[p + 1], 1); atomic_max(h[p], i); } }"
    assert atomics(par_body(task), "G.B_h") == (2, 0), "two kinds of operator on one buffer that may meet"
    task = "task t { let p: i64 = 3; parallel for i in 0..N { atomic_add(h[p + 1], 1); atomic_sub(h[p], i); } }"
    assert atomics(par_body(task), "G.B_h") == (0, 2)
    task = "task t { parallel for i in 0..N { atomic_add(st[0], 1); atomic_max(st[1], i); } }"
    assert atomics(par_body(task), "G.B_st") == (0, 2), "literal indices are told apart"


def test_updates_that_stay_one_per_element() -> None:
    cases = {
        "let o = n.fetch_add(1); y[i] = o as f32;": "G.S_n",  # its value is used
        "let o = n.fetch_add(1) + 1;": "G.S_n",  # inside an expression
        "n.fetch_add(1); let m = n.load();": "G.S_n",  # the scalar is read too
        "n.fetch_add(1); n.fetch_max(4);": "G.S_n",  # two kinds of operator: they do not commute
        "n.fetch_add(1); let m = peek();": "G.S_n",  # a fn called reads it
        "atomic_add(h[i % 8], 1);": "G.B_h",  # the index varies
        "let b: i64 = 2; atomic_add(h[b], 1);": "G.B_h",  # a body local's index
        "atomic_add(h[st[0]], 1);": "G.B_h",  # a loaded index
        "atomic_add(h[0], 1); let v = h[1];": "G.B_h",  # the buffer is read too
    }
    for body, target in cases.items():
        lines = par_body(f"task t {{ parallel for i in 0..N {{ {body} }} }}")
        per_element, per_warp = atomics(lines, target)
        assert per_warp == 0 and per_element >= 1, body
        assert not any("t_atom_" in line for line in lines), body


def test_a_pure_fn_call_in_the_body_does_not_stop_combining() -> None:
    lines = par_body("task t { parallel for i in 0..N { f.fetch_add(half(x[i])); } }")
    assert atomics(lines, "G.S_f") == (0, 1)


def test_emit_py_shows_the_combined_atomic_beside_its_source_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "count.gasync"
    body = "task t {\n    parallel for i in 0..N {\n        if x[i] > 1.0 { n.fetch_add(1); }\n    }\n}\n"
    src.write_text(HEAD + body)
    res = run_cli("compile", str(src), "--emit", "py")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    at = next(k for k, line in enumerate(lines) if "if x[i] > 1.0 { n.fetch_add(1); }" in line)
    assert lines[at + 1].strip() == "if (G.B_x[uint64(v_i)] > float32(1.0)):"
    assert lines[at + 2].strip() == "t_atom_0 = int64(t_atom_0 + int64(1))  # n.fetch_add: this lane's part"
    assert sum("dl.add(G.S_n, 0, t_atom_0)" in line for line in lines) == 1
