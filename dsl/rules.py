"""What each grammar rule builds: one method per rule, ``(span, children) -> node``.

dsl/parser.py hands :class:`Rules` to Lark (through dsl/reductions.py's
:class:`~gasync.dsl.reductions.Callbacks`, which takes each node's span from
all its children and drops the punctuation), so the AST of dsl/ast.py is
built during the reductions. The rules also check what the grammar leaves
loose on purpose: numeric literals (:func:`number_value`), assignment
targets, method receivers and buffer initialisers. Such a mistake is held
(:func:`~gasync.dsl.reductions.hold`) until the whole file has parsed, and a
syntax error in the same item replaces it.
"""

from __future__ import annotations

import re
from typing import Any

from lark import Token

from gasync.dsl import ast
from gasync.dsl.diagnostics import (
    InvalidInitializerError,
    InvalidLiteralError,
    InvalidReceiverError,
    InvalidTargetError,
    UnexpectedTokenError,
)
from gasync.dsl.expressions import fold_binary, fold_operand
from gasync.dsl.reductions import Paren, hold, token_span, whole

BUFFER_INITS = {"zeros": False, "iota": False, "input": False, "random": True, "fill": True}

# a prefix's digits may start after separators (0x_ff, as in Rust), but need one digit
MAX_INT_DIGITS = 1000  # decimal digits of an integer literal: far past u64's 20, well within int()'s 4300
_INT_RE = re.compile(r"0x_*[0-9a-fA-F][0-9a-fA-F_]*|0b_*[01][01_]*|0o_*[0-7][0-7_]*|\d[\d_]*")
_FLOAT_RE = re.compile(r"\d[\d_]*(\.\d[\d_]*)?([eE][+-]?\d[\d_]*)?")


def number_value(tok: Token) -> int | float:
    """Convert a NUMBER token, or raise :class:`InvalidLiteralError`."""
    text = str(tok)
    if _INT_RE.fullmatch(text):
        if text[:2] in ("0x", "0b", "0o"):
            return int(text.replace("_", ""), 0)
        digits = text.replace("_", "").lstrip("0") or "0"
        if len(digits) > MAX_INT_DIGITS:  # beyond u64 anyway, and beyond what Python converts (4300 digits)
            raise InvalidLiteralError(
                f"integer literal of {len(digits)} digits: no integer type holds it (u64 holds 20 digits)",
                token_span(tok),
            )
        return int(digits)
    if _FLOAT_RE.fullmatch(text):
        return float(text.replace("_", ""))
    raise InvalidLiteralError(f"invalid numeric literal '{text}'", token_span(tok))


def _names(children: list[Any]) -> list[Any]:
    """Drop the EQ tokens that the grammar keeps only to find '=' in messages."""
    return [c for c in children if not (isinstance(c, Token) and c.type == "EQ")]


