"""What a reader of the spec alone expects, where gasync once did otherwise (a third sweep):
futures kept in locals, float literals past their type, 0x_ff and a byte-order mark, one
exception class for every diagnostic. Values are run in tests/contract (futures_kept_in_locals...)."""

from __future__ import annotations

import pickle

import pytest

import gasync
from gasync.dsl import parse
from gasync.dsl.diagnostics import ErrorGroup, GasyncError, render
from gasync.planner import PlanOptions, plan
from gasync.planner import errors as E


def rendered(src: str) -> list[str]:
    with pytest.raises(ErrorGroup) as info:
        plan(parse(src, "t.gasync"), PlanOptions())
    return [render(e, "t.gasync", src) for e in info.value.errors]


FUTURES = """\
buffer out: i32[4] = zeros;
async fn d(x: i32) -> i32 { return x * 2; }
task main {
    let f = d(1);
    out[0] = f.await + f.await;
    let g = d(2);
    for i in 0..3 { out[1] = g.await; }
    let h = d(3);
    let u = d(4);
    out[2] = u + 1;
    let m = d(5);
    if out[0] == 0 { out[3] = m.await; } else { out[3] = m.await; }
}
"""


def test_a_kept_future_is_used_exactly_once() -> None:
    out = rendered(FUTURES)
    assert [text.splitlines()[0] for text in out] == [
        "t.gasync:5:24: error: future 'f' is used twice: its first use ran it",
        "t.gasync:7:30: error: future 'g' is awaited in a loop it was not made in: the first turn would use it up",
        "t.gasync:8:5: error: future 'h' is never awaited",
        "t.gasync:10:14: error: future 'u' used as a value",
    ]  # m, awaited once in each branch, is fine
    assert "t.gasync:5:14: note: first used here" in out[0]
    assert "t.gasync:6:5: note: made here, outside the loop" in out[1]
    assert all(e.code == "E0207" for e in _errors(FUTURES))


def local_types(src: str, *names: str) -> dict[str, str]:
    """The types of the named locals of the one task of ``src``."""
    (task,) = plan(parse(src, "t.gasync"), PlanOptions()).tasks
    return {name: str(ty) for name, ty in task.body.locals if name in names}


def _errors(src: str) -> list[GasyncError]:
    with pytest.raises(ErrorGroup) as info:
        plan(parse(src, "t.gasync"), PlanOptions())
    return info.value.errors


def test_a_kept_future_takes_its_arguments_as_the_callee_types_them() -> None:
    src = (
        "buffer o: i64[1] = zeros;\nasync fn a(x: i64) -> i64 { return x; }\n"
        "task main { let f = a(3000000000); o[0] = f.await; }\n"
    )
    p = plan(parse(src, "t.gasync"), PlanOptions())
    assert [t.name for t in p.tasks] == ["main"]


@pytest.mark.parametrize(
    ("decl", "ty", "col"),
    [("buffer a: f32[1] = zeros;\ntask main { a[0] = 1e39; }\n", "f32", 20),
     ("buffer a: f64[1] = zeros;\ntask main { a[0] = -1e400; }\n", "f64", 20),
     ("const F: f32 = 3.5e38;\nbuffer a: f32[1] = fill(F);\ntask main { a[0] = 1.0; }\n", "f32", 16)],
)  # fmt: skip
def test_a_float_literal_past_its_type_is_an_error(decl: str, ty: str, col: int) -> None:
    (text,) = rendered(decl)
    assert text.splitlines()[0].endswith(
        f":{col}: error: float literal does not fit in {ty}: it would round to infinity"
    )


def test_the_largest_finite_floats_fit() -> None:
    src = (
        "buffer a: f32[1] = zeros;\nbuffer b: f64[1] = zeros;\n"
        "task main { a[0] = 3.4028235e38; b[0] = -1.7976931348623157e308; }\n"
    )
    plan(parse(src, "t.gasync"), PlanOptions())


def test_separators_after_a_prefix_and_a_byte_order_mark() -> None:
    p = parse("\ufeffbuffer a: i32[3] = zeros;\ntask main { a[0] = 0x_ff; a[1] = 0b_10; a[2] = 0o_17; }\n", "t.gasync")
    body = p.items[1].body.stmts  # type: ignore[union-attr]
    assert [s.value.value for s in body] == [255, 2, 15]
    assert p.items[0].span.column == 1  # type: ignore[union-attr]


