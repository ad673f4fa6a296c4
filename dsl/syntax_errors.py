"""Lark's parse errors, retold in the user's words.

Lark reports terminal names (``SEMICOLON``, ``RBRACE``, ``NAME``); users wrote
``;``, ``}`` and identifiers. :func:`translate` maps each expected terminal to
the text it stands for, folds the many tokens that can start an expression
into the single word "expression", and recognises the common shapes of
mistake (a keyword used as a name, an unclosed or stray delimiter, an
unterminated comment or string) so that each gets its own class and message.
Two families have modules of their own: a keyword where a statement belongs
(dsl/block_errors.py) and a parallel or bulk loop where a value belongs
(dsl/reduction_errors.py). The tokens around an error come from
dsl/lexed.py, which recovery keeps from one parse to the next.
"""

from __future__ import annotations

from lark import Token
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from gasync.dsl.ast import Span
from gasync.dsl.block_errors import (
    ITEM_KEYWORDS,
    async_fn_in_block,
    keyword_as_statement,
    leading_dot,
    span_of,
    unclosed_notes,
)
from gasync.dsl.diagnostics import (
    ChainedComparisonError,
    InvalidCharacterError,
    InvalidLiteralError,
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
)
from gasync.dsl.lexed import Lexed
from gasync.dsl.reduction_errors import (
    LOOPS,
    let_value,
    loop_as_value,
    missing_reduce,
    reduction_in_expression,
    unnamed_reduction,
)

KEYWORDS = (
    "after as async await break bulk buffer channel const continue else extern false fn for "
    "from group if in let local loop parallel return select shared signal task true while"
).split()

# What each named terminal is, in words.
_WORDS = {
    "NAME": "identifier",
    "NUMBER": "number",
    "STRING": "string",
    "EQ": "'='",
    "ASSIGN_OP": "assignment operator",
    "CMP_OP": "comparison operator",
    "OROR": "'||'",
    "ANDAND": "'&&'",
    "BAR": "'|'",
    "CARET": "'^'",
    "AMP": "'&'",
    "SHIFT_OP": "'<<' or '>>'",
    "ADD_OP": "'+' or '-'",
    "MUL_OP": "'*', '/' or '%'",
    "UNARY_OP": "'!' or '~'",
    "UNDERSCORE": "'_'",
    "$END": "end of file",
}

# Tokens that can begin an expression: listed as one word, "expression".
_EXPR_START = {"NAME", "NUMBER", "TRUE", "FALSE", "LPAR", "ASYNC", "UNARY_OP", "ADD_OP"}
# Tokens that can begin a statement but not an expression.
_STMT_START = {"LET", "IF", "WHILE", "LOOP", "FOR", "PARALLEL", "BULK", "BREAK", "CONTINUE", "RETURN", "SELECT"}
# Tokens that continue an expression: folded into "operator".
_OPERATORS = {"OROR", "ANDAND", "BAR", "CARET", "AMP", "SHIFT_OP", "ADD_OP", "MUL_OP", "CMP_OP", "AS", "DOT"}
_ITEM_START = ITEM_KEYWORDS

# Tokens after which a statement starts.
_BOUNDARY = {"SEMICOLON", "LBRACE", "RBRACE"}
STATEMENT = "statement or '}'"  # what a block expects where a statement starts
# how to choose a value without an 'if' expression (planner/dropped.py says it too)
IF_VALUE = "to choose a value, assign it to a local in each branch, as in 'let v = 0; if c { v = 1; } else { v = 2; }'"

_OPENERS = {"LBRACE": "RBRACE", "LPAR": "RPAR", "LSQB": "RSQB"}
_CLOSERS = {v: k for k, v in _OPENERS.items()}
_TEXT = {"LBRACE": "{", "RBRACE": "}", "LPAR": "(", "RPAR": ")", "LSQB": "[", "RSQB": "]"}


def translate(exc: UnexpectedInput, lexed: Lexed) -> ParseError:
    """Turn a Lark exception, raised on ``lexed.text``, into the project's diagnostic."""
    if isinstance(exc, UnexpectedCharacters):
        return _bad_character(exc, lexed.text)
    if isinstance(exc, UnexpectedEOF) or (isinstance(exc, UnexpectedToken) and exc.token.type == "$END"):
        return _unexpected_end(exc, lexed)
    assert isinstance(exc, UnexpectedToken)
    return _unexpected_token(exc, lexed)


def describe_token(tok: Token) -> str:
    """How a found token is named in a message: keyword 'fn', identifier 'x', '}'."""
    if tok.type == "$END":
        return "end of file"
    value = str(tok)
    if value in KEYWORDS:
        return f"keyword '{value}'"
    if tok.type == "NAME":
        return f"identifier '{value}'"
    if tok.type == "NUMBER":
        return f"number '{value}'"
    if tok.type == "STRING":
        return f"string {value}"
    return f"'{value}'"


