"""Every static rule of the spec: a bad program and the exact rendered diagnostic."""

from __future__ import annotations

from pathlib import Path

import pytest

from gasync.dsl import parse
from gasync.dsl.diagnostics import ErrorGroup, render
from gasync.planner import PlanOptions, plan
from gasync.planner import errors as E
from gasync.planner.model import Plan

SAMPLES = sorted((Path(__file__).parents[2] / "samples").glob("*.gasync"))


def plan_of(src: str, *defines: tuple[str, str], strict: bool = False) -> Plan:
    return plan(parse(src, "t.gasync"), PlanOptions(tuple(defines), strict))


def diagnose(src: str, strict: bool = False) -> tuple[list[type], str]:
    """The classes of the errors a program gives, and their rendering."""
    with pytest.raises(ErrorGroup) as info:
        plan_of(src, strict=strict)
    errs = info.value.errors
    return [type(e) for e in errs], "\n".join(render(e, "t.gasync", src) for e in errs)


def channel_error(what: str) -> str:
    return (
        f"t.gasync:1:1: error: channel 'c' has no {what}\n"
        "   |\n"
        " 1 | channel c: i32[4];\n"
        "   | ^^^^^^^^^^^^^^^^^^\n"
        "  = note: a channel needs one task that sends and one that receives (directly or through calls)"
    )