def test_one_diagnostic_class_catches_every_program_error() -> None:
    src = "buffer a: i32[1] = zeros;\ntask main { a[0] = 1.5; a[0] = zz; }\n"
    with pytest.raises(gasync.GasyncError) as info:
        gasync.compile_source(src, path="s.gasync")
    err = info.value
    assert isinstance(err, ErrorGroup) and len(err.errors) == 2
    assert (err.code, err.path, err.line, err.column) == ("E0204", "s.gasync", 2, 20)
    assert str(err).splitlines() == [
        "s.gasync:2:20: error[E0204]: mismatched types: expected i32, found floating-point literal",
        "s.gasync:2:32: error[E0202]: cannot find value 'zz' in this scope",
    ]
    back = pickle.loads(pickle.dumps(err))  # as a Dask worker sends it
    assert str(back) == str(err) and isinstance(back, ErrorGroup)
    assert E.TypeMismatchError in {type(e) for e in back.errors}


def test_a_literal_local_takes_the_type_of_a_later_use() -> None:
    src = (
        "buffer a: i64[2] = zeros;\nbuffer d: f64[1] = zeros;\n"
        "task main { let n = 5; a[0] = n; let v = 1.5; d[0] = v; for k in 0..1 { a[1] = k; } }\n"
    )
    assert local_types(src, "n", "v", "k") == {"n": "i64", "v": "f64", "k": "i64"}


def test_uses_that_disagree_are_a_mismatch_as_in_rust() -> None:
    src = "buffer a: i64[2] = zeros;\nbuffer b: i32[2] = zeros;\ntask main { let n = 5; a[0] = n; b[0] = n; }\n"
    (text,) = rendered(src)
    assert text.splitlines()[0] == "t.gasync:3:41: error: mismatched types: expected i32, found i64"


def test_a_task_over_an_empty_range_races_with_no_one() -> None:
    src = (
        "buffer o: i64[4] = zeros;\ntask empty for e in 0..0 { o[0] = 99; }\n"
        "task neg for i in -2..0 { o[(i + 2) as i64] = i as i64; }\n"
    )
    assert not plan(parse(src, "t.gasync"), PlanOptions()).warnings


def test_a_float_without_digits_after_its_dot_is_named_so() -> None:
    from gasync.dsl.diagnostics import InvalidLiteralError

    src = "buffer a: f32[1] = zeros;\ntask main { a[0] = 1. + 2.0; }\n"
    with pytest.raises(InvalidLiteralError) as info:
        parse(src, "t.gasync")
    assert render(info.value, "t.gasync", src).splitlines()[0] == (
        "t.gasync:2:20: error: invalid numeric literal '1.': a float needs digits after its '.'"
    )


def test_a_type_follows_through_lets_ranges_and_arithmetic() -> None:
    src = (
        "buffer a: i64[4] = zeros;\n"
        "task main { let n = 4; let m = n - 1; let k2 = m * 2; a[0] = k2; for k in 0..n { a[k] = k; } }\n"
    )
    assert local_types(src, "n", "m", "k2", "k") == {"n": "i64", "m": "i64", "k2": "i64", "k": "i64"}


def test_a_kept_future_cannot_be_assigned() -> None:
    src = (
        "buffer o: i32[1] = zeros;\nasync fn d(x: i32) -> i32 { return x; }\n"
        "task main { let f = d(1); f = d(2); o[0] = f.await; }\n"
    )
    (text,) = rendered(src)
    assert text.splitlines()[0] == "t.gasync:3:27: error: future 'f' cannot be assigned"


def test_a_reduction_over_a_literal_range_takes_its_type_from_its_use() -> None:
    src = (
        "buffer out: i64[3] = zeros;\ntask main {\n"
        "    let q: i64 = parallel for i in 0..10 reduce sum { i };\n"
        "    let s = parallel for k in 0..4 reduce sum { k };\n"
        "    out[0] = q; out[1] = s; out[2] = bulk for j in 0..5 reduce max { j };\n}\n"
    )
    assert local_types(src, "i", "k", "j", "q", "s") == {"i": "i64", "k": "i64", "j": "i64", "q": "i64", "s": "i64"}


def test_a_reduction_of_a_literal_takes_its_type_from_its_use() -> None:
    # `{ 1 }` counts: its type was i32 whatever the use, so `out[0] = t` was E0204
    src = (
        "const N: i64 = 30;\nbuffer out: i64[2] = zeros;\nbuffer f: f64[1] = zeros;\ntask main {\n"
        "    let t = parallel for i in 0..N reduce sum { 1 };\n"
        "    let h = bulk for i in 0..N reduce max { 2.5 };\n"
        "    out[0] = t; f[0] = h;\n}\n"
    )
    assert local_types(src, "t", "h") == {"t": "i64", "h": "f64"}


