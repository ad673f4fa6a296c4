"""Render typed IR expressions as Numba-CUDA Python expressions.

Every value is wrapped in its type's constructor (``int32(...)``), because
Numba widens ``int32 + int32`` to int64 and turns ``uint64 op int64`` into a
float: the explicit casts give the wrapping, width-exact arithmetic the
language promises. User names never reach the output as they are: locals
become ``v_<name>`` and globals the fields ``G.B_<name>`` (a buffer) and
``G.S_<name>`` (a shared scalar) of the device state, so no ``.gasync``
identifier can collide with a Python keyword, builtin or our own names.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable

from gasync.codegen import groups
from gasync.codegen.bounds import Checks
from gasync.planner import ir
from gasync.planner.consteval import wrap as wrap_int

# a `.gasync` atomic's operation -> the devicelib function that does it (runtime/order.py)
RMW_OF = {"add": "add", "sub": "sub", "max": "amax", "min": "amin", "and": "aand", "or": "aor"}

NP = {
    "bool": "boolean",
    "i32": "int32",
    "i64": "int64",
    "u32": "uint32",
    "u64": "uint64",
    "f32": "float32",
    "f64": "float64",
}
INT_LIMITS = {"i32": (-(2**31), 2**31 - 1), "i64": (-(2**63), 2**63 - 1), "u32": (0, 2**32 - 1), "u64": (0, 2**64 - 1)}
PY_BINOP = {"+", "-", "*", "&", "|", "^"}
# PY_BINOP's operations of two i64 literals, folded here (codegen keeps its own table: the
# reference interpreter's is the oracle the differential tests hold the kernels to)
FOLD: dict[str, Callable[[int, int], int]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
}
MATH = {"sqrt", "exp", "log", "sin", "cos", "pow", "floor", "ceil"}


class Typed(str):
    """Rendered text whose Numba type is known to be exactly ``np`` (a name of NP's values):
    a constructor call, a literal, a local (every assignment to one is wrapped), or an
    operation of two such operands that Numba already types as its result."""

    np: str
    bare: str  # an operation's text without its outer parentheses ('' for any other text)
    prec: int  # that operation's precedence (PREC)
    lit: str  # an i64 literal's Python int ('' for any other text)


def typed(text: str, np: str, bare: str = "", prec: int = 0, lit: str = "") -> Typed:
    out = Typed(text)
    out.np, out.bare, out.prec, out.lit = np, bare, prec, lit
    return out


def typed_local(name: str, types: dict[str, ir.Ty]) -> str:
    """Local ``name`` as rendered text of its Numba type (every assignment to a local is wrapped),
    where ``types`` knows it: ``wrap`` then leaves out a constructor of that type (B6)."""
    return typed(local(name), NP[str(types[name])]) if name in types else local(name)


def counter_step(var: str, np: str) -> str:
    """A loop counter's step: an int64's by a Python int (Numba types that int64 and no call)."""
    return f"{var} = {var} + 1" if np == "int64" else f"{var} = {np}({var} + {np}(1))"


def wrap(ctor: str, text: str) -> str:
    """``ctor(text)``, unless ``text`` is already known to be of type ``ctor``."""
    if getattr(text, "np", None) == ctor:
        return text
    return typed(f"{ctor}({text})", ctor)


# operations that Numba types as their operands' type when both are this type (an int32
# sum is an int64 there, so i32 and u32 results keep their constructor)
NATURAL = {"i64", "u64", "f32", "f64"}
PREC = {"|": 1, "^": 2, "&": 3, "+": 5, "-": 5, "*": 6}  # Python's order of these operators


def operand(text: str, prec: int, right: bool) -> str:
    """An operand of an operation of precedence ``prec``: an operation that binds tighter
    (or as tight, on the left) goes without its parentheses."""
    inner_prec = getattr(text, "prec", 0)
    tighter = inner_prec > prec or not right and inner_prec == prec
    return text.bare if tighter and getattr(text, "bare", "") else text  # type: ignore[attr-defined,no-any-return]


def local(name: str) -> str:
    """The Python name of a local: user names get ``v_``, temporaries ``t_``."""
    return "t_" + name[2:] if name.startswith("$t") else "v_" + name


def buffer_ref(name: str) -> str:
    """A buffer's array in the generated code (a field of G after runtime/state.py's groups)."""
    if groups.is_local(name):  # a group's shared array (codegen/groups.py)
        return groups.buffer_ref(name)
    return f"G.B_{name}"


def shared_ref(name: str) -> str:
    """A shared scalar's one-word array in the generated code."""
    return f"G.S_{name}"