RULES = {
    "bitwise fetch on a float": (
        "shared s: f32 = 0.0;\ntask main { s.fetch_or(1.0); }\n",
        E.TypeMismatchError,
        "t.gasync:2:13: error: 'fetch_or' does not apply to f32: it works on integers\n"
        "   |\n"
        " 2 | task main { s.fetch_or(1.0); }\n"
        "   |             ^^^^^^^^^^^^^^^",
    ),
    "bitwise atomic on a float buffer": (
        "buffer b: f64[2] = zeros;\ntask main { atomic_and(b[0], 1.0); }\n",
        E.TypeMismatchError,
        "t.gasync:2:13: error: 'atomic_and' does not apply to f64: it works on integers\n"
        "   |\n"
        " 2 | task main { atomic_and(b[0], 1.0); }\n"
        "   |             ^^^^^^^^^^^^^^^^^^^^^",
    ),
    "unknown name": (
        "task main { let x = y + 1; }\n",
        E.UnknownNameError,
        "t.gasync:1:21: error: cannot find value 'y' in this scope\n"
        "   |\n"
        " 1 | task main { let x = y + 1; }\n"
        "   |                     ^",
    ),
    "unknown task in after": (
        "task main after nobody { }\n",
        E.UnknownNameError,
        "t.gasync:1:17: error: cannot find task 'nobody' named in 'after'\n"
        "   |\n"
        " 1 | task main after nobody { }\n"
        "   |                 ^^^^^^",
    ),
    "duplicate item": (
        "buffer x: f32[4] = zeros;\nsignal x;\ntask main { }\n",
        E.DuplicateNameError,
        "t.gasync:2:8: error: the name 'x' is defined more than once\n"
        "   |\n"
        " 2 | signal x;\n"
        "   |        ^\n"
        "t.gasync:1:8: note: 'x' was first defined here as a buffer\n"
        "   |\n"
        " 1 | buffer x: f32[4] = zeros;\n"
        "   |        ^",
    ),
    "duplicate parameter": (
        "fn f(a: i32, a: i32) -> i32 { return a; }\ntask main { let b = f(1, 2); }\n",
        E.DuplicateNameError,
        "t.gasync:1:14: error: parameter 'a' is bound more than once\n"
        "   |\n"
        " 1 | fn f(a: i32, a: i32) -> i32 { return a; }\n"
        "   |              ^^^^^^",
    ),
    "types disagree": (
        "task main {\n    let x: f64 = 1.0;\n    let y: f32 = x;\n}\n",
        E.TypeMismatchError,
        "t.gasync:3:18: error: mismatched types: expected f32, found f64\n"
        "   |\n"
        " 3 |     let y: f32 = x;\n"
        "   |                  ^\n"
        "  = note: convert with 'as f32'",
    ),
    "types never mix": (
        "task main {\n    let a: i32 = 1;\n    let b: i64 = 2;\n    let c = a + b;\n}\n",
        E.TypeMismatchError,
        "t.gasync:4:13: error: mismatched types: i32 + i64\n"
        "   |\n"
        " 4 |     let c = a + b;\n"
        "   |             ^^^^^\n"
        "  = note: convert one side with 'as', for example '... as i32'",
    ),
    "mutual recursion": (
        "async fn ping(n: i32) -> i32 {\n    return pong(n).await;\n}\n"
        "async fn pong(n: i32) -> i32 {\n    return ping(n).await;\n}\n"
        "task main { let v = ping(1).await; }\n",
        E.RecursionError_,
        "t.gasync:2:12: error: recursion among async fns: ping -> pong -> ping\n"
        "   |\n"
        " 2 |     return pong(n).await;\n"
        "   |            ^^^^^^^\n"
        "  = note: every frame needs a size known at compile time, so calls cannot form a cycle",
    ),
    "direct recursion": (
        "async fn f(n: i32) -> i32 {\n    return f(n).await;\n}\ntask main { let v = f(1).await; }\n",
        E.RecursionError_,
        "t.gasync:2:12: error: recursion among async fns: f -> f\n"
        "   |\n"
        " 2 |     return f(n).await;\n"
        "   |            ^^^^\n"
        "  = note: every frame needs a size known at compile time, so calls cannot form a cycle",
    ),
    "after cycle": (
        "task a after c { }\ntask b after a { }\ntask c after b { }\n",
        E.AfterCycleError,
        "t.gasync:2:14: error: cycle in 'after' edges: a -> b -> c -> a\n"
        "   |\n"
        " 2 | task b after a { }\n"
        "   |              ^\n"
        "  = note: a task starts only when all the tasks it comes after are done, so none of these could start",
    ),
    "after itself": (
        "task t after t { }\n",
        E.AfterCycleError,
        "t.gasync:1:14: error: cycle in 'after' edges: t -> t\n   |\n 1 | task t after t { }\n   |              ^",
    ),
    "await in a plain fn": (
        "fn f() -> i32 {\n    yield_now().await;\n    return 1;\n}\ntask main { let v = f(); }\n",
        E.AwaitContextError,
        "t.gasync:2:5: error: '.await' is only allowed inside async fns, async blocks and tasks\n"
        "   |\n"
        " 2 |     yield_now().await;\n"
        "   |     ^^^^^^^^^^^^^^^^^\n"
        "  = note: 'f' is a plain fn; declare it 'async fn'",
    ),
    "await in parallel for": (
        "task main {\n    parallel for i in 0..32 {\n        yield_now().await;\n    }\n}\n",
        E.AwaitContextError,
        "t.gasync:3:9: error: '.await' is not allowed inside 'parallel for'\n"
        "   |\n"
        " 3 |         yield_now().await;\n"
        "   |         ^^^^^^^^^^^^^^^^^",
    ),
    "break in parallel for": (
        "buffer o: i32[8] = zeros;\ntask main {\n    parallel for i in 0..8 {\n        if i == 3 { break; }\n"
        "        o[i] = 1;\n    }\n}\n",
        E.ControlFlowError,
        "t.gasync:4:21: error: 'break' cannot leave a 'parallel for': its iterations run at once\n"
        "   |\n"
        " 4 |         if i == 3 { break; }\n"
        "   |                     ^^^^^\n"
        "  = note: skip an iteration's work with 'if', or use a sequential 'for' or 'while'",
    ),
    "continue in bulk for, inside a sequential loop": (
        "task main {\n    for k in 0..2 {\n        bulk for i in 0..8 { continue; }\n    }\n}\n",
        E.ControlFlowError,
        "t.gasync:3:30: error: 'continue' cannot leave a 'bulk for': its iterations run at once\n"
        "   |\n"
        " 3 |         bulk for i in 0..8 { continue; }\n"
        "   |                              ^^^^^^^^\n"
        "  = note: skip an iteration's work with 'if', or use a sequential 'for' or 'while'",
    ),
    "await in bulk for": (
        "task main {\n    bulk for i in 0..32 {\n        yield_now().await;\n    }\n}\n",
        E.AwaitContextError,
        "t.gasync:3:9: error: '.await' is not allowed inside 'bulk for'\n"
        "   |\n"
        " 3 |         yield_now().await;\n"
        "   |         ^^^^^^^^^^^^^^^^^",
    ),
    "task locals read-only in bulk for": (
        "task main {\n    let s = 0;\n    bulk for i in 0..32 {\n        s += 1;\n    }\n}\n",
        E.ReadOnlyError,
        "t.gasync:4:9: error: cannot assign to 's' inside 'bulk for': task locals are read-only\n"
        "   |\n"
        " 4 |         s += 1;\n"
        "   |         ^^^^^^\n"
        "  = note: carry results out through a buffer or an atomic",
    ),
    "channel without sender": (
        "channel c: i32[4];\ntask main {\n    let v = c.recv().await;\n}\n",
        E.ChannelUseError,
        channel_error("sender: no task sends on it"),
    ),
    "channel without receiver": (
        "channel c: i32[4];\ntask main {\n    c.send(1).await;\n}\n",
        E.ChannelUseError,
        channel_error("receiver: no task receives from it"),
    ),
    "channel sent on only by an async fn nobody calls": (
        "channel c: i32[4];\nasync fn push() {\n    c.send(1).await;\n}\ntask main {\n    let v = c.recv().await;\n}\n",
        E.ChannelUseError,
        channel_error("sender: no task sends on it"),
    ),
    "extern path with slashes": (
        'extern fn g(v: f32) -> f32 from "mylib/kernels.py";\ntask main { }\n',
        E.ExternPathError,
        't.gasync:1:33: error: invalid extern path "mylib/kernels.py": expected "dotted.module:function" made of '
        "identifiers\n"
        "   |\n"
        ' 1 | extern fn g(v: f32) -> f32 from "mylib/kernels.py";\n'
        "   |                                 ^^^^^^^^^^^^^^^^^^",  # at the quoted path (decision 35)
    ),
}


