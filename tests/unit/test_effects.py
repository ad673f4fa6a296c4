"""planner/effects.py: what a function's own body does to shared objects."""

from __future__ import annotations

from gasync.dsl import parse
from gasync.planner import plan
from gasync.planner.effects import direct_effects

WAITS = """
signal a;
signal b;
signal c;
signal d;
signal e;
buffer out: i64[1] = zeros;
task t {
    if a.is_set() { out[0] = 1; }
    while out[0] < 3 {
        if b.is_set() { out[0] = 2; }
        join(async { if c.is_set() { out[0] = 3; } }, async { }).await;
    }
    for i in 0..2 { if i == 1 { if d.is_set() { out[0] = 4; } } }
    e.wait().await;
}
"""


def _task_effects(source: str) -> tuple[set[str], set[str]]:
    p = plan(parse(source, "t.gasync"))
    eff = direct_effects(next(t for t in p.tasks if t.name == "t").body)
    return eff.waits, eff.firm


def test_an_is_set_a_loop_asks_again_is_a_firm_wait_at_any_depth_inside_it() -> None:
    # a: asked once, not firm; b in the loop's if, c in an async block the loop awaits, d two
    # ifs deep in a for: each asked again and again; e: an await of wait(), firm
    waits, firm = _task_effects(WAITS)
    assert waits == {"a", "b", "c", "d", "e"}
    assert firm == {"b", "c", "d", "e"}


def test_an_is_set_under_loops_nested_thousands_deep_is_firm() -> None:
    # one walk with a flag (planner/walk.py stmts_in_loops): asking each loop for its own
    # statements again was quadratic in the depth (tests/unit/test_deep_nesting.py's blocks
    # at the limit took 30 s of CI to check)
    depth = 2000
    body = "while out[0] < 1 {\n" * depth + "if a.is_set() { out[0] = 1; }\n" + "}\n" * depth
    source = "signal a;\nbuffer out: i64[1] = zeros;\ntask t {\n" + body + "}\n"
    from gasync import pipeline

    assert pipeline.deep(_task_effects, source) == ({"a"}, {"a"})