def describe_expected(expected: set[str], terminals: dict[str, str]) -> str:
    """'expected ';' or '}'' style text for a set of terminal names."""
    names = set(expected)
    words: list[str] = []
    if names & _ITEM_START and len(names & _ITEM_START) >= 4:
        names -= _ITEM_START | {"ASYNC"}
        words.append("item (const, buffer, shared, signal, channel, fn, extern fn, task or group)")
    if len(names & _STMT_START) >= 4:
        names -= _STMT_START | _EXPR_START
        words.append("statement")
    elif len(names & _EXPR_START) >= 4:
        names -= _EXPR_START
        words.append("expression")
    if len(names & _OPERATORS) >= 3:
        names -= _OPERATORS
        words.append("operator")
    words.extend(sorted(_word(n, terminals) for n in names))
    if not words:
        return "something else"
    if len(words) == 1:
        return words[0]
    if len(words) <= 6:
        return ", ".join(words[:-1]) + " or " + words[-1]
    return "one of " + ", ".join(words[:6]) + ", ..."


def _word(name: str, terminals: dict[str, str]) -> str:
    if name in _WORDS:
        return _WORDS[name]
    literal = terminals.get(name)
    return f"'{literal}'" if literal is not None else name.lower()


def _terminals() -> dict[str, str]:
    from gasync.dsl.parser import _lark  # the grammar's terminals, by name

    out: dict[str, str] = {}
    for t in _lark().terminals:
        if t.pattern.type == "str":
            out[t.name] = t.pattern.value
    return out


def _unexpected_token(exc: UnexpectedToken, lexed: Lexed) -> ParseError:
    tok, text = exc.token, lexed.text
    expected = _expected(exc)
    span = span_of(tok)
    if tok.type in LOOPS and "NUMBER" in expected:  # where a value belongs: `1 + parallel for ...`
        return loop_as_value(tok, lexed)
    if str(tok) in KEYWORDS and "NAME" in expected and "NUMBER" not in expected:  # where only a name belongs
        return ReservedWordError(
            f"expected identifier, found keyword '{tok}'",
            span,
            (Note(f"'{tok}' is a reserved keyword and cannot be used as a name"),),
        )
    before = lexed.before(tok.start_pos or 0)
    if str(tok) in KEYWORDS and "LET" in expected:  # where a statement belongs: an item, a stray 'else'
        return keyword_as_statement(tok, before, text, _what(expected, tok, before))
    if tok.type == "FN" and len(before) >= 2 and before[-1].type == "ASYNC" and before[-2].type in _BOUNDARY:
        return async_fn_in_block(before[-1], tok, before, text, STATEMENT)
    if tok.type == "DOT" and "NUMBER" in expected:
        dot = leading_dot(tok, next(lexed.after(tok.start_pos or 0), None))
        if dot is not None:
            return dot
    if tok.type in _CLOSERS:
        stray = _stray_closer(before, tok)
        if stray is not None:
            return stray
    if tok.type == "CMP_OP" and "CMP_OP" not in expected:
        return ChainedComparisonError(
            "comparison operators cannot be chained",
            span,
            (Note("split the comparison with '&&', as in 'a < b && b < c'"),),
        )
    if tok.type == "LBRACE" and "NAME" in expected and (missing := missing_reduce(tok, before)) is not None:
        return missing
    if tok.type == "NAME" and "LBRACE" in expected and (unnamed := unnamed_reduction(tok, before)) is not None:
        return unnamed
    if tok.type == "IF" and "NUMBER" in expected:  # `let v = if c { 1 } else { 2 };` (decision 9)
        note = Note(f"'if' is a statement, not an expression: {IF_VALUE}")
        return UnexpectedTokenError(f"expected {_what(expected, tok, before)}, found keyword 'if'", span, (note,))
    # a statement that needs its ';' followed by the next statement, the block's '}' (on this line
    # or the next) or anything on a later line: E0102, wherever the next token is
    next_stmt = tok.type in _STMT_START or tok.type == "RBRACE" or tok.line != before[-1].end_line if before else False
    if "SEMICOLON" in expected and before and next_stmt:
        prev = before[-1]
        line, col = prev.end_line or 0, prev.end_column or 0
        return MissingSemicolonError(f"expected ';', found {describe_token(tok)}", Span(line, col, line, col + 1))
    what = _what(expected, tok, before)
    if len(before) >= 2 and before[-1].type == "DOT" and before[-2].type == "NUMBER" and _touching(*before[-2:]):
        # `1.` or `1.e5`: a float literal needs digits on both sides of its '.' (docs/language.md)
        number = before[-2]
        return InvalidLiteralError(
            f"invalid numeric literal '{number}.': a float needs digits after its '.'",
            Span(number.line or 0, number.column or 0, before[-1].end_line or 0, before[-1].end_column or 0),
            (Note(f"write {number}.0"),),
        )
    notes = reduction_in_expression(before) if expected == {"SEMICOLON"} else ()
    if (tok.type in ITEM_KEYWORDS or tok.type == "ASYNC") and "TASK" in expected:  # an item in a group body
        notes = unclosed_notes(before, text, span)
    if tok.type == "EQ" and _local_buffer(before):
        notes = (Note("a local buffer has no initialiser: it starts zeroed in every group instance"),)
    return UnexpectedTokenError(f"expected {what}, found {describe_token(tok)}", span, notes)