@pytest.mark.parametrize("name", RULES)
def test_each_rule_gives_its_error(name: str) -> None:
    src, cls, expected = RULES[name]
    classes, text = diagnose(src)
    assert classes == [cls]
    assert text == expected


CONCURRENT = "buffer y: f32[8] = zeros;\ntask a {\n    y[0] = 1.0;\n}\ntask b {\n    y[0] = 2.0;\n}\n"
CONCURRENT_TEXT = (
    "t.gasync:6:5: {sev}: tasks 'a' and 'b' may run at once and both write buffer 'y'\n"
    "   |\n"
    " 6 |     y[0] = 2.0;\n"
    "   |     ^^^^^^^^^^^\n"
    "t.gasync:3:5: note: 'a' writes 'y' here\n"
    "   |\n"
    " 3 |     y[0] = 1.0;\n"
    "   |     ^^^^^^^^^^^\n"
    "  = note: order them with 'after a', or write with atomic_add and friends"
)


def test_concurrent_writes_are_a_warning() -> None:
    p = plan_of(CONCURRENT)
    assert [type(w) for w in p.warnings] == [E.ConcurrentWriteWarning]
    assert render(p.warnings[0], "t.gasync", CONCURRENT) == CONCURRENT_TEXT.format(sev="warning")


def test_concurrent_writes_are_an_error_under_strict() -> None:
    classes, text = diagnose(CONCURRENT, strict=True)
    assert classes == [E.ConcurrentWriteError]
    assert text == CONCURRENT_TEXT.format(sev="error")


@pytest.mark.parametrize(
    "src",
    [
        # ordered by after, directly or through a chain
        "buffer y: f32[8] = zeros;\ntask a { y[0] = 1.0; }\ntask b after a { y[0] = 2.0; }\n",
        "buffer y: f32[8] = zeros;\ntask a { y[0] = 1.0; }\ntask m after a { }\ntask b after m { y[0] = 2.0; }\n",
        # atomics do not race
        "buffer y: i32[8] = zeros;\ntask a { atomic_add(y[0], 1); }\ntask b { atomic_add(y[0], 2); }\n",
        # instances of one task are disjoint
        "buffer y: f32[8] = zeros;\ntask a for i in 0..8 { y[i] = 1.0; }\n",
    ],
)
def test_no_concurrent_write_warning(src: str) -> None:
    assert plan_of(src).warnings == ()


def test_concurrent_writes_through_calls() -> None:
    src = (
        "buffer y: f32[8] = zeros;\nfn put(i: i64) { y[i] = 1.0; }\n"
        "async fn later(i: i64) { yield_now().await; put(i); }\n"
        "task a { later(0).await; }\ntask b { put(1); }\n"
    )
    (w,) = plan_of(src).warnings
    assert w.message == "tasks 'a' and 'b' may run at once and both write buffer 'y'"


