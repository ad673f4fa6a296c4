"""Parsing: ``.gasync`` text to :class:`~gasync.dsl.ast.Program`.

Lark's LALR(1) parser with its basic lexer reads ``grammar.lark``; the basic
lexer (not the contextual one) makes every keyword a keyword everywhere, so
``let fn = 1;`` is an error about a reserved word rather than a valid program.
A Transformer turns the Lark tree into frozen AST nodes, checking what the
grammar leaves loose on purpose: numeric literals, assignment targets, method
receivers and buffer initialisers. Lark's exceptions are translated into the
project's own diagnostics (dsl/syntax_errors.py); no Lark type leaves this
package.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedInput, VisitError
from lark.tree import Meta

from gasync.dsl import ast
from gasync.dsl.depth import check_depth
from gasync.dsl.diagnostics import (
    GasyncError,
    InvalidInitializerError,
    InvalidLiteralError,
    InvalidReceiverError,
    InvalidTargetError,
)
from gasync.dsl.syntax_errors import translate

BUFFER_INITS = {"zeros": False, "iota": False, "input": False, "random": True, "fill": True}

_INT_RE = re.compile(r"0x[0-9a-fA-F][0-9a-fA-F_]*|0b[01][01_]*|0o[0-7][0-7_]*|\d[\d_]*")
_FLOAT_RE = re.compile(r"\d[\d_]*(\.\d[\d_]*)?([eE][+-]?\d[\d_]*)?")


@cache
def _lark() -> Lark:
    grammar = (Path(__file__).with_name("grammar.lark")).read_text()
    return Lark(grammar, parser="lalr", lexer="basic", propagate_positions=True, maybe_placeholders=True)


def parse(text: str, path: str = "<input>") -> ast.Program:
    """Parse one ``.gasync`` file; raise a :class:`ParseError` subclass on bad input."""
    try:
        tree = _lark().parse(text)
    except UnexpectedInput as exc:
        raise translate(exc, text) from None
    check_depth(tree)
    try:
        items = _ToAst().transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, GasyncError):
            raise exc.orig_exc from None
        raise
    except LarkError as exc:  # pragma: no cover - a grammar bug, not a user's
        raise GasyncError(f"internal parser error: {exc}") from None
    return ast.Program(path=path, items=tuple(items), source=text)


def parse_file(path: str | Path) -> ast.Program:
    """Read and parse a file (UTF-8)."""
    p = Path(path)
    return parse(p.read_text(encoding="utf-8"), str(p))


def tokens(text: str) -> list[Token]:
    """The token stream of ``text`` (used by diagnostics to match delimiters).

    It stops at the first character that starts no token: a parse error
    earlier in the file must still be reported, not that later character.
    """
    out: list[Token] = []
    try:
        for tok in _lark().lex(text):
            out.append(tok)
    except UnexpectedCharacters:
        pass
    return out


def span_of(x: Meta | Token) -> ast.Span:
    if isinstance(x, Token):
        return ast.Span(x.line or 0, x.column or 0, x.end_line or 0, x.end_column or 0)
    if getattr(x, "empty", True):
        return ast.NOSPAN
    return ast.Span(x.line, x.column, x.end_line, x.end_column)


def number_value(tok: Token) -> int | float:
    """Convert a NUMBER token, or raise :class:`InvalidLiteralError`."""
    text = str(tok)
    if _INT_RE.fullmatch(text):
        return int(text.replace("_", ""), 0) if text[:2] in ("0x", "0b", "0o") else int(text.replace("_", ""))
    if _FLOAT_RE.fullmatch(text):
        return float(text.replace("_", ""))
    raise InvalidLiteralError(
        f"invalid numeric literal '{text}'",
        span_of(tok),
    )


def _names(children: list[Any]) -> list[Any]:
    """Drop the EQ tokens that the grammar keeps only to find '=' in messages."""
    return [c for c in children if not (isinstance(c, Token) and c.type == "EQ")]


@v_args(meta=True)
class _ToAst(Transformer[Token, Any]):
    # ---- items ----
    def start(self, meta: Meta, ch: list[Any]) -> list[Any]:
        return ch

    def const_item(self, meta: Meta, ch: list[Any]) -> ast.Const:
        name, typ, value = _names(ch)
        return ast.Const(str(name), typ, value, span_of(meta))

    def buffer_item(self, meta: Meta, ch: list[Any]) -> ast.Buffer:
        name, typ, init = _names(ch)
        return ast.Buffer(str(name), typ, init, span_of(meta))

    def init_plain(self, meta: Meta, ch: list[Any]) -> ast.BufferInit:
        return self._init(meta, ch[0], None)

    def init_arg(self, meta: Meta, ch: list[Any]) -> ast.BufferInit:
        return self._init(meta, ch[0], ch[1])

    def _init(self, meta: Meta, name: Token, arg: Any) -> ast.BufferInit:
        kind = str(name)
        if kind not in BUFFER_INITS:
            raise InvalidInitializerError(
                f"unknown buffer initialiser '{kind}'; expected zeros, iota, input, random(seed) or fill(value)",
                span_of(name),
            )
        if BUFFER_INITS[kind] != (arg is not None):
            form = f"{kind}(...)" if BUFFER_INITS[kind] else kind
            raise InvalidInitializerError(f"buffer initialiser '{kind}' is written '{form}'", span_of(meta))
        return ast.BufferInit(kind, arg, span_of(meta))

    def shared_item(self, meta: Meta, ch: list[Any]) -> ast.Shared:
        name, typ, value = _names(ch)
        return ast.Shared(str(name), typ, value, span_of(meta))

    def signal_item(self, meta: Meta, ch: list[Any]) -> ast.Signal:
        return ast.Signal(str(ch[0]), span_of(meta))

    def channel_item(self, meta: Meta, ch: list[Any]) -> ast.Channel:
        name, elem, cap = ch
        return ast.Channel(str(name), elem, cap, span_of(meta))

    def fn_item(self, meta: Meta, ch: list[Any]) -> ast.FnDef:
        is_async, name, params, ret, body = ch
        return ast.FnDef(str(name), is_async is not None, params, ret, body, span_of(meta))

    def extern_item(self, meta: Meta, ch: list[Any]) -> ast.ExternFn:
        name, params, ret, path = ch
        return ast.ExternFn(str(name), params, ret, str(path)[1:-1], span_of(meta), span_of(path))

    def params(self, meta: Meta, ch: list[Any]) -> tuple[ast.Param, ...]:
        return tuple(c for c in ch if c is not None)

    def param(self, meta: Meta, ch: list[Any]) -> ast.Param:
        return ast.Param(str(ch[0]), ch[1], span_of(meta))

    def ret_type(self, meta: Meta, ch: list[Any]) -> ast.ScalarType:
        return ch[0]  # type: ignore[no-any-return]

    def task_item(self, meta: Meta, ch: list[Any]) -> ast.Task:
        name, rng, after, body = ch
        var, start, stop = rng if rng is not None else (None, None, None)
        return ast.Task(str(name), var, start, stop, after or (), body, span_of(meta))

    def task_range(self, meta: Meta, ch: list[Any]) -> tuple[str, Any, Any]:
        return str(ch[0]), ch[1], ch[2]

    def task_after(self, meta: Meta, ch: list[Any]) -> tuple[ast.Name, ...]:
        return tuple(ch)

    def name_ref(self, meta: Meta, ch: list[Any]) -> ast.Name:
        return ast.Name(str(ch[0]), span_of(ch[0]))

    def scalar_type(self, meta: Meta, ch: list[Any]) -> ast.ScalarType:
        return ast.ScalarType(str(ch[0]), span_of(ch[0]))

    def array_type(self, meta: Meta, ch: list[Any]) -> ast.ArrayType:
        elem = ast.ScalarType(str(ch[0]), span_of(ch[0]))
        return ast.ArrayType(elem, tuple(ch[1:]), span_of(meta))

    # ---- statements ----
    def block(self, meta: Meta, ch: list[Any]) -> ast.Block:
        *stmts, tail = ch
        return ast.Block(tuple(stmts), tail, span_of(meta))

    def let_stmt(self, meta: Meta, ch: list[Any]) -> ast.Let:
        name, typ, value = _names(ch)
        return ast.Let(str(name), typ, value, span_of(meta))

    def let_tuple_stmt(self, meta: Meta, ch: list[Any]) -> ast.LetTuple:
        *names, value = _names(ch)
        return ast.LetTuple(tuple(names), value, span_of(meta))

    def binding(self, meta: Meta, ch: list[Any]) -> str | None:
        tok = ch[0]
        return None if tok.type == "UNDERSCORE" else str(tok)

    def assign_stmt(self, meta: Meta, ch: list[Any]) -> ast.Assign:
        target, op, value = ch
        if not isinstance(target, ast.Name | ast.Index):
            raise InvalidTargetError(
                "invalid left-hand side of assignment: expected a variable or a buffer element",
                target.span,
            )
        return ast.Assign(target, str(op), value, span_of(meta))

    def expr_stmt(self, meta: Meta, ch: list[Any]) -> ast.ExprStmt:
        return ast.ExprStmt(ch[0], span_of(meta))

    def if_stmt(self, meta: Meta, ch: list[Any]) -> ast.If:
        cond, then, _else, orelse = ch
        return ast.If(cond, then, orelse, span_of(meta))

    def while_stmt(self, meta: Meta, ch: list[Any]) -> ast.While:
        return ast.While(ch[0], ch[1], span_of(meta))

    def loop_stmt(self, meta: Meta, ch: list[Any]) -> ast.Loop:
        return ast.Loop(ch[0], span_of(meta))

    def _for(self, kind: str, meta: Meta, ch: list[Any]) -> ast.For:
        var, start, stop, body = ch
        return ast.For(kind, str(var), start, stop, body, span_of(meta))

    def for_stmt(self, meta: Meta, ch: list[Any]) -> ast.For:
        return self._for("seq", meta, ch)

    def parallel_for_stmt(self, meta: Meta, ch: list[Any]) -> ast.For:
        return self._for("parallel", meta, ch)

    def bulk_for_stmt(self, meta: Meta, ch: list[Any]) -> ast.For:
        return self._for("bulk", meta, ch)

    def for_await_stmt(self, meta: Meta, ch: list[Any]) -> ast.ForAwait:
        return ast.ForAwait(str(ch[0]), ch[1], ch[2], span_of(meta))

    def break_stmt(self, meta: Meta, ch: list[Any]) -> ast.Break:
        return ast.Break(span_of(meta))

    def continue_stmt(self, meta: Meta, ch: list[Any]) -> ast.Continue:
        return ast.Continue(span_of(meta))

    def return_stmt(self, meta: Meta, ch: list[Any]) -> ast.Return:
        return ast.Return(ch[0], span_of(meta))

    def select_stmt(self, meta: Meta, ch: list[Any]) -> ast.Select:
        return ast.Select(tuple(ch), span_of(meta))

    def select_arm(self, meta: Meta, ch: list[Any]) -> ast.SelectArm:
        binding, future, body = _names(ch)
        return ast.SelectArm(binding, future, body, span_of(meta))

    # ---- expressions ----
    def binary(self, meta: Meta, ch: list[Any]) -> ast.Binary:
        left, op, right = ch
        return ast.Binary(str(op), left, right, span_of(meta))

    def unary(self, meta: Meta, ch: list[Any]) -> ast.Unary:
        return ast.Unary(str(ch[0]), ch[1], span_of(meta))

    def cast(self, meta: Meta, ch: list[Any]) -> ast.Cast:
        return ast.Cast(ch[0], ch[1], span_of(meta))

    def await_expr(self, meta: Meta, ch: list[Any]) -> ast.Await:
        return ast.Await(ch[0], span_of(meta))

    def method_call(self, meta: Meta, ch: list[Any]) -> ast.MethodCall:
        receiver, method, args = ch
        if not isinstance(receiver, ast.Name):
            raise InvalidReceiverError(
                f"'.{method}()' is called on a shared scalar, signal or channel by name",
                receiver.span,
            )
        return ast.MethodCall(receiver, str(method), args, span_of(meta))

    def call(self, meta: Meta, ch: list[Any]) -> ast.Call:
        return ast.Call(str(ch[0]), ch[1], span_of(meta))

    def index(self, meta: Meta, ch: list[Any]) -> ast.Index:
        base = ast.Name(str(ch[0]), span_of(ch[0]))
        return ast.Index(base, tuple(ch[1:]), span_of(meta))

    def args(self, meta: Meta, ch: list[Any]) -> tuple[Any, ...]:
        return tuple(c for c in ch if c is not None)

    def number(self, meta: Meta, ch: list[Any]) -> ast.IntLit | ast.FloatLit:
        value = number_value(ch[0])
        if isinstance(value, int):
            return ast.IntLit(value, span_of(meta))
        return ast.FloatLit(value, span_of(meta))

    def true_lit(self, meta: Meta, ch: list[Any]) -> ast.BoolLit:
        return ast.BoolLit(True, span_of(meta))

    def false_lit(self, meta: Meta, ch: list[Any]) -> ast.BoolLit:
        return ast.BoolLit(False, span_of(meta))

    def name(self, meta: Meta, ch: list[Any]) -> ast.Name:
        return ast.Name(str(ch[0]), span_of(meta))

    def async_block(self, meta: Meta, ch: list[Any]) -> ast.AsyncBlock:
        return ast.AsyncBlock(ch[1], span_of(meta))
