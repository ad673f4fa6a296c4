"""Random well-typed ``.gasync`` expressions, as text, for the program generator.

Every expression is drawn for one scalar type and comes back with whether it
is *flexible* (made of literals only, so the planner gives it the type its
context wants, and ``i32``/``f32`` where nothing decides): the operand of a
cast or a comparison is never flexible on both sides, so the generator and
the planner always agree on types. Float builtins that raise in Python
(``sqrt`` of a negative, ``exp`` overflowing, ``sin`` of inf, float ``%`` by
zero) get arguments that cannot: the simulator runs the generated code in
Python, where the device would give NaN or inf.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hypothesis import strategies as st

INTS = ("i32", "i64", "u32", "u64")
FLOATS = ("f32", "f64")
NUMERIC = (*INTS, *FLOATS)
TYPES = (*NUMERIC, "bool")
SIGNED = ("i32", "i64", *FLOATS)
BITS = {"i32": 32, "i64": 64, "u32": 32, "u64": 64}
INPUT_LEN = 8  # every input buffer in_<type> has this many elements
SCRATCH = 8  # columns of a group task's scratch buffer (groups.py)
# Plain fns in every program: floats into [-1000, 1000], NaN to 0, for float builtins that
# would raise under the simulator.
TAME = {
    ty: f"fn tame_{ty}(x: {ty}) -> {ty} {{ if x != x {{ return 0.0; }} return min(max(x, -1000.0), 1000.0); }}"
    for ty in FLOATS
}


@dataclass(frozen=True)
class Local:
    name: str
    ty: str
    depth: int  # scope depth where it was declared
    mutable: bool = True


@dataclass(frozen=True)
class Fn:
    """A plain fn or async fn the program declares: its parameter types and result."""

    name: str
    params: tuple[str, ...]
    ret: str
    runs_bulk: bool = False  # it (or what it awaits) runs a `bulk for`
    suspends: bool = True
    waits: tuple[str, ...] = ()  # the signals it (or what it awaits) waits on


@dataclass(frozen=True)
class Scratch:
    """A group task's local buffer ``name: ty[copies, SCRATCH]``; ``row`` is its warp's row."""

    name: str
    ty: str
    row: str


@dataclass(frozen=True)
class Expr:
    text: str
    flexible: bool = False


class ExprGen:
    """Draws typed expressions over the locals in scope, input buffers and plain fns."""

    def __init__(self, draw: st.DrawFn):
        self.draw = draw
        self.plain: list[Fn] = []
        self.set_signals = ["never"]  # signals whose is_set() is known here: never, or set by this task
        self.scratch: Scratch | None = None  # the group task's own local buffer, readable here

    def pick(self, options: list[str] | tuple[str, ...]) -> str:
        return self.draw(st.sampled_from(list(options)))

    def literal(self, ty: str) -> Expr:
        if ty == "bool":
            return Expr(self.pick(("true", "false")), True)
        if ty in FLOATS:
            return Expr(self.pick(("0.0", "1.5", "-0.25", "3.0", "2e-3", "-7.5", "1e10", "0.1")), True)
        hi = {"i32": 2**31 - 1, "i64": 2**63 - 1, "u32": 2**32 - 1, "u64": 2**64 - 1}[ty]
        lo = -hi - 1 if ty in SIGNED else 0
        value = self.draw(st.one_of(st.integers(-3 if lo else 0, 9), st.sampled_from([lo, hi, hi // 3 + 1])))
        return Expr(str(value), True)

    def load(self, ty: str, env: list[Local], depth: int) -> Expr:
        sc = self.scratch
        if sc is not None and sc.ty == ty and self.draw(st.integers(0, 2)) == 0:
            if depth > 0:
                at = self.nonflex(self.pick(INTS), env, depth - 1).text
                return Expr(f"{sc.name}[{sc.row}, (({at}) as u32) % {SCRATCH}]")
            return Expr(f"{sc.name}[{sc.row}, {self.draw(st.integers(0, SCRATCH - 1))}]")
        index = self.draw(st.integers(0, INPUT_LEN - 1))
        if depth > 0 and self.draw(st.booleans()):
            inner = self.nonflex(self.pick(INTS), env, depth - 1)
            return Expr(f"in_{ty}[(({inner.text}) as u32) % {INPUT_LEN}]")
        return Expr(f"in_{ty}[{index}]")

    def leaf(self, ty: str, env: list[Local], depth: int) -> Expr:
        names = [v.name for v in env if v.ty == ty]
        kinds = ["literal", "load"] + ["local"] * (3 if names else 0) + ["is_set"] * (ty == "bool")
        kind = self.pick(kinds)
        if kind == "is_set":
            return Expr(f"{self.pick(self.set_signals)}.is_set()")
        if kind == "local":
            return Expr(self.pick(names))
        if kind == "load":
            return self.load(ty, env, depth)
        return self.literal(ty)

    def expr(self, ty: str, env: list[Local], depth: int = 2) -> Expr:
        """An expression of type ``ty`` with at most ``depth`` levels of operators."""
        if depth <= 0:
            return self.leaf(ty, env, 0)
        makers: list[Callable[[str, list[Local], int], Expr]] = [self.leaf, self.leaf, self.cast]
        if ty == "bool":
            makers += [self.compare, self.logic, self.not_]
        else:
            makers += [self.arith, self.arith, self.builtin]
            if ty in INTS:
                makers += [self.bitwise, self.shift, self.unary]
            else:
                makers += [self.unary, self.float_fn]
        makers += [self.call] * any(f.ret == ty for f in self.plain)
        return self.draw(st.sampled_from(makers))(ty, env, depth)

    def nonflex(self, ty: str, env: list[Local], depth: int) -> Expr:
        """An expression of type ``ty`` whatever its context (one that is not only literals)."""
        e = self.expr(ty, env, depth)
        if not e.flexible:
            return e
        return Expr(f"({self.load(ty, env, 0).text} {'==' if ty == 'bool' else '+'} {e.text})")

    # ---- operators ----
    def arith(self, ty: str, env: list[Local], depth: int) -> Expr:
        a, b = self.expr(ty, env, depth - 1), self.expr(ty, env, depth - 1)
        op = self.pick(("+", "-", "*", "/", "%"))
        if op == "%" and ty in FLOATS:  # fmod raises in Python for a zero divisor or an infinite dividend
            return Expr(f"(tame_{ty}({a.text}) % (abs(tame_{ty}({b.text})) + 1.5))")
        if op in ("/", "%") and a.flexible and b.flexible and b.text.lstrip("-(") in ("0", "0.0"):
            b = Expr("1", True) if ty in INTS else Expr("1.5", True)  # a constant 0 divisor is a compile error
        return Expr(f"({a.text} {op} {b.text})", a.flexible and b.flexible)

    def bitwise(self, ty: str, env: list[Local], depth: int) -> Expr:
        a, b = self.expr(ty, env, depth - 1), self.expr(ty, env, depth - 1)
        return Expr(f"({a.text} {self.pick(('&', '|', '^'))} {b.text})", a.flexible and b.flexible)

    def shift(self, ty: str, env: list[Local], depth: int) -> Expr:
        if self.draw(st.booleans()):
            a = self.expr(ty, env, depth - 1)
            amount = str(self.draw(st.integers(0, BITS[ty] - 1)))  # a constant past the width is an error
        else:  # only a plain amount lets a literal on the left take the context's type
            a = self.nonflex(ty, env, depth - 1)
            amount = self.nonflex(self.pick(INTS), env, depth - 1).text
        return Expr(f"({a.text} {self.pick(('<<', '>>'))} {amount})", a.flexible)

    def unary(self, ty: str, env: list[Local], depth: int) -> Expr:
        a = self.expr(ty, env, depth - 1)
        ops = ("-", "~", "!") if ty in ("i32", "i64") else ("~", "!") if ty in INTS else ("-", "+")
        return Expr(f"({self.pick(ops)}{a.text})", a.flexible)

    def not_(self, ty: str, env: list[Local], depth: int) -> Expr:
        a = self.expr("bool", env, depth - 1)
        return Expr(f"(!{a.text})", a.flexible)

    def cast(self, ty: str, env: list[Local], depth: int) -> Expr:
        src = "bool" if ty == "bool" else self.pick(TYPES)
        inner = self.nonflex(src, env, depth - 1)
        if src in FLOATS and ty in INTS and self.draw(st.booleans()):  # out of range: saturates
            return Expr(f"(({inner.text} * 1e10) as {ty})")
        return Expr(f"(({inner.text}) as {ty})")

    def compare(self, ty: str, env: list[Local], depth: int) -> Expr:
        src = self.pick(TYPES)
        a, b = self.nonflex(src, env, depth - 1), self.expr(src, env, depth - 1)
        ops = ("==", "!=") if src == "bool" else ("==", "!=", "<", ">", "<=", ">=")
        return Expr(f"({a.text} {self.pick(ops)} {b.text})")

    def logic(self, ty: str, env: list[Local], depth: int) -> Expr:
        a, b = self.expr("bool", env, depth - 1), self.expr("bool", env, depth - 1)
        return Expr(f"({a.text} {self.pick(('&&', '||', '&', '|', '^'))} {b.text})", a.flexible and b.flexible)

    def builtin(self, ty: str, env: list[Local], depth: int) -> Expr:
        fns = ("min", "max", "abs") if ty in SIGNED else ("min", "max")
        name = self.pick(fns)
        a = self.nonflex(ty, env, depth - 1)  # a call's type comes from its arguments, not its context
        if name == "abs":
            return Expr(f"abs({a.text})")
        b = self.expr(ty, env, depth - 1)
        return Expr(f"{name}({a.text}, {b.text})")

    def float_fn(self, ty: str, env: list[Local], depth: int) -> Expr:
        x = self.nonflex(ty, env, depth - 1).text
        tame = f"tame_{ty}({x})"
        forms = {
            "sqrt": f"sqrt(abs({x}))",
            "log": f"log(abs({x}) + 1.0)",
            "exp": f"exp({tame} / 125.0)",
            "sin": f"sin({tame})",
            "cos": f"cos({tame})",
            "floor": f"floor({tame})",
            "ceil": f"ceil({tame})",
            "pow": f"pow(abs({tame}) + 1.0, {self.pick(('2.0', '0.5', '-1.5', '3.0'))})",
        }
        return Expr(forms[self.pick(tuple(forms))])

    def call(self, ty: str, env: list[Local], depth: int) -> Expr:
        fn = self.draw(st.sampled_from([f for f in self.plain if f.ret == ty]))
        args = ", ".join(self.expr(p, env, depth - 1).text for p in fn.params)
        return Expr(f"{fn.name}({args})")
