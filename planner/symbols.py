"""The global namespace: items by name, with consts folded to values.

Items live in one namespace (as Rust's value namespace): a buffer and a task
cannot share a name. Consts are folded in dependency order, each after the
consts it mentions; ``-D NAME=value`` replaces a const's value before anything
that depends on it is folded.
"""

from __future__ import annotations

import math
import re

from gasync.dsl import ast
from gasync.dsl.diagnostics import ErrorGroup, GasyncError, Note
from gasync.planner import ir
from gasync.planner.consteval import convert, evaluate
from gasync.planner.errors import (
    ConstEvalError,
    DefineError,
    DependentError,
    DuplicateNameError,
    ExternPathError,
    SizeLimitError,
    TypeMismatchError,
    UnknownNameError,
    a_or_an,
)
from gasync.planner.literals import float_fits
from gasync.planner.model import BufferDef, ChannelDef, ConstDef, ExternDef, SharedDef, SignalDef

KIND_OF = {
    ast.Const: "const",
    ast.Buffer: "buffer",
    ast.Shared: "shared",
    ast.Signal: "signal",
    ast.Channel: "channel",
    ast.ExternFn: "extern",
    ast.Task: "task",
    ast.Group: "group",
}
BUILTIN_NAMES = ("join", "yield_now", "sleep", "min", "max", "abs", "sqrt", "exp", "log", "sin", "cos", "pow")
# A buffer or channel larger than this is a mistake, not a program: it is more than any
# one GPU holds (an H200 has 141 GB), and finding out at run time costs an allocation
# that fails, or minutes of host memory filled for the simulator.
MAX_DATA_BYTES = 1 << 38
CHANNEL_SLOT_BYTES = 8  # a channel keeps each value in a 64-bit word
EXTERN_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*")


def item_kind(item: ast.Item) -> str:
    if isinstance(item, ast.FnDef):
        return "async fn" if item.is_async else "fn"
    return KIND_OF[type(item)]


