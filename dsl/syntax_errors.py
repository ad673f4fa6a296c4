"""Lark's parse errors, retold in the user's words.

Lark reports terminal names (``SEMICOLON``, ``RBRACE``, ``NAME``); users wrote
``;``, ``}`` and identifiers. :func:`translate` maps each expected terminal to
the text it stands for, folds the many tokens that can start an expression
into the single word "expression", and recognises the common shapes of
mistake (a keyword used as a name, an unclosed or stray delimiter, an
unterminated comment or string, a reduction inside an expression) so that each
gets its own class and message.
"""

from __future__ import annotations

from lark import Token
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from gasync.dsl.ast import Span
from gasync.dsl.block_errors import ITEM_KEYWORDS, async_fn_in_block, keyword_as_statement, leading_dot, span_of
from gasync.dsl.diagnostics import (
    ChainedComparisonError,
    InvalidCharacterError,
    InvalidLiteralError,
    MisplacedReductionError,
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
# Keywords that start a loop which, with `reduce OP`, is a value (decision 39).
_LOOPS = {"PARALLEL", "BULK"}
_ITEM_START = ITEM_KEYWORDS

# Tokens after which a statement starts.
_BOUNDARY = {"SEMICOLON", "LBRACE", "RBRACE"}
STATEMENT = "statement or '}'"  # what a block expects where a statement starts

_OPENERS = {"LBRACE": "RBRACE", "LPAR": "RPAR", "LSQB": "RSQB"}
_CLOSERS = {v: k for k, v in _OPENERS.items()}
_TEXT = {"LBRACE": "{", "RBRACE": "}", "LPAR": "(", "RPAR": ")", "LSQB": "[", "RSQB": "]"}


def translate(exc: UnexpectedInput, text: str) -> ParseError:
    """Turn a Lark exception into the project's diagnostic."""
    if isinstance(exc, UnexpectedCharacters):
        return _bad_character(exc, text)
    if isinstance(exc, UnexpectedEOF) or (isinstance(exc, UnexpectedToken) and exc.token.type == "$END"):
        return _unexpected_end(exc, text)
    assert isinstance(exc, UnexpectedToken)
    return _unexpected_token(exc, text)


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


def _unexpected_token(exc: UnexpectedToken, text: str) -> ParseError:
    tok = exc.token
    expected = _expected(exc)
    span = span_of(tok)
    if tok.type in _LOOPS and "NUMBER" in expected:  # where a value belongs: `1 + parallel for ...`
        return _loop_as_value(tok, text)
    if str(tok) in KEYWORDS and "NAME" in expected and "NUMBER" not in expected:  # where only a name belongs
        return ReservedWordError(
            f"expected identifier, found keyword '{tok}'",
            span,
            (Note(f"'{tok}' is a reserved keyword and cannot be used as a name"),),
        )
    before = _lex_until(text, tok)
    if str(tok) in KEYWORDS and "LET" in expected:  # where a statement belongs: an item, a stray 'else'
        return keyword_as_statement(tok, before, text, _what(expected, tok, before))
    if tok.type == "FN" and len(before) >= 2 and before[-1].type == "ASYNC" and before[-2].type in _BOUNDARY:
        return async_fn_in_block(before[-1], tok, before, text, STATEMENT)
    if tok.type == "DOT" and "NUMBER" in expected:
        dot = leading_dot(tok, _next_token(text, tok))
        if dot is not None:
            return dot
    if tok.type in _CLOSERS:
        stray = _stray_closer(text, tok)
        if stray is not None:
            return stray
    if tok.type == "CMP_OP" and "CMP_OP" not in expected:
        return ChainedComparisonError(
            "comparison operators cannot be chained",
            span,
            (Note("split the comparison with '&&', as in 'a < b && b < c'"),),
        )
    head = _reduction_head(before)
    if tok.type == "LBRACE" and "NAME" in expected and head is not None:  # `let v = parallel for i in 0..n {`
        return UnexpectedTokenError(
            "expected 'reduce' and an operator before the loop's body, found '{'",
            span,
            (
                Note(
                    f"a '{head} for' that is the value of a 'let' or an assignment is a reduction:"
                    f" '{head} for i in a..b reduce OP {{ ...; value }}' (sum, min, max, and or or);"
                    " a loop that gives no value is a statement of its own"
                ),
            ),
        )
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
    notes: tuple[Note, ...] = ()
    if expected == {"SEMICOLON"} and _ends_reduction(before):  # `let v = parallel ... { i } + 1;`
        notes = (
            Note(
                "a reduction is the whole value of a 'let' or an assignment: name it"
                " ('let r = ...;') and use the name in the expression"
            ),
        )
    return UnexpectedTokenError(f"expected {what}, found {describe_token(tok)}", span, notes)


def _what(expected: set[str], tok: Token, before: list[Token]) -> str:
    """What was expected, in words. A reduction may start wherever a 'let' or an assignment
    takes its value, but 'bulk' or 'parallel' is named only where one is likely: as the
    value of a 'let', or before a 'for' (elsewhere the grammar's own words would leak)."""
    if "LET" not in expected and tok.type != "FOR" and not _let_value(before):
        expected = expected - _LOOPS
    return describe_expected(expected, _terminals())


def _let_value(before: list[Token]) -> bool:
    """Whether ``before`` ends with the head of a 'let' up to its '=' (``let r =``, ``let r: i64 =``)."""
    if not before or before[-1].type != "EQ":
        return False
    return (len(before) >= 3 and before[-3].type == "LET") or (len(before) >= 5 and before[-5].type == "LET")


def _next_token(text: str, tok: Token) -> Token | None:
    from gasync.dsl.parser import tokens

    start = tok.start_pos or 0
    return next((t for t in tokens(text) if (t.start_pos or 0) > start), None)


def _loop_as_value(tok: Token, text: str) -> ParseError:
    """``parallel`` or ``bulk`` where an expression belongs: a reduction inside an expression
    (E0219, decision 39), or a loop that gives no value at all."""
    kw = str(tok)
    if _is_reduction(text, tok):
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


def _is_reduction(text: str, kw: Token) -> bool:
    """Whether the tokens after ``kw`` read ``for ... reduce OP {``: up to the first '{' outside
    brackets, the range's end and then two names, the first of them 'reduce'."""
    from gasync.dsl.parser import tokens

    start = kw.start_pos or 0
    after = [t for t in tokens(text) if (t.start_pos or 0) > start]
    if not after or after[0].type != "FOR":
        return False
    depth = 0
    for k, t in enumerate(after):
        if t.type in ("LPAR", "LSQB"):
            depth += 1
        elif t.type in ("RPAR", "RSQB"):
            depth -= 1
            if depth < 0:
                return False
        elif depth == 0 and t.type in ("LBRACE", "RBRACE", "SEMICOLON"):
            return t.type == "LBRACE" and k >= 3 and str(after[k - 2]) == "reduce" and after[k - 1].type == "NAME"
    return False


def _reduction_head(before: list[Token]) -> str | None:
    """``parallel`` or ``bulk`` when the tokens ``before`` end inside the head of a loop that is
    the value of a ``let`` or an assignment (``let v = parallel for i in 0..n``), else None."""
    depth = 0
    for k in range(len(before) - 1, -1, -1):
        t = before[k]
        if t.type in ("RPAR", "RSQB"):
            depth += 1
        elif t.type in ("LPAR", "LSQB"):
            depth -= 1
        elif t.type in ("LBRACE", "RBRACE", "SEMICOLON") or depth < 0:
            return None
        elif t.type in _LOOPS and depth == 0:
            follows = k + 1 < len(before) and before[k + 1].type == "FOR"
            assigned = k > 0 and before[k - 1].type in ("EQ", "ASSIGN_OP")
            return str(t) if follows and assigned else None
    return None


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


def _stray_closer(text: str, at: Token) -> ParseError | None:
    """A closer that does not match the innermost open delimiter, if it is one."""
    stack: list[Token] = []
    for tok in _lex_until(text, at):
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


def _lex_until(text: str, at: Token) -> list[Token]:
    from gasync.dsl.parser import tokens

    out = []
    for tok in tokens(text):
        if tok.start_pos is not None and at.start_pos is not None and tok.start_pos >= at.start_pos:
            break
        out.append(tok)
    return out


def _unexpected_end(exc: UnexpectedInput, text: str) -> ParseError:
    from gasync.dsl.parser import tokens

    stack: list[Token] = []
    for tok in tokens(text):
        if tok.type in _OPENERS:
            stack.append(tok)
        elif tok.type in _CLOSERS and stack and _OPENERS[stack[-1].type] == tok.type:
            stack.pop()
    end = _end_span(text)
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