class Rules:
    """One method per grammar rule (or alias): ``(span, children) -> node``, where the
    children have lost their punctuation and keywords (see :class:`~gasync.dsl.reductions.Callbacks`)."""

    # ---- items ----
    def start(self, span: ast.Span, ch: list[Any]) -> list[Any]:
        return ch

    def const_item(self, span: ast.Span, ch: list[Any]) -> ast.Const:
        name, typ, value = _names(ch)
        return ast.Const(str(name), typ, value, span)

    def buffer_item(self, span: ast.Span, ch: list[Any]) -> ast.Buffer:
        name, typ, init = _names(ch)
        return ast.Buffer(str(name), typ, init, span)

    def init_plain(self, span: ast.Span, ch: list[Any]) -> ast.BufferInit:
        return self._init(span, ch[0], None)

    def init_arg(self, span: ast.Span, ch: list[Any]) -> ast.BufferInit:
        return self._init(span, ch[0], ch[1])

    def _init(self, span: ast.Span, name: Token, arg: Any) -> ast.BufferInit:
        kind = str(name)
        if kind not in BUFFER_INITS:
            hold(
                InvalidInitializerError(
                    f"unknown buffer initialiser '{kind}'; expected zeros, iota, input, random(seed) or fill(value)",
                    token_span(name),
                )
            )
        elif BUFFER_INITS[kind] != (arg is not None):
            form = f"{kind}(...)" if BUFFER_INITS[kind] else kind
            hold(InvalidInitializerError(f"buffer initialiser '{kind}' is written '{form}'", span))
        return ast.BufferInit(kind, arg, span)

    def shared_item(self, span: ast.Span, ch: list[Any]) -> ast.Shared:
        name, typ, value = _names(ch)
        return ast.Shared(str(name), typ, value, span)

    def signal_item(self, span: ast.Span, ch: list[Any]) -> ast.Signal:
        return ast.Signal(str(ch[0]), span)

    def channel_item(self, span: ast.Span, ch: list[Any]) -> ast.Channel:
        name, elem, cap = ch
        return ast.Channel(str(name), elem, cap, span)

    def fn_item(self, span: ast.Span, ch: list[Any]) -> ast.FnDef:
        is_async, name, params, ret, body = ch
        return ast.FnDef(str(name), is_async is not None, params, ret, body, span)

    def extern_item(self, span: ast.Span, ch: list[Any]) -> ast.ExternFn:
        name, params, ret, path = ch
        return ast.ExternFn(str(name), params, ret, str(path)[1:-1], span, token_span(path))

    def params(self, span: ast.Span, ch: list[Any]) -> tuple[ast.Param, ...]:
        return tuple(c for c in ch if c is not None)

    def param(self, span: ast.Span, ch: list[Any]) -> ast.Param:
        return ast.Param(str(ch[0]), ch[1], span)

    def ret_type(self, span: ast.Span, ch: list[Any]) -> ast.ScalarType:
        return ch[0]  # type: ignore[no-any-return]

    def task_item(self, span: ast.Span, ch: list[Any]) -> ast.Task:
        name, rng, after, body = ch
        var, start, stop = rng if rng is not None else (None, None, None)
        return ast.Task(str(name), var, start, stop, after or (), body, span)

    def group_item(self, span: ast.Span, ch: list[Any]) -> ast.Group:
        name, rng, after, *members = ch
        var, start, stop = rng if rng is not None else (None, None, None)
        return ast.Group(str(name), var, start, stop, after or (), tuple(members), span)

    def local_buffer(self, span: ast.Span, ch: list[Any]) -> ast.LocalBuffer:
        name, typ = ch
        return ast.LocalBuffer(str(name), typ, span)

    def local_channel(self, span: ast.Span, ch: list[Any]) -> ast.LocalChannel:
        name, elem, cap = ch
        return ast.LocalChannel(str(name), elem, cap, span)

    def task_range(self, span: ast.Span, ch: list[Any]) -> tuple[str, Any, Any]:
        return str(ch[0]), ch[1], ch[2]

    def task_after(self, span: ast.Span, ch: list[Any]) -> tuple[ast.Name, ...]:
        return tuple(ch)

    @whole  # one token: its span is the node's (and so for the other one-token rules)
    def name_ref(self, ch: list[Token]) -> ast.Name:
        return ast.Name(str(ch[0]), token_span(ch[0]))

    @whole
    def scalar_type(self, ch: list[Token]) -> ast.ScalarType:
        return ast.ScalarType(str(ch[0]), token_span(ch[0]))

    def array_type(self, span: ast.Span, ch: list[Any]) -> ast.ArrayType:
        elem = ast.ScalarType(str(ch[0]), token_span(ch[0]))
        return ast.ArrayType(elem, tuple(ch[1:]), span)

    # ---- statements ----
    def block(self, span: ast.Span, ch: list[Any]) -> ast.Block:
        *stmts, tail = ch
        return ast.Block(tuple(stmts), tail, span)

    def let_stmt(self, span: ast.Span, ch: list[Any]) -> ast.Let:
        name, *typ, value = _names(ch)  # an absent ': type' leaves two placeholders
        return ast.Let(str(name), typ[-1], value, span)

    def let_tuple_stmt(self, span: ast.Span, ch: list[Any]) -> ast.LetTuple:
        *names, value = _names(ch)
        return ast.LetTuple(tuple(map(_binding, names)), value, span)

    def binding(self, span: ast.Span, ch: list[Any]) -> Token:
        return ch[0]  # type: ignore[no-any-return]  # the token, which knows its place

    def assign_stmt(self, span: ast.Span, ch: list[Any]) -> ast.Assign:
        target, op, value = ch
        if not isinstance(target, ast.Name | ast.Index):
            hold(
                InvalidTargetError(
                    "invalid left-hand side of assignment: expected a variable or a buffer element",
                    target.span,
                )
            )
        return ast.Assign(target, str(op), value, span)

    def expr_stmt(self, span: ast.Span, ch: list[Any]) -> ast.ExprStmt:
        return ast.ExprStmt(ch[0], span)

    def if_stmt(self, span: ast.Span, ch: list[Any]) -> ast.If:
        cond, then, _else, orelse = ch
        return ast.If(cond, then, orelse, span)

    def while_stmt(self, span: ast.Span, ch: list[Any]) -> ast.While:
        return ast.While(ch[0], ch[1], span)

    def loop_stmt(self, span: ast.Span, ch: list[Any]) -> ast.Loop:
        return ast.Loop(ch[0], span)

    def _for(self, kind: str, span: ast.Span, ch: list[Any]) -> ast.For:
        var, start, stop, body = ch
        return ast.For(kind, str(var), start, stop, body, span)

    def _reduce(self, kind: str, span: ast.Span, ch: list[Any]) -> ast.Reduce:
        var, start, stop, word, op, body = ch
        if str(word) != "reduce":
            hold(UnexpectedTokenError(f"expected '{{' or 'reduce', found '{word}'", token_span(word)))
        loop = ast.For(kind, str(var), start, stop, body, span)
        return ast.Reduce(loop, str(op), token_span(op), span)

    def parallel_reduce(self, span: ast.Span, ch: list[Any]) -> ast.Reduce:
        return self._reduce("parallel", span, ch)

    def bulk_reduce(self, span: ast.Span, ch: list[Any]) -> ast.Reduce:
        return self._reduce("bulk", span, ch)

    def for_stmt(self, span: ast.Span, ch: list[Any]) -> ast.For:
        return self._for("seq", span, ch)

    def parallel_for_stmt(self, span: ast.Span, ch: list[Any]) -> ast.For:
        return self._for("parallel", span, ch)

    def bulk_for_stmt(self, span: ast.Span, ch: list[Any]) -> ast.For:
        return self._for("bulk", span, ch)

    def for_await_stmt(self, span: ast.Span, ch: list[Any]) -> ast.ForAwait:
        return ast.ForAwait(str(ch[0]), ch[1], ch[2], span)

    def break_stmt(self, span: ast.Span, ch: list[Any]) -> ast.Break:
        return ast.Break(span)

    def continue_stmt(self, span: ast.Span, ch: list[Any]) -> ast.Continue:
        return ast.Continue(span)

    def return_stmt(self, span: ast.Span, ch: list[Any]) -> ast.Return:
        return ast.Return(ch[0], span)

    def select_stmt(self, span: ast.Span, ch: list[Any]) -> ast.Select:
        return ast.Select(tuple(ch), span)

    def select_arm(self, span: ast.Span, ch: list[Any]) -> ast.SelectArm:
        binding, future, body = _names(ch)
        return ast.SelectArm(_binding(binding), future, body, span)

    # ---- expressions ----
    @whole
    def expr(self, ch: list[Any]) -> ast.Binary:
        return fold_binary(ch)

    @whole
    def operand(self, ch: list[Any]) -> ast.Expr:
        return fold_operand(ch)

    def await_expr(self, span: ast.Span, ch: list[Any]) -> ast.Await:
        return ast.Await(ch[0], span)

    def method_call(self, span: ast.Span, ch: list[Any]) -> ast.MethodCall:
        receiver, method, args = ch
        if not isinstance(receiver, ast.Name):
            hold(
                InvalidReceiverError(
                    f"'.{method}()' must be called on the name of a shared scalar, signal or channel,"
                    f" as in 's.{method}()'",
                    receiver.span,
                )
            )
        return ast.MethodCall(receiver, str(method), args, span)

    def call(self, span: ast.Span, ch: list[Any]) -> ast.Call:
        return ast.Call(str(ch[0]), ch[1], span)

    def index(self, span: ast.Span, ch: list[Any]) -> ast.Index:
        base = ast.Name(str(ch[0]), token_span(ch[0]))
        return ast.Index(base, tuple(ch[1:]), span)

    def args(self, span: ast.Span, ch: list[Any]) -> tuple[Any, ...]:
        return tuple(c for c in ch if c is not None)

    @whole
    def number(self, ch: list[Token]) -> ast.IntLit | ast.FloatLit:
        span = token_span(ch[0])
        try:
            value = number_value(ch[0])
        except InvalidLiteralError as exc:
            hold(exc)
            value = 0
        if isinstance(value, int):
            return ast.IntLit(value, span)
        return ast.FloatLit(value, span)

    def true_lit(self, span: ast.Span, ch: list[Any]) -> ast.BoolLit:
        return ast.BoolLit(True, span)

    def false_lit(self, span: ast.Span, ch: list[Any]) -> ast.BoolLit:
        return ast.BoolLit(False, span)

    @whole
    def name(self, ch: list[Token]) -> ast.Name:
        return ast.Name(str(ch[0]), token_span(ch[0]))

    def async_block(self, span: ast.Span, ch: list[Any]) -> ast.AsyncBlock:
        return ast.AsyncBlock(ch[1], span)

    def paren(self, span: ast.Span, ch: list[Any]) -> Paren:
        return Paren(ch[0], span)  # '(' expr ')'


def _binding(tok: Token) -> str | None:
    return None if tok.type == "UNDERSCORE" else str(tok)