class Symbols:
    """Global items by name, and the folded definitions of data items."""

    def __init__(self, program: ast.Program, defines: dict[str, str], errors: list[GasyncError]):
        self.items: dict[str, ast.Item] = {}
        self.consts: dict[str, ConstDef] = {}
        self.buffers: dict[str, BufferDef] = {}
        self.shared: dict[str, SharedDef] = {}
        self.signals: dict[str, SignalDef] = {}
        self.channels: dict[str, ChannelDef] = {}
        self.externs: dict[str, ExternDef] = {}
        self._defines = defines
        self._folding: list[str] = []
        self.failed: set[str] = set()  # items whose definition gave an error
        self._lines = program.source.splitlines()
        for item in program.items:
            prev = self.items.get(item.name)
            if prev is not None:
                errors.append(
                    DuplicateNameError(
                        f"the name '{item.name}' is defined more than once",
                        self.name_span(item),
                        (
                            Note(
                                f"'{item.name}' was first defined here as {a_or_an(item_kind(prev))}",
                                self.name_span(prev),
                            ),
                        ),
                    )
                )
                continue
            self.items[item.name] = item
        for name in defines:
            if not isinstance(self.items.get(name), ast.Const):
                errors.append(define_error(name, "...", f"the program has no const named '{name}'"))
        for item in self.items.values():
            try:
                self._define(item)
            except GasyncError as exc:
                self.failed.add(item.name)
                if isinstance(exc, ErrorGroup):
                    errors.extend(exc.errors)
                elif not isinstance(exc, DependentError):
                    errors.append(exc)

    def name_span(self, item: ast.Item) -> ast.Span:
        """Where ``item``'s name is written: its first whole word in the item's text (the keywords
        before it are no names), or the whole item where the text is not at hand."""
        return self.word_span(item.span, item.name)

    def word_span(self, span: ast.Span, name: str) -> ast.Span:
        """Where ``name`` is first written as a whole word inside ``span`` (an item, a local item, a
        ``let``), or ``span`` itself where the text is not at hand."""
        first = span.line - 1
        pattern = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])")
        for k in range(first, min(span.end_line, len(self._lines))):
            start = span.column - 1 if k == first else 0
            found = pattern.search(self._lines[k], start)
            if found is not None:
                return ast.Span(k + 1, found.start() + 1, k + 1, found.end() + 1)
        return span

    def method_span(self, e: ast.MethodCall) -> ast.Span:
        """Where the method's name is written in ``recv.method(...)``, or the whole call."""
        end = e.receiver.span
        if 0 < end.end_line <= len(self._lines):
            found = re.compile(rf"\s*\.\s*({re.escape(e.method)})\b").match(
                self._lines[end.end_line - 1], end.end_column - 1
            )
            if found is not None:
                return ast.Span(end.end_line, found.start(1) + 1, end.end_line, found.end(1) + 1)
        return e.span

    def kind(self, name: str) -> str | None:
        if name in self.failed:
            raise DependentError(f"'{name}' is not defined: its definition has an error")
        item = self.items.get(name)
        return None if item is None else item_kind(item)

    def scalar(self, t: ast.ScalarType) -> str:
        if t.name not in ir.SCALARS:
            raise self._unknown_type(t)
        return t.name

    @staticmethod
    def _unknown_type(t: ast.ScalarType) -> UnknownNameError:
        return UnknownNameError(
            f"unknown type '{t.name}'", t.span, (Note("the types are bool i32 i64 u32 u64 f32 f64"),)
        )

    def declared_type(self, name: str) -> str | None:
        """The declared type of a const whose definition failed, where that type is itself valid:
        its uses are checked against it (as a failed ``let x: T`` still binds ``x: T``)."""
        item = self.items.get(name)
        if name in self.failed and isinstance(item, ast.Const) and item.type.name in ir.SCALARS:
            return item.type.name
        return None

    def buffer(self, name: ast.Name) -> BufferDef:
        if self.kind(name.id) != "buffer":
            what = self.kind(name.id)
            if what is None:
                raise UnknownNameError(f"cannot find buffer '{name.id}' in this scope", name.span)
            raise TypeMismatchError(
                f"'{name.id}' is {a_or_an(str(what))}, not a buffer; it cannot be indexed", name.span
            )
        return self.buffers[name.id]

    def signature(self, name: str) -> tuple[tuple[str, ...], ir.Ty]:
        """A fn's, async fn's or extern's parameter and return types; checked once, at its
        definition (``_define``): a call of one whose signature failed is a DependentError."""
        item = self.items[name]
        assert isinstance(item, ast.FnDef | ast.ExternFn)
        types = (*(p.type for p in item.params), *((item.ret,) if item.ret is not None else ()))
        unknown = [t for t in types if t.name not in ir.SCALARS]
        if len(unknown) > 1:  # each one named, but one error per type written
            raise ErrorGroup([self._unknown_type(t) for t in unknown])
        params = tuple(self.scalar(p.type) for p in item.params)
        ret = self.scalar(item.ret) if item.ret is not None else "unit"
        return params, ret

    # ---- folding ----
    def const_value(self, e: ast.Expr, want: ir.Ty | None) -> ir.Lit:
        """Check and evaluate a compile-time expression (consts and literals)."""
        from gasync.planner.functions import const_checker

        typed = const_checker(self).expr(e, want)
        if isinstance(typed, ir.Lit):
            # a bare literal keeps its written value (an f32 2.2, not 2.200000047683716): the
            # same f32, which the device rounds as it loads it; anything computed is folded
            # in its type, operands and intermediate results included (planner/consteval.py)
            return ir.Lit(typed.value, typed.ty, e.span)
        return ir.Lit(evaluate(typed), typed.ty, e.span)

    def const_range(self, start: ast.Expr, stop: ast.Expr) -> tuple[ir.Lit, ir.Lit]:
        """Check and evaluate ``start..stop`` at compile time; a literal side takes the other's type."""
        from gasync.planner.functions import const_checker

        lo, hi = const_checker(self).pair(start, stop, None)
        return ir.Lit(evaluate(lo), lo.ty, start.span), ir.Lit(evaluate(hi), hi.ty, stop.span)

    def const(self, name: str) -> ConstDef:
        if name not in self.consts:
            item = self.items[name]
            assert isinstance(item, ast.Const)
            if name in self._folding:
                cycle = " -> ".join([*self._folding[self._folding.index(name) :], name])
                raise ConstEvalError(f"const '{name}' depends on itself: {cycle}", item.span)
            self._folding.append(name)
            try:
                self.consts[name] = self._fold_const(item)
            except GasyncError:
                self.failed.add(name)
                raise
            finally:
                self._folding.pop()
        return self.consts[name]

    def _fold_const(self, item: ast.Const) -> ConstDef:
        ty = self.scalar(item.type)
        if item.name in self._defines:
            return ConstDef(item.name, ty, _parse_define(item.name, self._defines[item.name], ty), item.span)
        return ConstDef(item.name, ty, self.const_value(item.value, ty).value, item.span)

    def positive(self, e: ast.Expr, what: str) -> int:
        """A size: a literal one is an i64 (as Rust's usize), so ``f32[1 << 40]`` is 2^40."""
        from gasync.planner.literals import flexible

        lit = self.const_value(e, "i64" if flexible(e) else None)
        if lit.ty not in ir.INTS:
            raise TypeMismatchError(f"{what} must be an integer, found {lit.ty}", e.span)
        if int(lit.value) <= 0:
            notes = tuple(define_note(n, given) for n, given in self.defines_in(e))
            raise ConstEvalError(f"{what} must be positive, found {lit.value}", e.span, notes)
        return int(lit.value)

    def defines_in(self, e: ast.Expr) -> list[tuple[str, str]]:
        """The consts given by a define that ``e`` reads, directly or through other consts."""
        from gasync.planner.graphs import ast_nodes

        found: dict[str, str] = {}
        seen: set[str] = set()
        stack: list[ast.Expr] = [e]
        while stack:
            for node in ast_nodes(stack.pop()):
                item = self.items.get(node.id) if isinstance(node, ast.Name) else None
                if not isinstance(item, ast.Const) or item.name in seen:
                    continue
                seen.add(item.name)
                if item.name in self._defines:
                    found[item.name] = self._defines[item.name].strip()
                else:
                    stack.append(item.value)
        return sorted(found.items())

    def _define(self, item: ast.Item) -> None:
        if isinstance(item, ast.Const):
            self.const(item.name)
        elif isinstance(item, ast.Buffer):
            elem = self.scalar(item.type.elem)
            if len(item.type.dims) > 2:
                raise TypeMismatchError("buffers have one or two dimensions", item.type.span)
            shape = tuple(self.positive(d, "a buffer dimension") for d in item.type.dims)
            _within_limit(f"buffer '{item.name}'", math.prod(shape) * ir.BITS[elem] // 8, item.type.span)
            arg = None
            if item.init.arg is not None:
                want = "u64" if item.init.kind == "random" else elem
                arg = self.const_value(item.init.arg, want).value
            self.buffers[item.name] = BufferDef(item.name, elem, shape, item.init.kind, arg, item.span)
        elif isinstance(item, ast.Shared):
            ty = self.scalar(item.type)
            self.shared[item.name] = SharedDef(item.name, ty, self.const_value(item.value, ty).value, item.span)
        elif isinstance(item, ast.Signal):
            self.signals[item.name] = SignalDef(item.name, item.span)
        elif isinstance(item, ast.Channel):
            elem = self.scalar(item.elem)
            cap = self.positive(item.capacity, "a channel capacity")
            _within_limit(f"channel '{item.name}'", cap * CHANNEL_SLOT_BYTES, item.capacity.span)
            self.channels[item.name] = ChannelDef(item.name, elem, cap, item.span)
        elif isinstance(item, ast.ExternFn):
            self.externs[item.name] = _extern(self, item)
        elif isinstance(item, ast.FnDef | ast.Task):
            if item.name in BUILTIN_NAMES:
                raise DuplicateNameError(f"'{item.name}' is a builtin and cannot be redefined", self.name_span(item))
            if isinstance(item, ast.FnDef):
                self.signature(item.name)  # once here, not again at each call


def _within_limit(what: str, nbytes: int, span: ast.Span) -> None:
    if nbytes > MAX_DATA_BYTES:
        raise SizeLimitError(
            f"{what} needs {nbytes} bytes ({nbytes / 2**30:.0f} GiB), more than a device can hold",
            span,
            (Note(f"a buffer or channel may use at most {MAX_DATA_BYTES} bytes ({MAX_DATA_BYTES >> 30} GiB)"),),
        )


def _extern(syms: Symbols, item: ast.ExternFn) -> ExternDef:
    if not EXTERN_PATH.fullmatch(item.path):
        raise ExternPathError(
            f'invalid extern path "{item.path}": expected "dotted.module:function" made of identifiers',
            item.path_span if item.path_span.line else item.span,  # at the quoted path (decision 35)
        )
    module, attr = item.path.split(":")
    params, ret = syms.signature(item.name)
    names = tuple(p.name for p in item.params)
    pairs = tuple(zip(names, params, strict=True))
    return ExternDef(item.name, pairs, str(ret), module, attr, item.span, item.path_span)


def _parse_define(name: str, text: str, ty: str) -> int | float | bool:
    t = text.strip().replace("_", "")
    try:
        if ty == "bool":
            if t not in ("true", "false"):
                raise ValueError
            return t == "true"
        if ty in ir.INTS:
            # a decimal with leading zeros reads as in the source (007 is 7); 0x, 0o, 0b as prefixes
            value = int(t, 10) if t.lstrip("+-").isdigit() else int(t, 0)
            if convert(value, ty) != value:
                raise define_error(name, text, f"{value} does not fit in {ty}")
            return value
        real = float(t)
        if not float_fits(real, ty):  # also Python's own "inf" and "nan", which are no gasync literals
            raise define_error(name, text, f"{text.strip()!r} is not a finite {ty}")
        return convert(real, ty)
    except ValueError:
        raise define_error(name, text, f"{text.strip()!r} is not a valid {ty}") from None


def define_error(name: str, text: str, detail: str) -> DefineError:
    """A bad override: ``defines['N']: ...`` in the API's words, ``-D N=...: ...`` in the CLI's."""
    error = DefineError(f"defines['{name}']: {detail}")
    error.cli_message = f"-D {name}={text}: {detail}"
    return error


def define_note(name: str, given: str) -> Note:
    """Where a value that broke a rule came from: ``-D name=given``."""
    return Note(f"'{name}' is {given}, given by the define '-D {name}={given}'")
