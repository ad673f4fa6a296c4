"""Diagnostics: the exact text a user sees for each kind of syntax mistake.

Each case is a bad source, the exception class the parser raises for it and
the full output of ``render``: ``path:line:col: error: message``, the source
line and the carets, then any notes.
"""

from __future__ import annotations

from typing import NamedTuple

import pytest

from gasync.dsl.ast import Span
from gasync.dsl.diagnostics import (
    ChainedComparisonError,
    GasyncError,
    InvalidCharacterError,
    InvalidInitializerError,
    InvalidLiteralError,
    InvalidReceiverError,
    InvalidTargetError,
    MissingSemicolonError,
    Note,
    ParseError,
    ReservedWordError,
    UnclosedDelimiterError,
    UnexpectedEndError,
    UnexpectedTokenError,
    UnmatchedDelimiterError,
    UnterminatedCommentError,
    UnterminatedStringError,
    render,
)
from gasync.dsl.parser import parse


class Case(NamedTuple):
    name: str
    source: str
    kind: type[ParseError]
    rendered: str


CASES = [
    Case(
        "missing_semicolon",
        "task main {\n    let x = 5\n    let y = 6;\n}\n",
        MissingSemicolonError,
        """\
bad.gasync:2:14: error: expected ';', found keyword 'let'
   |
 2 |     let x = 5
   |              ^""",
    ),
    Case(
        "missing_semicolon_item",
        "signal a\nsignal b;\n",
        MissingSemicolonError,
        """\
bad.gasync:1:9: error: expected ';', found keyword 'signal'
   |
 1 | signal a
   |         ^""",
    ),
    Case(  # the '}' on the same line was E0101 ("unexpected token"), on the next line E0102
        "missing_semicolon_before_the_brace",
        "task main { let x = 1 }\n",
        MissingSemicolonError,
        """\
bad.gasync:1:22: error: expected ';', found '}'
   |
 1 | task main { let x = 1 }
   |                      ^""",
    ),
    Case(
        "missing_semicolon_before_the_brace_below",
        "task main { let x = 1\n}\n",
        MissingSemicolonError,
        """\
bad.gasync:1:22: error: expected ';', found '}'
   |
 1 | task main { let x = 1
   |                      ^""",
    ),
    Case(
        "unclosed_brace",
        "task main {\n    let x = 5;\n",
        UnclosedDelimiterError,
        """\
bad.gasync:1:11: error: unclosed delimiter '{'
   |
 1 | task main {
   |           ^
  = note: the file ends at 2:15 before a '}' closes it""",
    ),
    Case(
        "stray_brace",
        "task main {\n}\n}\n",
        UnmatchedDelimiterError,
        """\
bad.gasync:3:1: error: unexpected closing delimiter '}'
   |
 3 | }
   | ^""",
    ),
    Case(
        "mismatched_paren",
        "task main {\n    let x = (1 + 2];\n}\n",
        UnmatchedDelimiterError,
        """\
bad.gasync:2:19: error: mismatched closing delimiter: expected ')', found ']'
   |
 2 |     let x = (1 + 2];
   |                   ^
bad.gasync:2:13: note: '(' opened here
   |
 2 |     let x = (1 + 2];
   |             ^""",
    ),
    Case(
        "mismatched_bracket",
        "task main {\n    y[i) = 1;\n}\n",
        UnmatchedDelimiterError,
        """\
bad.gasync:2:8: error: mismatched closing delimiter: expected ']', found ')'
   |
 2 |     y[i) = 1;
   |        ^
bad.gasync:2:6: note: '[' opened here
   |
 2 |     y[i) = 1;
   |      ^""",
    ),
    Case(
        "bad_decimal",
        "const N: i64 = 12abc;\n",
        InvalidLiteralError,
        """\
bad.gasync:1:16: error: invalid numeric literal '12abc'
   |
 1 | const N: i64 = 12abc;
   |                ^^^^^""",
    ),
    Case(
        "bad_hex",
        "const M: i64 = 0xfg;\n",
        InvalidLiteralError,
        """\
bad.gasync:1:16: error: invalid numeric literal '0xfg'
   |
 1 | const M: i64 = 0xfg;
   |                ^^^^""",
    ),
    Case(
        "keyword_as_name",
        "task main {\n    let fn = 1;\n}\n",
        ReservedWordError,
        """\
bad.gasync:2:9: error: expected identifier, found keyword 'fn'
   |
 2 |     let fn = 1;
   |         ^^
  = note: 'fn' is a reserved keyword and cannot be used as a name""",
    ),
    Case(
        "keyword_as_method",
        "task main {\n    ch.loop();\n}\n",
        ReservedWordError,
        """\
bad.gasync:2:8: error: expected identifier, found keyword 'loop'
   |
 2 |     ch.loop();
   |        ^^^^
  = note: 'loop' is a reserved keyword and cannot be used as a name""",
    ),
    Case(
        "task_without_body",
        "task main;\n",
        UnexpectedTokenError,
        """\
bad.gasync:1:10: error: expected 'after', 'for' or '{', found ';'
   |
 1 | task main;
   |          ^""",
    ),
    Case(
        "task_without_body_eof",
        "task main",
        UnexpectedEndError,
        """\
bad.gasync:1:10: error: unexpected end of file: expected 'after', 'for' or '{'
   |
 1 | task main
   |          ^""",
    ),
    Case(
        "unexpected_character",
        "task main {\n    let x = 1 @ 2;\n}\n",
        InvalidCharacterError,
        """\
bad.gasync:2:15: error: unexpected character '@'
   |
 2 |     let x = 1 @ 2;
   |               ^""",
    ),
    Case(  # a character that does not print is escaped, never written raw
        "nul_character",
        "task main {}\0\n",
        InvalidCharacterError,
        """\
bad.gasync:1:13: error: unexpected character '\\x00'
   |
 1 | task main {}\0
   |             ^""",
    ),
    Case(
        "zero_width_space",
        "task main { let x\u200b = 1; }\n",
        InvalidCharacterError,
        """\
bad.gasync:1:18: error: unexpected character '\\u200b'
   |
 1 | task main { let x\u200b = 1; }
   |                  ^""",
    ),
    Case(
        "delete_character",
        "task main { \x7f }\n",
        InvalidCharacterError,
        """\
bad.gasync:1:13: error: unexpected character '\\x7f'
   |
 1 | task main { \x7f }
   |             ^""",
    ),
    Case(  # more digits than Python converts to an int (4300): E0111, not an internal error
        "integer_literal_of_5000_digits",
        "task main { let x = " + "9" * 5000 + "; }\n",
        InvalidLiteralError,
        "bad.gasync:1:21: error: integer literal of 5000 digits: no integer type holds it (u64 holds 20 digits)\n"
        "   |\n"
        " 1 | task main { let x = " + "9" * 5000 + "; }\n"
        "   |                     " + "^" * 5000,
    ),
    Case(
        "unterminated_comment",
        "task main {\n    /* oops\n}\n",
        UnterminatedCommentError,
        """\
bad.gasync:2:5: error: unterminated block comment: '/*' has no matching '*/'
   |
 2 |     /* oops
   |     ^^""",
    ),
    Case(
        "unterminated_string",
        'extern fn g(v: f32) -> f32 from "m.k:g;\n',
        UnterminatedStringError,
        """\
bad.gasync:1:33: error: unterminated string: a '"' with no closing quote on this line
   |
 1 | extern fn g(v: f32) -> f32 from "m.k:g;
   |                                 ^""",
    ),
    Case(
        "invalid_target",
        "task main {\n    1 + 2 = 3;\n}\n",
        InvalidTargetError,
        """\
bad.gasync:2:5: error: invalid left-hand side of assignment: expected a variable or a buffer element
   |
 2 |     1 + 2 = 3;
   |     ^^^^^""",
    ),
    Case(
        "unknown_initialiser",
        "buffer x: f32[4] = ones;\n",
        InvalidInitializerError,
        """\
bad.gasync:1:20: error: unknown buffer initialiser 'ones'; expected zeros, iota, input, random(seed) or fill(value)
   |
 1 | buffer x: f32[4] = ones;
   |                    ^^^^""",
    ),
    Case(
        "initialiser_needs_arg",
        "buffer x: f32[4] = random;\n",
        InvalidInitializerError,
        """\
bad.gasync:1:20: error: buffer initialiser 'random' is written 'random(...)'
   |
 1 | buffer x: f32[4] = random;
   |                    ^^^^^^""",
    ),
    Case(
        "chained_comparison",
        "task main {\n    let b = 1 < 2 < 3;\n}\n",
        ChainedComparisonError,
        """\
bad.gasync:2:19: error: comparison operators cannot be chained
   |
 2 |     let b = 1 < 2 < 3;
   |                   ^
  = note: split the comparison with '&&', as in 'a < b && b < c'""",
    ),
    Case(
        "missing_expression",
        "task main {\n    let x = ;\n}\n",
        UnexpectedTokenError,
        """\
bad.gasync:2:13: error: expected expression, 'bulk' or 'parallel', found ';'
   |
 2 |     let x = ;
   |             ^""",
    ),
    Case(
        "unexpected_eof",
        "const N: i64 = 4",
        UnexpectedEndError,
        """\
bad.gasync:1:17: error: unexpected end of file: expected operator or ';'
   |
 1 | const N: i64 = 4
   |                 ^""",
    ),
    Case(
        "statement_at_top_level",
        "let x = 1;\n",
        UnexpectedTokenError,
        "bad.gasync:1:1: error: expected item (const, buffer, shared, signal, channel, fn, extern fn, task or group)"
        """ or end of file, found keyword 'let'
   |
 1 | let x = 1;
   | ^^^""",
    ),
    Case(
        "underscore_as_name",
        "task main {\n    let _ = 1;\n}\n",
        UnexpectedTokenError,
        """\
bad.gasync:2:9: error: expected '(' or identifier, found '_'
   |
 2 |     let _ = 1;
   |         ^""",
    ),
    Case(
        "method_on_call",
        "task main {\n    f(x).load();\n}\n",
        InvalidReceiverError,
        """\
bad.gasync:2:5: error: '.load()' must be called on the name of a shared scalar, signal or channel, as in 's.load()'
   |
 2 |     f(x).load();
   |     ^^^^""",
    ),
    # The binary operators are one flat list in the grammar (dsl/expressions.py); these
    # texts are the ones the grammar of one rule per precedence level gave.
    Case(
        "chained_comparison_before_a_later_error",
        "task t {\n    let v = a < b < c d;\n}\n",
        ChainedComparisonError,
        """\
bad.gasync:2:19: error: comparison operators cannot be chained
   |
 2 |     let v = a < b < c d;
   |                   ^
  = note: split the comparison with '&&', as in 'a < b && b < c'""",
    ),
    Case(
        "chained_comparison_after_logical_and",
        "task t {\n    let v = a < b && c < d < e;\n}\n",
        ChainedComparisonError,
        """\
bad.gasync:2:28: error: comparison operators cannot be chained
   |
 2 |     let v = a < b && c < d < e;
   |                            ^
  = note: split the comparison with '&&', as in 'a < b && b < c'""",
    ),
    Case(
        "await_after_a_cast",
        "task t {\n    let v = x as i32.await;\n}\n",
        UnexpectedTokenError,
        """\
bad.gasync:2:21: error: expected operator or ';', found '.'
   |
 2 |     let v = x as i32.await;
   |                     ^""",
    ),
    Case(
        "operator_without_right_operand",
        "task t {\n    let v = a + * b;\n}\n",
        UnexpectedTokenError,
        """\
bad.gasync:2:17: error: expected expression, found '*'
   |
 2 |     let v = a + * b;
   |                 ^""",
    ),
    Case(
        "tab_indent",
        "task main {\n\tlet x = 5\n\tlet y = 6;\n}\n",
        MissingSemicolonError,
        """\
bad.gasync:2:11: error: expected ';', found keyword 'let'
   |
 2 |     let x = 5
   |              ^""",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_rendered_diagnostic(case: Case) -> None:
    with pytest.raises(ParseError) as info:
        parse(case.source, "bad.gasync")
    assert type(info.value) is case.kind
    assert render(info.value, "bad.gasync", case.source) == case.rendered


def test_at_least_fourteen_kinds_are_covered() -> None:
    assert len({c.kind for c in CASES}) >= 14


def test_diagnostic_without_a_span_prints_only_the_head() -> None:
    assert render(GasyncError("no tasks in this program"), "p.gasync", "signal s;\n") == (
        "p.gasync: error: no tasks in this program"
    )


def test_note_without_span_and_span_past_the_end() -> None:
    err = GasyncError("lost", Span(9, 1, 9, 2), (Note("somewhere else"),))
    assert render(err, "p.gasync", "signal s;\n") == "p.gasync:9:1: error: lost\n  = note: somewhere else"


def test_gutter_widens_with_the_line_number() -> None:
    source = "\n" * 11 + "task main {\n    let x = 5\n    let y = 6;\n}\n"
    with pytest.raises(MissingSemicolonError) as info:
        parse(source, "bad.gasync")
    assert render(info.value, "bad.gasync", source) == (
        "bad.gasync:13:14: error: expected ';', found keyword 'let'\n    |\n 13 |     let x = 5\n    |              ^"
    )


def test_form_feed_does_not_shift_lines() -> None:
    source = "signal a;\f\nsignal b\nsignal c;\n"
    with pytest.raises(MissingSemicolonError) as info:
        parse(source, "bad.gasync")
    assert render(info.value, "bad.gasync", source) == (
        "bad.gasync:2:9: error: expected ';', found keyword 'signal'\n   |\n 2 | signal b\n   |         ^"
    )
