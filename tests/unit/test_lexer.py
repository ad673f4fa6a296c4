"""The parser's lexer (dsl/lexer.py) gives Lark's tokens, positions and lexing errors.

Each text is lexed by Lark's own basic lexer and by :func:`gasync.dsl.lexer.lex`
(which the parser and, through dsl/lexed.py, the diagnostics use); every
attribute of every token and the place of the first bad character must agree.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from lark import Token
from lark.exceptions import UnexpectedCharacters

from gasync.dsl.lexer import Spec, lex
from gasync.dsl.parser import _lark

sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))
import compile_programs as cp  # noqa: E402

SAMPLES = sorted((Path(__file__).parents[2] / "samples").glob("*.gasync"))
CHARS = "abcxyz_019 \n\t\r\f{}()[];:,.=<>!&|^~+-*/%\"'@#é"
PIECES = ["let", "letx", "_", "_a", "1e+5", "0xfg", "/*", "*/", "//", '"s"', '"', "\n", "..", "->", "=>", "<<=", "a"]


def both(text: str) -> tuple[Any, Any]:
    """(Lark's tokens and error, ours), each token as all of its attributes."""

    def run(tokens: Any) -> tuple[list[tuple[Any, ...]], tuple[int, int, int] | None]:
        out: list[tuple[Any, ...]] = []
        try:
            for t in tokens:
                out.append((str(t), *(getattr(t, name) for name in Token.__slots__)))
        except UnexpectedCharacters as exc:
            return out, (exc.pos_in_stream, exc.line, exc.column)
        return out, None

    lark = _lark()
    return run(lark.lex(text)), run(lex(Spec(lark.terminals, lark.ignore_tokens), text))


def test_every_sample_and_generated_program_lexes_as_lark_does() -> None:
    texts = [p.read_text(encoding="utf-8") for p in SAMPLES]
    texts += [cp.large_file(20_000), cp.many_tasks(50), cp.nested_async(5), ""]
    for text in texts:
        ours, theirs = both(text)
        assert ours == theirs


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=CHARS, max_size=120))
def test_random_characters(text: str) -> None:
    ours, theirs = both(text)
    assert ours == theirs


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES + list(" \n+-*/=<>!&|")), max_size=40).map("".join))
def test_random_pieces(text: str) -> None:
    ours, theirs = both(text)
    assert ours == theirs