def test_a_literal_takes_the_type_of_the_cast_it_fits() -> None:
    # as Rust's cast hint: `3000000000 as i64` was E0204 (an i32 literal), `0.1 as f64` the f32
    # nearest to 0.1 (0.10000000149011612); a literal that does not fit keeps its default
    from gasync import reference

    src = (
        "const B: i64 = 3000000000 as i64;\nbuffer o: i64[2] = zeros;\nbuffer d: f64[3] = zeros;\n"
        "buffer u: u32[1] = zeros;\ntask main {\n    o[0] = B; o[1] = -9223372036854775808 as i64;\n"
        "    d[0] = 0.1 as f64; d[1] = -1e39 as f64;\n"
        "    d[2] = parallel for i in 0..2 reduce sum { 0.1 as f64 };\n    u[0] = -1 as u32;\n}\n"
    )
    out = reference.run(plan(parse(src, "t.gasync"), PlanOptions()), {}).buffers
    assert out["o"].tolist() == [3000000000, -(2**63)]
    assert out["d"].tolist() == [0.1, -1e39, 0.2]
    assert out["u"].tolist() == [2**32 - 1]


def test_a_literal_past_i32_takes_the_wider_type_a_later_use_needs() -> None:
    src = (
        "buffer a: i64[2] = zeros;\nbuffer b: u64[1] = zeros;\ntask main {\n"
        "    let u = 3000000000; let v = u + 1; a[0] = v;\n"
        "    let big = 10000000000000000000; b[0] = big;\n"
        "    let w = -5000000000; a[1] = async { w }.await;\n}\n"
    )
    assert local_types(src, "u", "v", "big", "w") == {"u": "i64", "v": "i64", "big": "u64", "w": "i64"}


@pytest.mark.parametrize(
    ("use", "first", "note"),
    [
        ("", "t.gasync:4:13: error: literal 3000000000 does not fit in i32", "'let u: i64 = ...'"),
        ("if u > 5 { a[0] = 1; }", "t.gasync:4:13: error: literal 3000000000 does not fit in i32", "'let u: i64"),
        ("b[0] = u;", "t.gasync:4:13: error: literal 3000000000 does not fit in i32", None),
    ],
)
def test_a_literal_past_i32_that_nothing_widens_is_still_an_error(use: str, first: str, note: str | None) -> None:
    src = f"buffer a: i64[1] = zeros;\nbuffer b: i32[1] = zeros;\ntask main {{\n    let u = 3000000000; {use}\n}}\n"
    (text,) = rendered(src)
    assert text.splitlines()[0].startswith(first)
    assert (note is None) == ("note: give it a type" not in text)
    if note is not None:
        assert note in text


def test_an_async_blocks_value_typed_by_literals_takes_the_type_its_use_needs() -> None:
    src = (
        "buffer out: i64[4] = zeros;\ntask main {\n"
        "    out[0] = async { let g = 10; out[1] = 100; g * 2 }.await + out[1];\n"
        "    let x: i64 = async { let h = 3; h + 1 }.await;\n    out[2] = x;\n}\n"
    )
    assert local_types(src, "g", "h") == {"g": "i64", "h": "i64"}


def test_a_let_of_an_awaited_literal_block_takes_its_type_from_a_later_use() -> None:
    # (`let p = async { 3 }.await; a_i64[0] = p;` was E0204, expected i64, found i32)
    src = (
        "buffer out: i64[2] = zeros;\nbuffer d: f64[1] = zeros;\ntask main {\n"
        "    let p = async { 3 }.await;\n    out[0] = p;\n"
        "    let v = async { yield_now().await; 0.1 }.await;\n    d[0] = v;\n}\n"
    )
    assert local_types(src, "p", "v") == {"p": "i64", "v": "f64"}


def test_a_join_of_literal_blocks_and_a_returned_literal_take_their_types_from_later_uses() -> None:
    # (`let (p, q) = join(async { 3 }, two()).await; a_i64[0] = p + q;` and `let r = async
    # { return 3; }.await; a_i64[1] = r;` were E0204, i32 + i64 and expected i64, found i32)
    src = (
        "buffer out: i64[3] = zeros;\nbuffer d: f64[1] = zeros;\nasync fn two() -> i64 { 2 }\ntask main {\n"
        "    let (p, q) = join(async { 3 }, two()).await;\n    out[0] = p + q;\n"
        "    let (v, _, k) = join(async { yield_now().await; return 0.1; }, two(), async { 5 }).await;\n"
        "    d[0] = v;\n    let r = async { if k > 1 { return 7; } return 8; }.await;\n    out[1] = r;\n}\n"
    )
    assert local_types(src, "p", "q", "v", "k", "r") == {"p": "i64", "q": "i64", "v": "f64", "k": "i32", "r": "i64"}
