"""Groups whose locals take the block's dynamic shared memory (codegen/groups.py, ``dynamic_shared``):
the kernel's views, their offsets, and the size the launch asks for. Programs that fit static
arrays keep them (the golden files of the group samples)."""

from __future__ import annotations

from contract.bigshared import ONE_GROUP, TWO_GROUPS

import gasync
from gasync.codegen import groups, pinned


def kernel_views(source: str) -> list[str]:
    """The kernel's lines between its own shared arrays and its pinned tasks' frame rows."""
    lines = gasync.compile_source(source, "big.gasync").source.splitlines()
    start = next(k for k, line in enumerate(lines) if "GW = cuda.shared.array" in line) + 1
    end = next(k for k in range(start, len(lines)) if lines[k].startswith(("    FR_I = ", "    if tid == 0")))
    return [line.strip() for line in lines[start:end]]


def test_a_group_over_48_kib_is_views_of_dynamic_shared_memory_one_array_per_dtype() -> None:
    assert kernel_views(ONE_GROUP) == [
        "# 98448 bytes of dynamic shared memory (the launch's); each group's locals from byte 0",
        "DYN_boolean = cuda.shared.array(0, boolean)",
        "DYN_float64 = cuda.shared.array(0, float64)",
        "DYN_int32 = cuda.shared.array(0, int32)",
        "DYN_int64 = cuda.shared.array(0, int64)",
        "g0_b_stage = dgroups.rows(DYN_float64[0:12288], 2, 6144)  # bytes 0..98303",
        "g0_b_seen = DYN_boolean[98304:98307]  # bytes 98304..98306",
        "g0_b_cnt = DYN_int32[24580:24585]  # bytes 98320..98339",
        "g0_ch_full = DYN_int64[12294:12304]  # bytes 98352..98431",
        "g0_chv_full = DYN_int64[12304:12306]  # bytes 98432..98447",
        "L_pipe = Locals_pipe(g0_b_stage, g0_b_seen, g0_b_cnt, g0_ch_full, g0_chv_full)",
    ]


def test_every_group_starts_at_byte_0_and_the_block_takes_the_largest() -> None:
    """A block runs one group instance at a time: the groups' locals overlap."""
    assert kernel_views(TWO_GROUPS)[3:] == [
        "g0_b_fa = DYN_float64[0:7680]  # bytes 0..61439",
        "L_a = Locals_a(g0_b_fa)",
        "g1_b_fb = DYN_int64[0:7680]  # bytes 0..61439",
        "L_b = Locals_b(g1_b_fb)",
    ]
    program = gasync.compile_source(TWO_GROUPS, "two.gasync")
    assert program.generated.dynamic_shared == 61440 == max(g.shared_bytes for g in program.plan.groups)


def test_static_arrays_up_to_48_kib_with_the_kernels_own() -> None:
    """The threshold counts every group (the kernel declares all of them) and the kernel's own
    288 bytes and its pinned tasks' frame rows."""

    def source(n: int) -> str:
        src = f"buffer y: f64[1] = zeros;\ngroup g {{\n    local buffer s: f64[{n}];\n"
        return src + "    task t { y[0] = s[0]; }\n}\n"

    plan = gasync.compile_source(source(2), "t.gasync").plan
    assert groups.kernel_shared() == 288
    assert pinned.frame_words(plan) == (1, 1)  # one warp, whose task's frame is its state word
    assert groups.kernel_shared(plan) == 288 + 8 * 2
    room = groups.STATIC_SHARED - groups.kernel_shared(plan)
    fit = room // 16 * 2  # f64s in whole 16-byte lines (a local buffer's alignment) within the room
    for n, dynamic in ((fit, 0), (fit + 2, fit * 8 + 16)):
        gen = gasync.compile_source(source(n), "t.gasync").generated
        assert gen.dynamic_shared == dynamic
        assert ("cuda.shared.array(0, float64)" in gen.source) == bool(dynamic)


def test_views_are_aligned_to_their_elements_and_buffers_to_16_bytes() -> None:
    src = ONE_GROUP.replace("local buffer seen: bool[3];", "local buffer seen: bool[3];\n    local buffer w: u64[3];")
    plan = gasync.compile_source(src, "t.gasync").plan
    g = plan.groups[0]
    offsets, sizes = groups._offsets(g), [size for _, _, _, size in groups._arrays(g)]
    assert offsets == [0, 98304, 98320, 98352, 98384, 98464]
    assert all(at % 16 == 0 for at in offsets[: len(g.buffers)])
    assert all(at % size == 0 for at, size in zip(offsets, sizes, strict=True))
