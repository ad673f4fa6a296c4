"""Which parallel loops are unrolled as maps (all loads of several iterations before their stores).

Their values are checked on every backend by the contract case
``parallel_and_bulk_maps_unrolled_with_a_remainder``; this checks the choice itself.
"""

from __future__ import annotations

from contract.deep import nested_ifs

import gasync
from gasync.codegen import generate

MARK = "# a map: the loads of"


def unrolled(body: str) -> int:
    src = "buffer x: f32[300] = iota;\nbuffer y: f32[300] = zeros;\nshared n: i64 = 0;\n" + body
    return generate(gasync.compile_source(src, "<unroll>").plan).source.count(MARK)


def test_a_map_is_unrolled() -> None:
    assert unrolled("task t { parallel for i in 0..300 { let a = x[i]; y[i] = a * 2.0; } }") == 1
    assert unrolled("task t { bulk for i in 0..300 { y[i] = x[i] + 1.0; } }") == 1


def test_a_map_with_combined_atomics_is_unrolled() -> None:
    # a combined update (codegen/combined.py) is a register's: it leaves the body a map
    assert unrolled("task t { parallel for i in 0..300 { y[i] = x[i]; n.fetch_add(1); } }") == 1
    assert unrolled("task t { bulk for i in 0..300 { y[i] = 1.0; n.fetch_max(x[i] as i64); } }") == 1
    # updates alone are a reduction: one iteration per turn, as a reducing loop
    assert unrolled("task t { bulk for i in 0..300 { n.fetch_max(x[i] as i64); } }") == 0


def test_loops_that_are_not_maps_keep_one_iteration_per_turn() -> None:
    # reads the buffer it writes: another iteration's store could feed a load
    assert unrolled("task t { parallel for i in 1..300 { y[i] = y[i - 1] + x[i]; } }") == 0
    assert unrolled("task t { parallel for i in 0..300 { y[i] += x[i]; } }") == 0
    # an atomic that stays one per element has an effect at its place in the iteration: its
    # value is used, or its target varies with the index
    assert unrolled("task t { parallel for i in 0..300 { y[i] = x[i]; let o = n.fetch_add(1); } }") == 0
    assert unrolled("task t { parallel for i in 0..300 { y[i] = x[i]; n.fetch_add(1); let m = n.load(); } }") == 0
    # control flow
    assert unrolled("task t { parallel for i in 0..300 { if i > 3 { y[i] = x[i]; } } }") == 0


def test_the_largest_dispatch_loop_is_counted_for_the_gpu_compile_estimate() -> None:
    # each await resumes at a case of its own: 231 awaits and the entry
    awaits = "task main {\n" + "out[0] += 1;\nyield_now().await;\n" * 231 + "}\n"
    gen = gasync.compile_source("buffer out: i32[1] = zeros;\n" + awaits, "<awaits>", {}).generated
    assert gen.largest_dispatch == ("main", 232)
    assert 19.0 < gen.gpu_compile_estimate_s() < 21.0
    # a block that one jump alone reaches is written in place (codegen/render.py): 100 nested
    # ifs, cut into blocks for their depth, are 10 cases, no longer 232 (measured here:
    # 17.7 -> 4.2 CPU s to PTX)
    ifs = gasync.compile_source(nested_ifs(100)[0], "<ifs>", {}).generated
    assert ifs.largest_dispatch == ("main", 10)
    assert ifs.gpu_compile_estimate_s() < 1.0


def test_a_turn_with_an_iteration_helper_is_two_counted_loops() -> None:
    # (codegen/maps.py, LOOPED: NVVM unrolls them; the SASS is that of the turn written out)
    src = "buffer x: f32[300] = iota;\nbuffer y: f32[4, 300] = zeros;\n"
    src += "task t { parallel for i in 0..300 { y[2, i] = x[i] * 2.0; } }"
    code = generate(gasync.compile_source(src, "<unroll>").plan).source
    turn = code[code.index(MARK) :].split("k += 8 * LANES")[0]
    assert turn.count("for u in range(8):") == 2
    assert "ix_u_0, val_u_0 = it_1(int64(k + u * LANES), " in turn
    assert "t_ix0_0[u] = ix_u_0[0]" in turn and "t_ix1_0[u] = ix_u_0[1]" in turn
    assert "ix_u_0 = (t_ix0_0[u], t_ix1_0[u])" in turn
    assert "t_val_0 = cuda.local.array(8, float32)" in code
    # the values, on the simulator: every element of row 2, none of the others
    run = gasync.compile_source(src, "<unroll>").run(backend="sim", timeout=120)
    y = run.buffers["y"]
    assert y[2].tolist() == [2.0 * i for i in range(300)] and not y[[0, 1, 3]].any()
