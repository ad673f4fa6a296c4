"""``return`` inside an async block gives the block's value and leaves the block only (issue 10)."""

from __future__ import annotations

import pytest

from gasync.dsl import parse
from gasync.dsl.diagnostics import ErrorGroup, render
from gasync.planner import errors as E
from gasync.planner import ir, plan
from gasync.planner.walk import stmts_in


def block_of(src: str) -> ir.AsyncBlock:
    """The first async block awaited in task main."""
    task = plan(parse(src, "t.gasync")).tasks[0]
    return next(s.future for s in stmts_in(task.body.body) if isinstance(s, ir.AwaitS))  # type: ignore[return-value]


def test_a_block_without_a_tail_takes_its_value_from_return() -> None:
    blk = block_of("buffer o: i32[1] = zeros;\ntask main { let v = async { return 3; }.await; o[0] = v; }\n")
    assert blk.ty == ir.FutureT("i32")
    assert blk.result is not None


def test_a_typed_return_decides_over_a_literal_tail() -> None:
    src = "buffer o: i64[1] = zeros;\ntask main { let x: i64 = 4; o[0] = async { if x > 1 { return x; } 5 }.await; }\n"
    assert block_of(src).ty == ir.FutureT("i64")


def test_a_returned_literal_takes_the_type_of_the_tail() -> None:
    # found by the differential test: the literal was typed as an i32 while the tail's type was worked out
    src = (
        "buffer c: bool[1] = zeros;\nbuffer o: u32[1] = zeros;\n"
        "task main { let w: u32 = 3; o[0] = async { if c[0] { return 4294967295; } w }.await; }\n"
    )
    assert block_of(src).ty == ir.FutureT("u32")


@pytest.mark.parametrize(
    "block",
    ["async { 4294967295 }", "async { return 4294967295; }", "async { if c[0] { return 4294967295; } 7 }"],
)
def test_literals_in_a_block_take_the_type_the_let_gives(block: str) -> None:
    # as Rust infers `let v: u32 = async { 7 }.await;`: the literals are u32, not i32
    head = "buffer c: bool[1] = zeros;\nbuffer o: u32[1] = zeros;\n"
    src = head + f"task main {{ let v: u32 = {block}.await; o[0] = v; }}\n"
    assert block_of(src).ty == ir.FutureT("u32")


def test_a_bare_return_in_a_unit_block() -> None:
    blk = block_of("buffer o: i32[1] = zeros;\ntask main { async { if o[0] == 0 { return; } o[0] = 1; }.await; }\n")
    assert blk.ty == ir.FutureT("unit")
    assert blk.result is None


BAD = {
    "returns on some paths only": (
        "task main {\n    let v = async { if true { return 3; } }.await;\n}\n",
        E.ControlFlowError,
        "t.gasync:2:13: error: this async block gives i32 on some paths but can reach its end without a value\n"
        "   |\n"
        " 2 |     let v = async { if true { return 3; } }.await;\n"
        "   |             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "  = note: end the block with 'return value;' or a final expression",
    ),
    "two returns of different types": (
        "task main {\n    let v = async { if true { return 3; } return 2.0; }.await;\n}\n",
        E.TypeMismatchError,
        "t.gasync:2:50: error: mismatched types: expected i32, found floating-point literal\n"
        "   |\n"
        " 2 |     let v = async { if true { return 3; } return 2.0; }.await;\n"
        "   |                                                  ^^^",
    ),
    "a return against the tail's type": (
        "task main {\n    let x: f64 = 1.0;\n    let v = async { if true { return 3; } x }.await;\n}\n",
        E.TypeMismatchError,
        "t.gasync:3:38: error: mismatched types: expected f64, found integer literal\n"
        "   |\n"
        " 3 |     let v = async { if true { return 3; } x }.await;\n"
        "   |                                      ^\n"
        "  = note: write a float literal such as 3.0",
    ),
    "a value after 'return;'": (
        "task main {\n    async { if true { return; } return 3; }.await;\n}\n",
        E.TypeMismatchError,
        "t.gasync:2:40: error: mismatched types: this async block's value is (), found i32\n"
        "   |\n"
        " 2 |     async { if true { return; } return 3; }.await;\n"
        "   |                                        ^",
    ),
    "'return;' in a block with a value": (
        "task main {\n    let v = async { if true { return; } 3 }.await;\n}\n",
        E.TypeMismatchError,
        "t.gasync:2:31: error: 'return;' in an async block whose value is i32\n"
        "   |\n"
        " 2 |     let v = async { if true { return; } 3 }.await;\n"
        "   |                               ^^^^^^^",
    ),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_block_returns(name: str) -> None:
    src, cls, text = BAD[name]
    with pytest.raises(ErrorGroup) as info:
        plan(parse(src, "t.gasync"))
    assert [type(e) for e in info.value.errors] == [cls]
    assert render(info.value.errors[0], "t.gasync", src) == text


def test_return_in_a_task_outside_blocks_is_still_an_error() -> None:
    src = "task main {\n    async { }.await;\n    return 3;\n}\n"
    with pytest.raises(ErrorGroup) as info:
        plan(parse(src, "t.gasync"))
    assert info.value.errors[0].message == "a task returns no value"