def _local_buffer(before: list[Token]) -> bool:
    """Whether the tokens ``before`` end in a declaration that begins ``local buffer``."""
    start = max((k for k, t in enumerate(before) if t.type in _BOUNDARY), default=-1) + 1
    return [t.type for t in before[start : start + 2]] == ["LOCAL", "BUFFER"]


def _what(expected: set[str], tok: Token, before: list[Token]) -> str:
    """What was expected, in words. A reduction may start wherever a 'let' or an assignment
    takes its value, but 'bulk' or 'parallel' is named only where one is likely: as the
    value of a 'let', or before a 'for' (elsewhere the grammar's own words would leak)."""
    if "LET" not in expected and tok.type != "FOR" and not let_value(before):
        expected = expected - LOOPS
    return describe_expected(expected, _terminals())


def _touching(a: Token, b: Token) -> bool:
    return a.end_line == b.line and a.end_column == b.column


def _expected(exc: UnexpectedInput) -> set[str]:
    """The terminals that can really come next.

    An LALR state's ``expected`` set also lists what may follow a reduction
    in other contexts (``)`` after ``const N: i64 = 4``); replaying the parser
    over each candidate keeps only the tokens that this input accepts.
    """
    parser = getattr(exc, "interactive_parser", None)
    if parser is not None:
        return set(parser.accepts())
    return set(getattr(exc, "expected", ()) or ())


def _stray_closer(before: list[Token], at: Token) -> ParseError | None:
    """A closer that does not match the innermost open delimiter (``before``: the tokens ahead of it), if it is one."""
    stack: list[Token] = []
    for tok in before:
        if tok.type in _OPENERS:
            stack.append(tok)
        elif tok.type in _CLOSERS:
            if stack and _OPENERS[stack[-1].type] == tok.type:
                stack.pop()
    if not stack:
        return UnmatchedDelimiterError(f"unexpected closing delimiter '{at}'", span_of(at))
    opener = stack[-1]
    if _OPENERS[opener.type] != at.type:
        return UnmatchedDelimiterError(
            f"mismatched closing delimiter: expected '{_TEXT[_OPENERS[opener.type]]}', found '{at}'",
            span_of(at),
            (Note(f"'{opener}' opened here", span_of(opener)),),
        )
    return None


def _unexpected_end(exc: UnexpectedInput, lexed: Lexed) -> ParseError:
    stack: list[Token] = []
    for tok in lexed:
        if tok.type in _OPENERS:
            stack.append(tok)
        elif tok.type in _CLOSERS and stack and _OPENERS[stack[-1].type] == tok.type:
            stack.pop()
    end = _end_span(lexed.text)
    if stack:
        opener = stack[-1]
        return UnclosedDelimiterError(
            f"unclosed delimiter '{opener}'",
            span_of(opener),
            (Note(f"the file ends at {end.line}:{end.column} before a '{_TEXT[_OPENERS[opener.type]]}' closes it"),),
        )
    expected = _expected(exc)
    what = describe_expected(expected, _terminals()) if expected else "more input"
    return UnexpectedEndError(f"unexpected end of file: expected {what}", end)


def _end_span(text: str) -> Span:
    """The position just past the last non-blank character."""
    stripped = text.rstrip()
    line = stripped.count("\n") + 1
    column = len(stripped) - (stripped.rfind("\n") + 1) + 1
    return Span(line, column, line, column + 1)


def _bad_character(exc: UnexpectedCharacters, text: str) -> ParseError:
    pos = exc.pos_in_stream or 0
    line, col = exc.line, exc.column
    span = Span(line, col, line, col + 1)
    rest = text[pos:]
    if rest.startswith("/*"):
        return UnterminatedCommentError(
            "unterminated block comment: '/*' has no matching '*/'", Span(line, col, line, col + 2)
        )
    if rest.startswith('"'):
        return UnterminatedStringError("unterminated string: a '\"' with no closing quote on this line", span)
    ch = text[pos] if pos < len(text) else ""
    return InvalidCharacterError(f"unexpected character '{shown_char(ch)}'", span)


def shown_char(ch: str) -> str:
    """A character as a message shows it: itself where it prints, else escaped as Python
    writes it (a NUL ``\\x00``, DEL ``\\x7f``, a zero-width space ``\\u200b``), never raw."""
    if ch.isprintable():
        return ch
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
