"""Parser tests: every construct of the grammar, compared with hand-built ASTs.

Spans are left out of AST equality, so the expected trees below are written
without positions; a few tests check spans on their own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gasync.dsl import ast
from gasync.dsl.ast import (
    ArrayType,
    AsyncBlock,
    Await,
    Binary,
    Block,
    BoolLit,
    Break,
    Buffer,
    BufferInit,
    Call,
    Cast,
    Channel,
    Const,
    Continue,
    ExprStmt,
    ExternFn,
    FloatLit,
    FnDef,
    For,
    ForAwait,
    If,
    Index,
    IntLit,
    Let,
    LetTuple,
    Loop,
    MethodCall,
    Name,
    Param,
    Return,
    ScalarType,
    Select,
    SelectArm,
    Shared,
    Signal,
    Task,
    Unary,
    While,
)
from gasync.dsl.diagnostics import GasyncError
from gasync.dsl.parser import parse

SAMPLES = sorted((Path(__file__).parents[2] / "samples").glob("*.gasync"))

I32, I64, U64, F32, F64 = (ScalarType(t) for t in ("i32", "i64", "u64", "f32", "f64"))


def n(x: str) -> Name:
    return Name(x)


def i(v: int) -> IntLit:
    return IntLit(v)


def b(op: str, left: ast.Expr, right: ast.Expr) -> Binary:
    return Binary(op, left, right)


def items(src: str) -> tuple[ast.Item, ...]:
    return parse(src, "t.gasync").items


def stmts(body: str) -> tuple[ast.Stmt, ...]:
    """The statements of a task whose body is ``body``."""
    (task,) = items("task t {\n" + body + "\n}\n")
    assert isinstance(task, Task)
    return task.body.stmts


def expr(src: str) -> ast.Expr:
    """The value of ``let v = <src>;`` inside a task."""
    (let,) = stmts(f"let v = {src};")
    assert isinstance(let, Let)
    return let.value


# ---- items -----------------------------------------------------------------


def test_empty_file_is_an_empty_program() -> None:
    assert parse("", "e.gasync") == ast.Program("e.gasync", ())
    assert parse("  // nothing\n/* at all */\n", "e.gasync").items == ()


def test_const() -> None:
    assert items("const N: i64 = 1 << 20;") == (Const("N", I64, b("<<", i(1), i(20))),)


@pytest.mark.parametrize(
    ("init", "expected"),
    [
        ("input", BufferInit("input")),
        ("zeros", BufferInit("zeros")),
        ("iota", BufferInit("iota")),
        ("random(1)", BufferInit("random", i(1))),
        ("fill(0.5)", BufferInit("fill", FloatLit(0.5))),
    ],
)
def test_buffer_initialisers(init: str, expected: BufferInit) -> None:
    assert items(f"buffer x: f32[N] = {init};") == (Buffer("x", ArrayType(F32, (n("N"),)), expected),)


def test_two_dimensional_buffer() -> None:
    (buf,) = items("buffer img: f32[H, W + 1] = zeros;")
    assert buf == Buffer("img", ArrayType(F32, (n("H"), b("+", n("W"), i(1)))), BufferInit("zeros"))


def test_shared_signal_channel() -> None:
    assert items("shared hits: u64 = 0;\nsignal stop;\nchannel tiles: i64[8];") == (
        Shared("hits", U64, i(0)),
        Signal("stop"),
        Channel("tiles", I64, i(8)),
    )


def test_async_fn_and_plain_fn() -> None:
    src = "async fn double(x: i32) -> i32 { return x * 2; }\nfn clamp01(v: f32, lo: f32,) -> f32 { return v; }"
    assert items(src) == (
        FnDef("double", True, (Param("x", I32),), I32, Block((Return(b("*", n("x"), i(2))),))),
        FnDef("clamp01", False, (Param("v", F32), Param("lo", F32)), F32, Block((Return(n("v")),))),
    )


def test_fn_without_result_or_params() -> None:
    assert items("async fn tick() { yield_now().await; }") == (
        FnDef("tick", True, (), None, Block((ExprStmt(Await(Call("yield_now", ()))),))),
    )


def test_extern_fn() -> None:
    src = 'extern fn gelu(v: f32) -> f32 from "mylib.kernels:gelu";\nextern fn poke() from "m.k:f";'
    assert items(src) == (
        ExternFn("gelu", (Param("v", F32),), F32, "mylib.kernels:gelu"),
        ExternFn("poke", (), None, "m.k:f"),
    )


def test_tasks_plain_ranged_and_after() -> None:
    src = (
        "task main { }\n"
        "task worker for i in 0..64 { }\n"
        "task reduce after worker { }\n"
        "task report for k in 1..N + 1 after main, reduce { }\n"
    )
    empty = Block(())
    assert items(src) == (
        Task("main", None, None, None, (), empty),
        Task("worker", "i", i(0), i(64), (), empty),
        Task("reduce", None, None, None, (n("worker"),), empty),
        Task("report", "k", i(1), b("+", n("N"), i(1)), (n("main"), n("reduce")), empty),
    )


def test_items_in_any_order() -> None:
    kinds = [type(x) for x in items("task t { }\nconst A: i32 = 1;\nsignal s;\nfn f() { }")]
    assert kinds == [Task, Const, Signal, FnDef]


# ---- statements ------------------------------------------------------------


def test_let_with_and_without_type() -> None:
    assert stmts("let a = 1; let t: f64 = 0.0;") == (Let("a", None, i(1)), Let("t", F64, FloatLit(0.0)))


def test_let_tuple_with_underscore() -> None:
    assert stmts("let (a, _, c,) = join(f(), g(), h()).await;") == (
        LetTuple(("a", None, "c"), Await(Call("join", (Call("f", ()), Call("g", ()), Call("h", ()))))),
    )


@pytest.mark.parametrize("op", ["=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="])
def test_assignment_operators(op: str) -> None:
    assert stmts(f"t {op} 1;") == (ast.Assign(n("t"), op, i(1)),)


def test_assign_to_buffer_elements() -> None:
    assert stmts("x[i] += 1.0; y[r, c] = 0.0;") == (
        ast.Assign(Index(n("x"), (n("i"),)), "+=", FloatLit(1.0)),
        ast.Assign(Index(n("y"), (n("r"), n("c"))), "=", FloatLit(0.0)),
    )


def test_expression_statements() -> None:
    assert stmts("stop.set(); tiles.close(); f(1);") == (
        ExprStmt(MethodCall(n("stop"), "set", ())),
        ExprStmt(MethodCall(n("tiles"), "close", ())),
        ExprStmt(Call("f", (i(1),))),
    )


def test_if_else_if_else() -> None:
    (stmt,) = stmts("if a > b { x = 1; } else if a == b { x = 2; } else { x = 3; }")
    assign = [Block((ast.Assign(n("x"), "=", i(k)),)) for k in (1, 2, 3)]
    inner = If(b("==", n("a"), n("b")), assign[1], assign[2])
    assert stmt == If(b(">", n("a"), n("b")), assign[0], inner)


def test_if_without_else() -> None:
    assert stmts("if stop.is_set() { break; }") == (If(MethodCall(n("stop"), "is_set", ()), Block((Break(),))),)


def test_while_loop_break_continue() -> None:
    assert stmts("while c { continue; } loop { break; }") == (
        While(n("c"), Block((Continue(),))),
        Loop(Block((Break(),))),
    )


@pytest.mark.parametrize(("prefix", "kind"), [("", "seq"), ("parallel ", "parallel"), ("bulk ", "bulk")])
def test_for_kinds(prefix: str, kind: str) -> None:
    body = Block((ast.Assign(Index(n("y"), (n("i"),)), "=", b("*", FloatLit(2.0), Index(n("x"), (n("i"),)))),))
    assert stmts(f"{prefix}for i in 0..N {{ y[i] = 2.0 * x[i]; }}") == (For(kind, "i", i(0), n("N"), body),)


def test_for_range_bounds_are_full_expressions() -> None:
    (stmt,) = stmts("parallel for i in t * TILE..(t + 1) * TILE { }")
    assert stmt == For("parallel", "i", b("*", n("t"), n("TILE")), b("*", b("+", n("t"), i(1)), n("TILE")), Block(()))


def test_for_await() -> None:
    assert stmts("for await t in tiles { f(t); }") == (
        ForAwait("t", n("tiles"), Block((ExprStmt(Call("f", (n("t"),))),))),
    )


def test_return_with_and_without_value() -> None:
    assert stmts("return; return v;") == (Return(), Return(n("v")))


def test_select_arms_with_binding_and_underscore() -> None:
    src = "select {\n t = tiles.recv() => { x = t; }\n _ = stop.wait() => { },\n}"
    assert stmts(src) == (
        Select(
            (
                SelectArm("t", MethodCall(n("tiles"), "recv", ()), Block((ast.Assign(n("x"), "=", n("t")),))),
                SelectArm(None, MethodCall(n("stop"), "wait", ()), Block(())),
            )
        ),
    )


def test_block_tail_expression() -> None:
    (fn,) = items("fn f(x: i32) -> i32 { let y = x; y * 2 }")
    assert isinstance(fn, FnDef)
    assert fn.body == Block((Let("y", None, n("x")),), b("*", n("y"), i(2)))


def test_async_block_with_tail_then_await() -> None:
    assert stmts("let f = async { let a = 1; a + 1 }; let r = f.await;") == (
        Let("f", None, AsyncBlock(Block((Let("a", None, i(1)),), b("+", n("a"), i(1))))),
        Let("r", None, Await(n("f"))),
    )


# ---- expressions -----------------------------------------------------------


@pytest.mark.parametrize(
    ("src", "value"),
    [
        ("42", IntLit(42)),
        ("1_000", IntLit(1000)),
        ("1_000_000", IntLit(1_000_000)),
        ("0xff", IntLit(255)),
        ("0xFF_FF", IntLit(0xFFFF)),
        ("0b101", IntLit(5)),
        ("0o17", IntLit(15)),
        ("1.5", FloatLit(1.5)),
        ("2e-3", FloatLit(2e-3)),
        ("2E+3", FloatLit(2000.0)),
        ("1e10", FloatLit(1e10)),
        ("0.25e1", FloatLit(2.5)),
        ("true", BoolLit(True)),
        ("false", BoolLit(False)),
    ],
)
def test_literals(src: str, value: ast.Expr) -> None:
    got = expr(src)
    assert got == value
    assert type(got.value) is type(value.value)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("src", "tree"),
    [
        ("a + b * c", b("+", n("a"), b("*", n("b"), n("c")))),
        ("a - b - c", b("-", b("-", n("a"), n("b")), n("c"))),
        ("a / b % c", b("%", b("/", n("a"), n("b")), n("c"))),
        ("a << 1 + 2", b("<<", n("a"), b("+", i(1), i(2)))),
        ("a & b == c", b("==", b("&", n("a"), n("b")), n("c"))),
        ("a | b ^ c & d", b("|", n("a"), b("^", n("b"), b("&", n("c"), n("d"))))),
        ("a >> 2 & m", b("&", b(">>", n("a"), i(2)), n("m"))),
        ("!a && b || c", b("||", b("&&", Unary("!", n("a")), n("b")), n("c"))),
        ("a || b && c", b("||", n("a"), b("&&", n("b"), n("c")))),
        ("a < b && b <= c", b("&&", b("<", n("a"), n("b")), b("<=", n("b"), n("c")))),
        ("a != b", b("!=", n("a"), n("b"))),
        ("a >= b + 1", b(">=", n("a"), b("+", n("b"), i(1)))),
        ("(a + b) * c", b("*", b("+", n("a"), n("b")), n("c"))),
        ("-x as f64", Cast(Unary("-", n("x")), F64)),
        ("x as i64 as f32", Cast(Cast(n("x"), I64), F32)),
        ("a * b as f32", b("*", n("a"), Cast(n("b"), F32))),
        ("~m", Unary("~", n("m"))),
        ("- -x", Unary("-", Unary("-", n("x")))),
        ("+x", Unary("+", n("x"))),
        ("!f().await", Unary("!", Await(Call("f", ())))),
    ],
)
def test_precedence_follows_rust(src: str, tree: ast.Expr) -> None:
    assert expr(src) == tree


def test_await_chains() -> None:
    assert expr("f(1).await.await") == Await(Await(Call("f", (i(1),))))
    assert expr("tiles.recv().await") == Await(MethodCall(n("tiles"), "recv", ()))
    assert expr("async { 1 }.await") == Await(AsyncBlock(Block((), i(1))))


def test_calls_methods_and_indexing() -> None:
    assert expr("min(max(v, 0.0), 1.0,)") == Call("min", (Call("max", (n("v"), FloatLit(0.0))), FloatLit(1.0)))
    assert expr("hits.cas(old, new)") == MethodCall(n("hits"), "cas", (n("old"), n("new")))
    assert expr("img[r - 1, c]") == Index(n("img"), (b("-", n("r"), i(1)), n("c")))
    assert expr("x[y[i]]") == Index(n("x"), (Index(n("y"), (n("i"),)),))


def test_builtin_atomic_on_buffer_element() -> None:
    assert stmts("atomic_add(hist[b], 1);") == (ExprStmt(Call("atomic_add", (Index(n("hist"), (n("b"),)), i(1)))),)


def test_join_of_futures() -> None:
    assert expr("join(f(1), g.recv())") == Call("join", (Call("f", (i(1),)), MethodCall(n("g"), "recv", ())))


def test_type_names_are_not_keywords() -> None:
    assert stmts("let f32 = 1;") == (Let("f32", None, i(1)),)


# ---- spans and samples -----------------------------------------------------


def test_spans_point_at_the_source() -> None:
    (task,) = items("task t {\n    let v = a + b;\n}\n")
    assert isinstance(task, Task)
    (let,) = task.body.stmts
    assert (let.span.line, let.span.column) == (2, 5)
    assert isinstance(let, Let)
    assert (let.value.span.line, let.value.span.column, let.value.span.end_column) == (2, 13, 18)


def test_program_keeps_path_and_source() -> None:
    prog = parse("signal s;\n", "p.gasync")
    assert prog.path == "p.gasync"
    assert prog.source == "signal s;\n"


def test_samples_exist() -> None:
    names = {p.stem for p in SAMPLES}
    assert {"async_double", "counter", "warp_specialized"} <= names
    assert len(SAMPLES) >= 6


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_every_sample_parses(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    try:
        prog = parse(text, str(path))
    except GasyncError as exc:  # pragma: no cover - show the diagnostic on failure
        pytest.fail(f"{path.name}: {exc.message} at {exc.span}")
    assert prog.items
    assert text.startswith("//"), "every sample opens with a header comment"


def test_spec_example_async_double() -> None:
    (prog,) = [p for p in SAMPLES if p.stem == "async_double"]
    assert parse(prog.read_text(), str(prog)).items == (
        Buffer("out", ArrayType(I32, (i(1),)), BufferInit("zeros")),
        FnDef("async_double", True, (Param("x", I32),), I32, Block((Return(b("*", n("x"), i(2))),))),
        Task(
            "main",
            None,
            None,
            None,
            (),
            Block((ast.Assign(Index(n("out"), (i(0),)), "=", Await(Call("async_double", (i(21),)))),)),
        ),
    )


def test_spans_cover_keywords_punctuation_and_parentheses() -> None:
    (task,) = items("task main { let y = (x + 1) * 2; }")
    (let,) = task.body.stmts
    assert isinstance(let, ast.Let) and isinstance(let.value, Binary) and isinstance(let.value.left, Binary)
    assert let.span == ast.Span(1, 13, 1, 33)  # from 'let' to ';'
    assert let.value.span == ast.Span(1, 21, 1, 32)  # the product starts at '('
    assert let.value.left.span == ast.Span(1, 22, 1, 27)  # the sum keeps its own span, without '(' ')'


def test_a_syntax_error_comes_before_an_earlier_bad_literal() -> None:
    # the literal's mistake is found first, but is held until the whole file has parsed
    with pytest.raises(GasyncError) as info:
        parse("task main { let a = 12abc; let b = 1 }")
    assert (type(info.value).__name__, info.value.message) == ("MissingSemicolonError", "expected ';', found '}'")
    with pytest.raises(GasyncError) as info:
        parse("task main { let a = 12abc; }")
    assert info.value.message == "invalid numeric literal '12abc'"
    assert info.value.span == ast.Span(1, 21, 1, 26)
