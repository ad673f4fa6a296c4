"""Programs nested as deep as generated programs get (tests/contract/deep.py) compile and
compute their values on the simulator: Python's own limits (100 indentation levels, 20
nested loops, 200 nested parentheses, its recursion limit) never reach the user."""

from __future__ import annotations

import pytest
from contract.deep import DEEP

import gasync
from gasync.dsl.diagnostics import GasyncError

pytestmark = [pytest.mark.sim, pytest.mark.timeout(180)]


@pytest.mark.parametrize("name", sorted(DEEP))
def test_a_deep_program_computes_its_value(name: str) -> None:
    source, want = DEEP[name]
    program = gasync.compile_source(source, f"<{name}>", {})
    compile(program.source, f"<{name}.py>", "exec")  # the generated module is valid Python
    assert program.run(backend="sim", timeout=120).buffers["out"].tolist() == [want]


def test_a_deep_parallel_for_body_is_a_located_error() -> None:
    body = "if i > 0 {\n" * 40 + "o[i] = 1;\n" + "}\n" * 40
    source = f"buffer o: i32[64] = zeros;\ntask main {{\nparallel for i in 0..64 {{\n{body}}}\n}}\n"
    with pytest.raises(GasyncError) as info:
        gasync.compile_source(source, "deep.gasync", {})
    assert info.value.span.line == 4
    assert info.value.message.startswith("the body of a parallel for nests statements 41 deep")
    assert str(info.value).startswith("deep.gasync:4:1: error[E0401]: the body of a parallel for")
