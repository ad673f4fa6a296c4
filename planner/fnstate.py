"""What the checker knows about the function it checks: its locals, scopes and counters."""

from __future__ import annotations

from dataclasses import dataclass, field

from gasync.dsl import ast
from gasync.planner import ir
from gasync.planner.errors import DependentError

POISONED = "$poisoned"  # what a name is bound to after the statement binding it failed (planner/recovery.py)


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
    async_depth: int = 0  # > 0 inside an async block
    sites: int = 0
    temps: int = 0
    loop_ids: int = 0
    flexible: dict[int, tuple[ast.Expr, bool]] = field(default_factory=dict)  # memo of flexible()
    run_time_indices: bool = False  # some buffer access has an index that is not a constant

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
