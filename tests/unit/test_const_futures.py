"""A future in a constant expression (a const, a size, an initialiser) is E0206: nothing runs a
const on the device, so adding '.await' cannot help. The checks said "'<const>' is a plain fn;
declare it 'async fn'" for an await, and "add '.await'" (E0207) for a future left unawaited."""

from __future__ import annotations

import pytest

from gasync.dsl import parse
from gasync.dsl.diagnostics import ErrorGroup
from gasync.planner import PlanOptions, plan
from gasync.planner import errors as E

NOTE = "consts, buffer and channel sizes and initialisers are computed at compile time"
TASK = "buffer o: i32[1] = zeros;\ntask a { o[0] = 1; }\n"


@pytest.mark.parametrize(
    ("item", "where", "message"),
    [
        ("const X: i32 = f().await;", (2, 16), "'.await' is not allowed in a constant expression"),
        ("buffer p: i32[f().await] = zeros;", (2, 15), "'.await' is not allowed in a constant expression"),
        ("buffer p: i32[1] = fill(async { 1 }.await);", (2, 25), "'.await' is not allowed in a constant expression"),
        ("const X: i32 = f();", (2, 16), "'f(...)' is a future, and a constant expression cannot await one"),
        ("const X: i32 = join(f());", (2, 16), "'join(...)' is a future, and a constant expression cannot await one"),
        (
            "const X: i32 = async { 1 };",
            (2, 16),
            "an async block is a future, and a constant expression cannot await one",
        ),
    ],
)
def test_a_future_in_a_constant_expression(item: str, where: tuple[int, int], message: str) -> None:
    src = f"async fn f() -> i32 {{ return 1; }}\n{item}\n{TASK}"
    with pytest.raises(ErrorGroup) as info:
        plan(parse(src, "t.gasync"), PlanOptions())
    (err,) = info.value.errors
    assert isinstance(err, E.AwaitContextError) and err.code == "E0206"
    assert ((err.span.line, err.span.column), err.message, [n.message for n in err.notes]) == (where, message, [NOTE])
