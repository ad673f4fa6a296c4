"""Syntax errors about reductions out of place (decision 39).

A ``parallel for`` or ``bulk for`` with ``reduce OP`` is a value, but only as
the whole value of a ``let`` or an assignment. Where the parser meets such a
loop elsewhere, or its pieces, it says what a reduction is rather than what
the grammar expected there: a reduction inside an expression (E0219), a loop
where a value belongs that gives none, the loop of a ``let`` without its
``reduce OP``, and an operator after a whole reduction. The words of other
errors name ``bulk`` and ``parallel`` only where a reduction is likely
(:func:`let_value`).
"""

from __future__ import annotations

from lark import Token

from gasync.dsl.block_errors import span_of
from gasync.dsl.diagnostics import MisplacedReductionError, Note, ParseError, UnexpectedTokenError
from gasync.dsl.lexed import Lexed

LOOPS = {"PARALLEL", "BULK"}  # the keywords that start a loop which, with `reduce OP`, is a value


def let_value(before: list[Token]) -> bool:
    """Whether ``before`` ends with the head of a 'let' up to its '=' (``let r =``, ``let r: i64 =``)."""
    if not before or before[-1].type != "EQ":
        return False
    return (len(before) >= 3 and before[-3].type == "LET") or (len(before) >= 5 and before[-5].type == "LET")


def loop_as_value(tok: Token, lexed: Lexed) -> ParseError:
    """``parallel`` or ``bulk`` where an expression belongs: a reduction inside an expression
    (E0219, decision 39), or a loop that gives no value at all."""
    kw = str(tok)
    if _is_reduction(lexed, tok):
        return MisplacedReductionError(
            f"a reduction ('{kw} for ... reduce') can only be the whole value of a 'let' or an assignment",
            span_of(tok),
            (Note(f"name it first ('let r = {kw} for ... reduce OP {{ ... }};') and use 'r' here"),),
        )
    return UnexpectedTokenError(
        f"expected expression, found keyword '{kw}'",
        span_of(tok),
        (
            Note(
                f"a '{kw} for' loop is a statement, not a value; only a reduction"
                f" ('{kw} for i in a..b reduce OP {{ ...; value }}') gives one, as the whole value"
                " of a 'let' or an assignment"
            ),
        ),
    )


def missing_reduce(tok: Token, before: list[Token]) -> ParseError | None:
    """The '{' of a loop that is the value of a ``let`` or an assignment, where ``reduce OP``
    belongs (``let v = parallel for i in 0..n {``), if ``tok`` is one."""
    head = _reduction_head(before)
    if head is None:
        return None
    return UnexpectedTokenError(
        "expected 'reduce' and an operator before the loop's body, found '{'",
        span_of(tok),
        (
            Note(
                f"a '{head} for' that is the value of a 'let' or an assignment is a reduction:"
                f" '{head} for i in a..b reduce OP {{ ...; value }}' (OP: 'sum', 'min', 'max', 'and' or 'or');"
                " a loop that gives no value is a statement of its own"
            ),
        ),
    )


def unnamed_reduction(tok: Token, before: list[Token]) -> ParseError | None:
    """The ``reduce`` of a loop that is a statement of its own (``parallel for i in 0..n reduce
    sum { x[i] };``), whose value would go nowhere, if ``tok`` is one (E0219)."""
    head = _statement_loop(before)
    if head is None or str(tok) != "reduce":
        return None
    return MisplacedReductionError(
        f"a reduction ('{head} for ... reduce') gives a value, and this one goes nowhere",
        span_of(tok),
        (
            Note(
                f"name it ('let r = {head} for ... reduce OP {{ ... }};') or assign it; a loop run"
                " for its effects alone has no 'reduce'"
            ),
        ),
    )


def reduction_in_expression(before: list[Token]) -> tuple[Note, ...]:
    """Where ';' alone may come next: a note if the tokens ``before`` end with a whole reduction,
    which the token found would put inside an expression (``let v = parallel ... { i } + 1;``)."""
    if not _ends_reduction(before):
        return ()
    return (
        Note(
            "a reduction is the whole value of a 'let' or an assignment: name it"
            " ('let r = ...;') and use the name in the expression"
        ),
    )


def _is_reduction(lexed: Lexed, kw: Token) -> bool:
    """Whether the tokens after ``kw`` read ``for ... reduce OP {``: up to the first '{' outside
    brackets, the range's end and then two names, the first of them 'reduce'."""
    after: list[Token] = []
    depth = 0
    for k, t in enumerate(lexed.after(kw.start_pos or 0)):
        after.append(t)
        if k == 0 and t.type != "FOR":
            return False
        if t.type in ("LPAR", "LSQB"):
            depth += 1
        elif t.type in ("RPAR", "RSQB"):
            depth -= 1
            if depth < 0:
                return False
        elif depth == 0 and t.type in ("LBRACE", "RBRACE", "SEMICOLON"):
            return t.type == "LBRACE" and k >= 3 and str(after[k - 2]) == "reduce" and after[k - 1].type == "NAME"
    return False


def _loop_head(before: list[Token]) -> tuple[str, str] | None:
    """``(keyword, what precedes it)`` when the tokens ``before`` end inside the head of a
    ``parallel for`` or ``bulk for`` (its keyword, then the type of the token before that, "" at
    the start), else None."""
    depth = 0
    for k in range(len(before) - 1, -1, -1):
        t = before[k]
        if t.type in ("RPAR", "RSQB"):
            depth += 1
        elif t.type in ("LPAR", "LSQB"):
            depth -= 1
        elif t.type in ("LBRACE", "RBRACE", "SEMICOLON") or depth < 0:
            return None
        elif t.type in LOOPS and depth == 0:
            if k + 1 < len(before) and before[k + 1].type == "FOR":
                return str(t), before[k - 1].type if k > 0 else ""
            return None
    return None


def _reduction_head(before: list[Token]) -> str | None:
    """``parallel`` or ``bulk`` when the tokens ``before`` end inside the head of a loop that is
    the value of a ``let`` or an assignment (``let v = parallel for i in 0..n``), else None."""
    head = _loop_head(before)
    return head[0] if head is not None and head[1] in ("EQ", "ASSIGN_OP") else None


def _statement_loop(before: list[Token]) -> str | None:
    """``parallel`` or ``bulk`` when the tokens ``before`` end inside the head of a loop that
    starts a statement (after '{', '}' or ';'), else None."""
    head = _loop_head(before)
    return head[0] if head is not None and head[1] in ("", "LBRACE", "RBRACE", "SEMICOLON") else None


def _ends_reduction(before: list[Token]) -> bool:
    """Whether the tokens ``before`` end with a whole reduction, ``... reduce OP { ... }``."""
    if not before or before[-1].type != "RBRACE":
        return False
    depth = 0
    for k in range(len(before) - 1, -1, -1):
        t = before[k]
        if t.type == "RBRACE":
            depth += 1
        elif t.type == "LBRACE":
            depth -= 1
            if depth == 0:
                named = k >= 2 and str(before[k - 2]) == "reduce" and before[k - 1].type == "NAME"
                return named and _reduction_head(before[: k - 2]) is not None
    return False