def literal(value: int | float | bool, ty: ir.Ty) -> str:
    np = NP[str(ty)]
    if ty == "bool":
        return typed("True" if value else "False", np)
    if ty in ir.FLOATS:
        f = float(value)
        if math.isnan(f):
            return typed(f"{np}(math.nan)", np)
        if math.isinf(f):
            return typed(f"{np}({'-' if f < 0 else ''}math.inf)", np)
        return typed(f"{np}({f!r})", np)
    n = int(value)
    lit = "" if ty != "i64" else f"({n})" if n < 0 else str(n)
    return typed(f"{np}({n})", np, lit=lit)


def exact_index(index: tuple[ir.Expr, ...], var: str) -> bool:
    """Whether ``index`` is the loop variable ``var`` itself (``buf[i]``)."""
    return len(index) == 1 and isinstance(index[0], ir.Var) and index[0].name == var


class ExprRenderer:
    """A table of small renderers, one per IR expression type; ``checks`` (codegen/bounds.py)
    decides which buffer accesses are checked at run time (none without it)."""

    def __init__(self, var: Callable[[str], str] = local, self_inst: str = "inst", checks: Checks | None = None):
        self.var = var
        self.self_inst = self_inst  # the running instance's id, or "int64(-1)" where there is none
        self.checks = checks
        # a vector map's loads (codegen/maps.py): (buffer, index) -> the component that holds
        # that access of the element being rendered
        self.vector_loads: dict[tuple[str, tuple[ir.Expr, ...]], str] = {}
        self.cursors: frozenset[str] = frozenset()  # channels whose sender's cursor this poll holds
        # a function given some buffers' arrays (and the fault word) as parameters instead of G:
        # buffer -> its parameter, and the parameter that stands for bounds.CTL ("" for G's)
        self.arrays: dict[str, str] = {}
        self.ctl = ""
        self.table: dict[type, Callable[..., str]] = {
            ir.Lit: lambda e: literal(e.value, e.ty),
            ir.Var: lambda e: typed(self.var(e.name), NP[str(e.ty)]),
            ir.Load: self._load,
            ir.SharedOp: self._shared,
            ir.BufAtomic: self._buf_atomic,
            ir.SignalOp: self._signal,
            ir.Unary: self._unary,
            ir.Binary: self._binary,
            ir.Cast: self._cast,
            ir.Call: self._call,
            ir.ChannelClose: self._close,
        }

    def __call__(self, e: ir.Expr) -> str:
        return self.table[type(e)](e)

    def _close(self, e: ir.ChannelClose) -> str:
        if groups.is_local(e.name):
            return groups.close(e.name)
        if e.name in self.cursors:  # the crediting sender's own close: its cursor is read again
            return f"chan_close_own(CH_{e.name}, w, {self.self_inst}, G, cur_{e.name})"
        return f"chan_close(CH_{e.name}, w, {self.self_inst}, G)"

    def index(self, index: tuple[ir.Expr, ...], inside: bool = False) -> str:
        """An access's index, each part an ``int64``, or with ``inside`` (the access lies inside its
        buffer: ``ExprRenderer.inside``) each a ``uint64``."""
        if not inside:
            return ", ".join(wrap("int64", self(i)) for i in index)
        parts = (self(i) for i in index)
        return ", ".join(f"uint64({getattr(p, 'lit', '') or getattr(p, 'bare', '') or p})" for p in parts)

    def index_tuple(self, index: tuple[ir.Expr, ...], inside: bool = False) -> str:
        """The index as a tuple, ``(int64(i),)`` or ``(int64(r), int64(c))`` (``uint64`` inside)."""
        return f"({self.index(index, inside)},)" if len(index) == 1 else f"({self.index(index, inside)})"

    def inside(self, e: ir.Load | ir.Store) -> bool:
        """Whether access ``e`` is known to lie inside its buffer where it is rendered: proven by
        the planner, or tested once for the whole of a hoisted map (codegen/hoist.py). Its index
        is then rendered unsigned, and Numba leaves out what it adds to every signed index for
        Python's negative ones (``a[-1]``): ~3 instructions a dimension on the path of each
        access, ~2/3 of the instructions of B8's inner loop (bench/NOTES.md)."""
        return e.proven or (self.checks is not None and self.checks.hoisted)

    def checked(self, e: ir.Load | ir.BufAtomic) -> Checks | None:
        """The checks, where access ``e`` is one of them."""
        return self.checks if self.checks is not None and self.checks.wanted(e) else None

    def _cast(self, e: ir.Cast) -> str:
        ty = str(e.ty)
        if e.expr.ty in ir.FLOATS and ty in ir.INTS:  # saturating, NaN -> 0, as Rust's `as`
            lo, hi = INT_LIMITS[ty]
            if ty in ir.SIGNED:
                return typed(f"{NP[ty]}(dl.f2i({self(e.expr)}, {NP[ty]}({lo}), {NP[ty]}({hi})))", NP[ty])
            return typed(f"{NP[ty]}(dl.f2u({self(e.expr)}, {NP[ty]}({hi})))", NP[ty])
        return wrap(NP[ty], self(e.expr))

    def _load(self, e: ir.Load) -> str:
        vector = self.vector_loads.get((e.buf, e.index))
        if vector is not None:
            return vector
        checks = self.checked(e)
        np = NP[str(e.ty)]  # a buffer's elements are of its type exactly (runtime/buffers.py)
        array = self.arrays.get(e.buf) or buffer_ref(e.buf)
        if checks is not None:  # 0 where the index is outside (the run stops)
            return typed(f"db.load({array}, {self.index_tuple(e.index)}, {checks.where(e, self.ctl)})", np)
        return typed(f"{array}[{self.index(e.index, self.inside(e))}]", np)

    def _shared(self, e: ir.SharedOp) -> str:
        """Atomics on a shared scalar (a one-word array; bools are kept as int32 words)."""
        ty = str(e.args[0].ty) if e.args else str(e.ty)
        word = "int32" if ty == "bool" else NP[ty]
        arr = shared_ref(e.name)
        args = [wrap(word, self(a)) for a in e.args]
        if e.op == "load":
            value = f"dl.float_load({arr}, {word}(-0.0))" if ty in ir.FLOATS else f"dl.atomic_load({arr})"
            return f"({value} != 0)" if ty == "bool" else value
        if e.op == "store":
            store = "float_store" if ty in ir.FLOATS else "atomic_store"
            return f"dl.{store}({arr}, {args[0]})"
        if e.op == "cas":
            value = f"dl.cas({arr}, 0, {args[0]}, {args[1]})"
            return f"({value} != 0)" if ty == "bool" else value
        op = e.op.removeprefix("fetch_")
        return f"dl.{RMW_OF[op]}({arr}, 0, {args[0]})"

    def _buf_atomic(self, e: ir.BufAtomic) -> str:
        value = wrap(NP[str(e.ty)], self(e.value))
        idx = self.index(e.index)
        where = f"({idx})" if len(e.index) > 1 else idx
        checks = self.checked(e)
        if checks is not None:  # nothing written where the index is outside (the run stops)
            rmw = "db.rmw" if len(e.index) == 1 else "db.rmw2"
            return f"{rmw}(db.RMW_{e.op.upper()}, {buffer_ref(e.buf)}, {where}, {value}, {checks.where(e)})"
        return f"dl.{RMW_OF[e.op]}({buffer_ref(e.buf)}, {where}, {value})"

    def _signal(self, e: ir.SignalOp) -> str:
        if e.op == "is_set":
            return f"dl.signal_is_set(G.signals.SIG, SIGNAL_{e.name})"
        return f"signal_set(SIGNAL_{e.name}, w, {self.self_inst}, G)"  # sets it and wakes its waiters

    def _unary(self, e: ir.Unary) -> str:
        inner = self(e.operand)
        if e.op == "!":
            return f"(not {inner})"
        return typed(f"{NP[str(e.ty)]}({e.op}{inner})", NP[str(e.ty)])

    def _binary(self, e: ir.Binary) -> str:
        return self.binop(e.op, str(e.ty), str(e.left.ty), self(e.left), self(e.right))

    def binop(self, op: str, ty: str, operand_ty: str, a: str, b: str) -> str:
        """``a op b`` of operands ``a`` and ``b`` (already rendered, of type ``operand_ty``),
        giving a ``ty``."""
        if op in ("&&", "||"):
            return f"({a} {'and' if op == '&&' else 'or'} {b})"
        if ty == "bool" and op not in PY_BINOP:
            return f"({a} {op} {b})"
        if op in ("<<", ">>"):
            bits = ir.BITS[operand_ty]
            return typed(f"{NP[ty]}({a} {op} {NP[ty]}({b} & {bits - 1}))", NP[ty])
        if op in ("/", "%"):
            if ty in ir.FLOATS:
                return f"dl.fdiv({a}, {b})" if op == "/" else typed(f"{NP[ty]}(math.fmod({a}, {b}))", NP[ty])
            return typed(f"{NP[ty]}(dl.{'idiv' if op == '/' else 'irem'}({a}, {b}))", NP[ty])
        if ty == "bool":
            return f"({a} {op} {b})"
        if ty == "i64" and op in PY_BINOP and getattr(a, "lit", "") and getattr(b, "lit", ""):
            # two literals: the value itself, wrapped as the device wraps it (Numba would type and
            # lower two int64() calls and the operation, in every function that has it: B6)
            x, y = int(a.lit.strip("()")), int(b.lit.strip("()"))  # type: ignore[attr-defined]
            return literal(wrap_int(FOLD[op](x, y), "i64"), "i64")
        if ty in NATURAL and op in PY_BINOP and getattr(a, "np", None) == getattr(b, "np", None) == NP[ty]:
            x, y = operand(a, PREC[op], False), operand(b, PREC[op], True)
            if ty == "i64" and bool(getattr(a, "lit", "")) != bool(getattr(b, "lit", "")):
                # an int64 with a Python int is an int64 for Numba, which then types no call
                # of int64(); not between two literals, which Python would fold unbounded
                x, y = getattr(a, "lit", "") or x, getattr(b, "lit", "") or y
            bare = f"{x} {op} {y}"
            return typed(f"({bare})", NP[ty], bare, PREC[op])
        return typed(f"{NP[ty]}({a} {op} {b})", NP[ty])

    def _call(self, e: ir.Call) -> str:
        args = [self(a) for a in e.args]
        ty = NP.get(str(e.ty), "")
        if e.kind == "builtin":
            if e.name in ("min", "max") and str(e.ty) in ("f32", "f64"):  # a NaN is no candidate
                return typed(f"{ty}(dl.f{e.name}({', '.join(args)}))", ty)
            if e.name in MATH:
                return typed(f"{ty}(math.{e.name}({', '.join(args)}))", ty)
            if e.name in ("min", "max") and ty in ("int64", "uint64") and all(getattr(a, "np", "") == ty for a in args):
                return typed(f"{e.name}({', '.join(args)})", ty)  # (Numba's min of two int64s is one)
            return typed(f"{ty}({e.name}({', '.join(args)}))", ty)
        if e.kind == "extern":
            return f"ext_{e.name}({', '.join(args)})"
        params = [NP[str(a.ty)] for a in e.args]  # a plain fn's parameters are of exactly their types
        return fn_call(e.name, [wrap(p, a) for p, a in zip(params, args, strict=True)], self.checks)


def fn_call(name: str, args: list[str], checks: Checks | None) -> str:
    """A call of plain function ``name`` (one with checks also takes the running instance)."""
    inst = ["inst"] if checks is not None and name in checks.inst_fns else []
    return f"fn_{name}({', '.join([*args, 'w', *inst, 'G'])})"
