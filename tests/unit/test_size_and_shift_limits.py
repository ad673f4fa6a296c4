"""Constant shifts that overflow, and buffer or channel sizes no device could hold, are
located errors (issue 10), never a silently wrapped value or an allocation that fails later."""

from __future__ import annotations

import pytest

from gasync.dsl import parse
from gasync.dsl.diagnostics import ErrorGroup, render
from gasync.planner import errors as E
from gasync.planner import ir, plan
from gasync.planner.consteval import evaluate
from gasync.planner.model import PlanOptions


def diagnose(src: str) -> list[tuple[type, str]]:
    with pytest.raises(ErrorGroup) as info:
        plan(parse(src, "t.gasync"))
    return [(type(e), render(e, "t.gasync", src)) for e in info.value.errors]


def test_a_const_shift_by_the_width_is_an_error() -> None:
    assert diagnose("const S: i32 = 1 << 40;\ntask main { }\n") == [
        (
            E.ConstEvalError,
            "t.gasync:1:16: error: attempt to shift left with overflow\n"
            "   |\n"
            " 1 | const S: i32 = 1 << 40;\n"
            "   |                ^^^^^^^\n"
            "  = note: i32 is 32 bits wide: a constant shift amount must be in 0..32, found 40",
        )
    ]


@pytest.mark.parametrize(
    ("expr", "direction", "width", "amount"),
    [("(1 as u32) >> 32", "right", 32, 32), ("1 << -1", "left", 32, -1), ("(1 as i64) << 64", "left", 64, 64)],
)
def test_every_overflowing_const_shift_is_an_error(expr: str, direction: str, width: int, amount: int) -> None:
    [(cls, text)] = diagnose(f"const S: i64 = ({expr}) as i64;\ntask main {{ }}\n")
    assert cls is E.ConstEvalError
    assert f"error: attempt to shift {direction} with overflow" in text
    assert f"must be in 0..{width}, found {amount}" in text


def test_shifts_within_the_width_fold() -> None:
    p = plan(parse("const A: i32 = 1 << 31;\nconst B: i64 = (1 as i64) << 63;\ntask main { }\n", "t.gasync"))
    assert [c.value for c in p.consts] == [-(2**31), -(2**63)]


def test_the_device_reference_masks_the_shift_amount() -> None:
    # what generated code computes for a shift only known at run time (decision 6: it wraps)
    shift = ir.Binary("<<", ir.Lit(1, "i32"), ir.Lit(40, "i32"), "i32")
    assert evaluate(shift, checked_shifts=False) == 256


def test_a_literal_size_is_an_i64_so_one_shifted_past_i32_is_measured() -> None:
    assert diagnose("buffer x: f32[1 << 40] = zeros;\ntask main { }\n") == [
        (
            E.SizeLimitError,
            "t.gasync:1:11: error: buffer 'x' needs 4398046511104 bytes (4096 GiB), more than a device can hold\n"
            "   |\n"
            " 1 | buffer x: f32[1 << 40] = zeros;\n"
            "   |           ^^^^^^^^^^^^\n"
            "  = note: a buffer or channel may use at most 274877906944 bytes (256 GiB)",
        )
    ]


def test_a_large_buffer_a_device_can_hold_is_accepted() -> None:
    p = plan(parse("buffer x: f32[5_000_000_000] = zeros;\ntask main { }\n", "t.gasync"))
    assert p.buffers[0].shape == (5_000_000_000,)


def test_a_two_dimensional_buffer_is_measured_as_a_whole() -> None:
    [(cls, text)] = diagnose("buffer x: f64[1 << 20, 1 << 20] = zeros;\ntask main { }\n")
    assert cls is E.SizeLimitError
    assert "buffer 'x' needs 8796093022208 bytes (8192 GiB)" in text


def test_a_channel_too_large_points_at_its_capacity() -> None:
    src = "channel c: i32[1 << 40];\ntask a { c.send(1).await; }\ntask b { let v = c.recv().await; }\n"
    assert diagnose(src) == [
        (
            E.SizeLimitError,
            "t.gasync:1:16: error: channel 'c' needs 8796093022208 bytes (8192 GiB), more than a device can hold\n"
            "   |\n"
            " 1 | channel c: i32[1 << 40];\n"
            "   |                ^^^^^^^\n"
            "  = note: a buffer or channel may use at most 274877906944 bytes (256 GiB)",
        )
    ]


@pytest.mark.parametrize(("size", "found"), [("0", "0"), ("-1", "-1"), ("2 - 3", "-1")])
def test_a_size_must_be_positive(size: str, found: str) -> None:
    [(cls, text)] = diagnose(f"buffer x: f32[{size}] = zeros;\ntask main {{ }}\n")
    assert cls is E.ConstEvalError
    assert f"error: a buffer dimension must be positive, found {found}" in text