def test_independent_errors_come_together_in_source_order() -> None:
    src = "task main {\n    let x = nope;\n}\ntask other {\n    let y: i32 = 1.5;\n}\ntask t after t { }\n"
    classes, text = diagnose(src)
    assert classes == [E.UnknownNameError, E.TypeMismatchError, E.AfterCycleError]
    assert [line for line in text.splitlines() if ": error: " in line] == [
        "t.gasync:2:13: error: cannot find value 'nope' in this scope",
        "t.gasync:5:18: error: mismatched types: expected i32, found floating-point literal",
        "t.gasync:7:14: error: cycle in 'after' edges: t -> t",
    ]


def test_a_broken_item_does_not_cascade() -> None:
    src = "const A: i64 = B;\nconst B: i64 = A;\nbuffer x: f32[A] = zeros;\ntask main { x[0] = 1.0; }\n"
    classes, text = diagnose(src)
    assert classes == [E.ConstEvalError]
    assert text.splitlines()[0] == "t.gasync:1:1: error: const 'A' depends on itself: A -> B -> A"


@pytest.mark.parametrize("path", ["mylib.kernels:gelu", "k:f", "a.b.c:_g1"])
def test_extern_paths_that_are_accepted(path: str) -> None:
    p = plan_of(f'extern fn g(v: f32) -> f32 from "{path}";\ntask main {{ let y = g(1.0); }}\n')
    (ext,) = p.externs
    assert f"{ext.module}:{ext.attr}" == path
    assert ext.params == (("v", "f32"),) and ext.ret == "f32"


@pytest.mark.parametrize("path", ["gelu", "mylib.kernels", "a..b:f", "a.b:f.g", ":f", "a:b:c", "1a:f", ""])
def test_extern_paths_that_are_rejected(path: str) -> None:
    classes, _ = diagnose(f'extern fn g(v: f32) -> f32 from "{path}";\ntask main {{ }}\n')
    assert classes == [E.ExternPathError]


# ---- const folding and -D ---------------------------------------------------

CONSTS = "const N: i64 = 1 << 4;\nconst M: i64 = N * 2 + 1;\nbuffer x: f32[M] = zeros;\ntask w for i in 0..N { }\n"


def test_consts_fold_in_dependency_order() -> None:
    p = plan_of(CONSTS)
    assert [(c.name, c.value) for c in p.consts] == [("N", 16), ("M", 33)]
    assert p.buffers[0].shape == (33,)
    assert (p.tasks[0].count, p.tasks[0].var_ty) == (16, "i64")


def test_a_define_overrides_a_const_and_what_depends_on_it() -> None:
    p = plan_of(CONSTS, ("N", "0x10_0"))
    assert [(c.name, c.value) for c in p.consts] == [("N", 256), ("M", 513)]
    assert p.buffers[0].shape == (513,)
    assert p.instances == 256


@pytest.mark.parametrize(
    ("define", "message"),
    [
        (("Q", "1"), "-D Q=...: the program has no const named 'Q'"),
        (("N", "abc"), "-D N=abc: 'abc' is not a valid i64"),
        (("N", "1.5"), "-D N=1.5: '1.5' is not a valid i64"),
    ],
)
def test_bad_defines(define: tuple[str, str], message: str) -> None:
    with pytest.raises(ErrorGroup) as info:
        plan_of(CONSTS, define)
    assert [type(e) for e in info.value.errors] == [E.DefineError]
    assert info.value.errors[0].in_cli_words().message == message
    assert info.value.errors[0].message == f"defines['{define[0]}']: {message.split(': ', 1)[1]}"


def test_a_define_that_does_not_fit() -> None:
    src = "const K: i32 = 1;\ntask main { }\n"
    with pytest.raises(ErrorGroup) as info:
        plan_of(src, ("K", "4294967296"))
    assert info.value.errors[0].message == "defines['K']: 4294967296 does not fit in i32"  # the API's words
    assert info.value.errors[0].in_cli_words().message == "-D K=4294967296: 4294967296 does not fit in i32"


# ---- the samples --------------------------------------------------------------


