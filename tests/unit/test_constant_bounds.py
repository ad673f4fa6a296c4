"""A buffer index known at compile time must lie inside the buffer (issue 13, decision 38)."""

from __future__ import annotations

import pytest

import gasync
from gasync.dsl.diagnostics import ErrorGroup, GasyncError


def _errors(source: str) -> list[str]:
    try:
        gasync.compile_source(source, "b.gasync")
    except ErrorGroup as group:
        return [f"{e.span.line}:{e.span.column}: {e.code} {e.message}" for e in group.errors]
    except GasyncError as e:
        return [f"{e.span.line}:{e.span.column}: {e.code} {e.message}"]
    return []


def test_constant_indices_outside_the_buffer_are_errors_at_the_index() -> None:
    src = (
        "buffer out: i32[1] = zeros;\nbuffer m: f32[2, 3] = zeros;\nconst K: i64 = 2;\n"
        "task main {\n    out[5] = 1;\n    m[1, K + 1] = 2.0;\n    let v = out[0 - 1];\n"
        "    atomic_add(out[1], 1);\n}\n"
    )
    assert _errors(src) == [
        "5:9: E0218 index out of bounds: the length of 'out' is 1 but the index is 5",
        "6:10: E0218 index out of bounds: the length of 'm' along dimension 2 is 3 but the index is 3",
        "7:17: E0218 index out of bounds: the length of 'out' is 1 but the index is -1",
        "8:20: E0218 index out of bounds: the length of 'out' is 1 but the index is 1",
    ]


@pytest.mark.parametrize(
    "body",
    [
        "out[0] = 1; out[3] = out[K];",  # constants inside
        "for i in 0..9 { out[i] = 1; }",  # known only at run time: checked there (issue 13)
        "let j: i64 = 7; out[j] = 1;",
    ],
)
def test_indices_inside_or_not_constant_pass(body: str) -> None:
    assert _errors(f"const K: i64 = 2;\nbuffer out: i32[4] = zeros;\ntask main {{ {body} }}\n") == []