def test_a_shift_by_a_literal_past_the_width_is_an_error_in_a_let() -> None:
    assert diagnose("task main {\n    let a: i64 = 1 << 64;\n}\n") == [
        (
            E.ConstEvalError,
            "t.gasync:2:18: error: attempt to shift left with overflow\n"
            "   |\n"
            " 2 |     let a: i64 = 1 << 64;\n"
            "   |                  ^^^^^^^\n"
            "  = note: i64 is 64 bits wide: a constant shift amount must be in 0..64, found 64",
        )
    ]


def test_a_constant_index_shifted_past_the_width_is_an_error() -> None:
    assert diagnose("buffer o: i64[4] = zeros;\ntask main {\n    o[1 << 64] = 1;\n}\n") == [
        (
            E.ConstEvalError,
            "t.gasync:3:7: error: attempt to shift left with overflow\n"
            "   |\n"
            " 3 |     o[1 << 64] = 1;\n"
            "   |       ^^^^^^^\n"
            "  = note: i64 is 64 bits wide: a constant shift amount must be in 0..64, found 64",
        )
    ]


@pytest.mark.parametrize(
    ("stmt", "column", "direction", "ty", "amount"),
    [
        ("o[0] = o[1] >> K;", 12, "right", "i64", 64),  # a const amount
        ("o[0] = o[1] << -1;", 12, "left", "i64", -1),
        ("o[0] = o[1] << (K - 1) * 2;", 12, "left", "i64", 126),
        ("p[0] = 1 << 32;", 12, "left", "i32", 32),  # the 1 is the element's i32
        ("p[0] = (o[1] as i32) >> (K / 2);", 12, "right", "i32", 32),
        ("let d: u32 = 5; d <<= 32;", 21, "left", "u32", 32),
        ("let d: i64 = 5; d >>= K + 1;", 21, "right", "i64", 65),
    ],
)
def test_every_shift_by_a_constant_past_the_width_is_an_error(
    stmt: str, column: int, direction: str, ty: str, amount: int
) -> None:
    src = f"const K: i64 = 64;\nbuffer o: i64[4] = zeros;\nbuffer p: i32[4] = zeros;\ntask main {{\n    {stmt}\n}}\n"
    [(cls, text)] = diagnose(src)
    width = ir.BITS[ty]
    assert cls is E.ConstEvalError
    assert text.startswith(f"t.gasync:5:{column}: error: attempt to shift {direction} with overflow\n")
    assert text.endswith(
        f"  = note: {ty} is {width} bits wide: a constant shift amount must be in 0..{width}, found {amount}"
    )


def test_a_define_moves_a_shift_past_the_width() -> None:
    src = "const K: i64 = 8;\nbuffer o: i64[4] = zeros;\ntask main {\n    o[0] = o[1] << K;\n}\n"
    plan(parse(src, "t.gasync"))
    with pytest.raises(ErrorGroup) as info:
        plan(parse(src, "t.gasync"), PlanOptions(defines=(("K", "64"),)))
    [err] = info.value.errors
    assert (err.code, err.message, err.span.line, err.span.column) == (
        "E0210",
        "attempt to shift left with overflow",
        4,
        12,
    )


def test_an_unannotated_literal_shift_is_i32_unless_a_use_widens_it() -> None:
    assert diagnose("task main {\n    let b = 1 << 40;\n}\n") == [
        (
            E.ConstEvalError,
            "t.gasync:2:13: error: attempt to shift left with overflow\n"
            "   |\n"
            " 2 |     let b = 1 << 40;\n"
            "   |             ^^^^^^^\n"
            "  = note: i32 is 32 bits wide: a constant shift amount must be in 0..32, found 40\n"
            "  = note: give it a type, 'let b: i64 = ...', or use it where an i64 is needed",
        )
    ]
    p = plan(parse("buffer o: i64[1] = zeros;\ntask main {\n    let c = 1 << 40;\n    o[0] = c;\n}\n", "t.gasync"))
    assert p.tasks[0].body.body[0].value.ty == "i64"


def test_shifts_in_range_and_by_run_time_amounts_compile() -> None:
    src = (
        "const K: i64 = 63;\nbuffer o: i64[4] = zeros;\nbuffer p: i32[4] = zeros;\ntask main {\n"
        "    let n: i64 = 70;\n    o[0] = o[1] << K;\n    o[1] = 1 << 63;\n    o[2] = o[3] << n;\n"
        "    o[3] = o[2] >> (n + 1);\n    p[0] = 1 << 31;\n    let d: u32 = 1; d <<= 31; d <<= p[1];\n}\n"
    )
    plan(parse(src, "t.gasync"))