@pytest.mark.parametrize("path", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_every_sample_plans_without_errors(path: Path) -> None:
    p = plan(parse(path.read_text(), str(path)))
    assert p.tasks
    assert all(w.severity == "warning" for w in p.warnings)


def test_a_shifted_literal_takes_its_type_from_the_other_operand() -> None:
    # as in Rust: a shift has its left operand's type, and that literal is inferred
    # (found by the expression property test: `(11 << v) - (w as i64)` was rejected)
    from gasync.planner import ir

    p = plan_of(
        "buffer v: i64[2] = zeros;\nbuffer o: i64[2] = zeros;\nbuffer k: i32[1] = zeros;\n"
        "task t { o[0] = ((11 << v[1]) - v[0]) as i64; o[1] = ((1 << k[0]) - v[1]) as i64; }"
    )  # `as` gives its operand no expected type: the literal learns it from the other side
    stores = [s for s in p.tasks[0].body.body if isinstance(s, ir.Store)]
    assert len(stores) == 2
    for s in stores:
        inner = s.value.expr if isinstance(s.value, ir.Cast) else s.value
        assert isinstance(inner, ir.Binary) and inner.ty == "i64"
        assert isinstance(inner.left, ir.Binary) and inner.left.ty == "i64"
    # a shift whose amount awaits keeps its literal's default type, so the order of effects holds
    _, text = diagnose(
        "buffer o: i64[1] = zeros;\nasync fn f() -> i32 { return 1; }\n"
        "task t { o[0] = ((1 << f().await) - o[0]) as i64; }"
    )
    assert "mismatched types: i32 - i64" in text


NESTED_JOIN_FN = "async fn f(x: i32) -> i32 { yield_now().await; return x; }\n"


def test_binding_the_tuple_of_a_nested_join_is_an_error() -> None:
    src = NESTED_JOIN_FN + "task main { let (a, b) = join(f(1), join(f(2), f(3))).await; }\n"
    kinds, text = diagnose(src)
    assert kinds == [E.TypeMismatchError]
    assert text == (
        "t.gasync:2:13: error: 'b' would be the tuple (i32, i32) of a nested join, which cannot be bound\n"
        "   |\n"
        " 2 | task main { let (a, b) = join(f(1), join(f(2), f(3))).await; }\n"
        "   |             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "  = note: write '_' in its place, or await the inner join on its own with 'let (..) ='"
    )


def test_a_select_arm_cannot_bind_the_tuple_of_a_join() -> None:
    src = NESTED_JOIN_FN + "task main { select { t = join(f(1), f(2)) => { } } }\n"
    kinds, text = diagnose(src)
    assert kinds == [E.TypeMismatchError]
    assert text.splitlines()[0] == (
        "t.gasync:2:22: error: 't' would be the tuple (i32, i32) of a join, which a select arm cannot bind"
    )


def test_nested_joins_and_joins_in_select_arms_are_accepted() -> None:
    src = NESTED_JOIN_FN + (
        "signal s;\n"
        "task main { let (a, _) = join(f(1), join(f(2), f(3))).await;"
        " select { _ = join(f(a), s.wait()) => { } _ = s.wait() => { } } }\n"
        "task setter { s.set(); }\n"
    )
    p = plan_of(src)
    assert [t.name for t in p.tasks] == ["main", "setter"]


@pytest.mark.parametrize("digits", ["0x" + "f" * 5000, "0b" + "1" * 20000, "0x" + "f" * 100])
def test_a_literal_far_past_u64_is_e0204_with_its_size(digits: str) -> None:
    # 5000 hex digits are more than 4300 decimal ones: printing the value was an internal error
    classes, text = diagnose(f"task main {{ let x = {digits}; }}\n")
    bits = 4 * (len(digits) - 2) if digits.startswith("0x") else len(digits) - 2
    assert classes == [E.TypeMismatchError]
    assert text.splitlines()[0] == (
        f"t.gasync:1:21: error: literal of {bits} bits does not fit in i32 (range -2147483648..=2147483647)"
    )


def test_a_literal_just_past_u64_shows_its_value() -> None:
    classes, text = diagnose("task main { let x: u64 = 18446744073709551616; }\n")
    assert text.splitlines()[0] == (
        "t.gasync:1:26: error: literal 18446744073709551616 does not fit in u64 (range 0..=18446744073709551615)"
    )
