"""Syntax errors about a keyword where a statement belongs, and about a float written '.5'.

Inside a block the grammar accepts a statement, an expression or '}', so a
keyword that starts neither is a mistake about the block, not about a name
(E0104 is a keyword where a name belongs). The two common ones are an item
keyword (``task``, ``buffer``, ``async fn``...) after a block whose '}' is
missing, and an ``else`` that follows no ``if`` block. Both are E0101, worded
"expected statement or '}'"; an item gets a note at the '{' still open
("unclosed delimiter", as rustc says) and, where a '}' inside that block is
indented unlike the line of the '{' it closes, a note at that '}', which is
often the one that was meant for the outer block.
"""

from __future__ import annotations

from lark import Token

from gasync.dsl.ast import Span
from gasync.dsl.diagnostics import InvalidLiteralError, Note, ParseError, UnexpectedTokenError

# The keywords that start an item (with `async fn` and `extern fn`), by terminal name.
ITEM_KEYWORDS = {"CONST", "BUFFER", "SHARED", "SIGNAL", "CHANNEL", "FN", "EXTERN", "TASK", "GROUP"}


def span_of(tok: Token) -> Span:
    line, col = tok.line or 0, tok.column or 0
    return Span(line, col, tok.end_line or line, tok.end_column or col + 1)


def keyword_as_statement(tok: Token, before: list[Token], text: str, what: str) -> ParseError:
    """A keyword that starts no statement where a statement belongs (``before``: the tokens ahead of it)."""
    found = f"expected {what}, found keyword '{tok}'"
    if tok.type in ITEM_KEYWORDS:
        notes = unclosed_notes(before, text, span_of(tok)) or (_top(str(tok)),)
        return UnexpectedTokenError(found, span_of(tok), notes)
    if tok.type == "ELSE":
        return UnexpectedTokenError(found, span_of(tok), (_else_note(before),))
    return UnexpectedTokenError(found, span_of(tok))


def async_fn_in_block(async_tok: Token, fn_tok: Token, before: list[Token], text: str, what: str) -> ParseError:
    """``async fn`` where a statement belongs: the item after a block whose '}' is missing
    (``before`` ends with the ``async``)."""
    span = Span(async_tok.line or 0, async_tok.column or 0, fn_tok.end_line or 0, fn_tok.end_column or 0)
    notes = unclosed_notes(before[:-1], text, span) or (_top("async fn"),)
    return UnexpectedTokenError(f"expected {what}, found 'async fn'", span, notes)


def _top(keyword: str) -> Note:
    return Note(f"'{keyword}' starts an item, and items are declared at the top level of the file, not in a block")


def unclosed_notes(before: list[Token], text: str, item: Span) -> tuple[Note, ...]:
    """Where an item keyword starts its line no further right than the line of the innermost
    '{' that ``before`` leaves open, that '{' was meant to be closed: a note at it, and one at
    a '}' after it indented unlike the line of the '{' it closes. Else none."""
    stack: list[Token] = []
    pairs: list[tuple[Token, Token]] = []
    for tok in before:
        if tok.type == "LBRACE":
            stack.append(tok)
        elif tok.type == "RBRACE" and stack:
            pairs.append((stack.pop(), tok))
    if not stack:  # pragma: no cover - a statement belongs only inside a block
        return ()
    opener = stack[-1]
    lines = text.split("\n")
    if lines[item.line - 1][: item.column - 1].strip() or item.column - 1 > _indent(lines[(opener.line or 1) - 1]):
        return ()
    where = f"{item.line}:{item.column}"
    notes = [Note(f"unclosed delimiter: this '{{' is not closed before the item at {where}", span_of(opener))]
    for left, right in pairs:
        if (left.start_pos or 0) > (opener.start_pos or 0) and _misindented(left, right, lines):
            notes.append(
                Note(
                    f"this '}}' closes the '{{' at {left.line}:{left.column} but is indented differently:"
                    " a '}' may be missing before it",
                    span_of(right),
                )
            )
            break
    return tuple(notes)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _misindented(left: Token, right: Token, lines: list[str]) -> bool:
    """Whether ``right`` is the first thing on its line and not indented as the line of ``left``."""
    right_line = lines[(right.line or 1) - 1]
    if right_line[: (right.column or 1) - 1].strip():
        return False
    return _indent(lines[(left.line or 1) - 1]) != (right.column or 1) - 1


def _else_note(before: list[Token]) -> Note:
    """Why this ``else`` follows no ``if`` block: one ``else`` too many, or something in between."""
    if before and before[-1].type == "RBRACE":
        depth = 0
        for k in range(len(before) - 1, -1, -1):
            depth += {"RBRACE": 1, "LBRACE": -1}.get(before[k].type, 0)
            if depth == 0:
                if k > 0 and before[k - 1].type == "ELSE":
                    return Note("an 'if' has one 'else' at most: write 'else if CONDITION { ... }' for another branch")
                break
    return Note("an 'else' goes right after the '}' of an 'if' block")


def leading_dot(tok: Token, after: Token | None) -> ParseError | None:
    """``.5`` where a value belongs: a float needs a digit before its '.' (docs/language.md)."""
    touching = after is not None and after.line == tok.end_line and after.column == tok.end_column
    if after is None or after.type != "NUMBER" or not touching or not str(after)[:1].isdigit():
        return None
    span = Span(tok.line or 0, tok.column or 0, after.end_line or 0, after.end_column or 0)
    return InvalidLiteralError(
        f"invalid numeric literal '.{after}': a float needs digits before its '.'", span, (Note(f"write 0.{after}"),)
    )
