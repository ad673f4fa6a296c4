"""What the checker knows about the function it checks: its locals, scopes and counters."""

from __future__ import annotations

from dataclasses import dataclass, field

from gasync.dsl import ast
from gasync.dsl.diagnostics import GasyncError
from gasync.planner import ir
from gasync.planner.errors import DependentError

Binding = tuple[int, int, str]  # a let's or a for loop's (line, column, name): one binding of the source


class Retype(Exception):  # noqa: N818 - a request to the function's checker, not an error
    """A local whose type only a literal's default gave (``let n = 5;`` is i32) met a use that
    needs another type of its kind (``a64[0] = n``): the function is checked again with the
    binding typed so from the start, as Rust infers a literal's type from a later use."""

    def __init__(self, binding: Binding, ty: ir.Ty):
        super().__init__(f"{binding[2]}: {ty}")
        self.binding, self.ty = binding, ty


POISONED = "$poisoned"  # what a name is bound to after the statement binding it failed (planner/recovery.py)


CONST_FN = "<const>"  # the name of the FnState that checks a const's or a size's expression
CONST_NOTE = "consts, buffer and channel sizes and initialisers are computed at compile time"


@dataclass
class FnState:
    """What the checker knows about the function being checked."""

    name: str
    kind: str  # 'fn' | 'async' | 'task'
    ret: ir.Ty
    locals: dict[str, ir.Ty] = field(default_factory=dict)
    scopes: list[dict[str, str]] = field(default_factory=lambda: [{}])
    readonly: set[str] = field(default_factory=set)
    loops: int = 0  # enclosing loops inside the current parallel region
    parallel: int = 0  # scope depth where the enclosing parallel/bulk for began, 0 if none
    parallel_kind: str = "parallel"  # that loop's kind, 'parallel' or 'bulk', for messages
    async_depth: int = 0  # > 0 inside an async block
    sites: int = 0
    temps: int = 0
    loop_ids: int = 0
    flexible: dict[int, tuple[ast.Expr, bool]] = field(default_factory=dict)  # memo of flexible()
    run_time_indices: bool = False  # some buffer access has an index that is not a constant
    # Rust-style literal inference (see Retype): the types later uses gave to bindings, and
    # the locals whose type is still a literal's default, with their binding
    hints: dict[Binding, ir.Ty] = field(default_factory=dict)
    defaulted: dict[str, Binding] = field(default_factory=dict)
    # `let u = 3000000000;`: typed by the first wider type the literal fits until a use decides;
    # its E0204 for i32 stands unless some use needs that type (``decided``)
    provisional: dict[Binding, tuple[GasyncError, str]] = field(default_factory=dict)
    decided: set[Binding] = field(default_factory=set)

    def retype(self, e: ir.Expr, want: ir.Ty | None) -> None:
        """Raise Retype where ``e`` has its type from a defaulted local (itself, or the operand
        its arithmetic takes its type from) and ``want`` is another type of its kind."""
        if want is None:
            return
        if e.ty == want:
            if self.provisional and (found := self.source(e)) in self.provisional:
                self.decided.add(found)  # a use that needs the wider type decides it
            return
        binding = self.source(e)
        same_kind = (e.ty in ir.INTS and want in ir.INTS) or (e.ty in ir.FLOATS and want in ir.FLOATS)
        if binding is not None and same_kind and binding not in self.hints:
            raise Retype(binding, want)

    def source(self, e: ir.Expr) -> Binding | None:
        """The defaulted binding whose type ``e`` has: a local, or the operand of arithmetic,
        bitwise or unary operators (a shift's left one) that gives it its type."""
        while True:
            if isinstance(e, ir.Var):
                return self.defaulted.get(e.name)
            if isinstance(e, ir.Unary) and e.op in ("-", "~", "!"):
                e = e.operand
            elif isinstance(e, ir.Binary) and e.op in ("<<", ">>"):
                e = e.left
            elif isinstance(e, ir.Binary) and e.op in ("+", "-", "*", "/", "%", "&", "|", "^"):
                found = self.source(e.left)
                if found is not None:
                    return found
                e = e.right
            else:
                return None

    def fresh(self, user: str, ty: ir.Ty) -> str:
        name, k = user, 0
        while name in self.locals:
            k += 1
            name = f"{user}_{k}"
        self.locals[name] = ty
        return name

    def temp(self, ty: ir.Ty) -> str:
        self.temps += 1
        name = f"$t{self.temps}"
        self.locals[name] = ty
        return name

    def lookup(self, user: str) -> tuple[str, int] | None:
        for depth in range(len(self.scopes) - 1, -1, -1):
            if user in self.scopes[depth]:
                if self.scopes[depth][user] == POISONED:
                    raise DependentError(f"'{user}' has no value: the statement that binds it has an error")
                return self.scopes[depth][user], depth
        return None
