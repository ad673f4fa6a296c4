"""Random statements for the program generator: what a body may do, given where it is.

Determinism is kept by construction. Inside one task everything is
sequential; what several tasks (or several children of one ``join``) share
is only ever changed by commutative integer atomics (``fetch_add``,
``fetch_max``, ``fetch_min``, ``atomic_add`` ...) whose values are dropped,
each target only by operations that commute with each other (adds and subs on
``tot`` and ``acc``, maxes on ``hi`` and ``acc_max``, mins on ``lo`` and ``acc_min``).
Each task instance writes its own row of its own output buffers. An async
block that is a ``join`` child or a ``select`` arm may not assign the
locals around it (its siblings could run in any interleaving), nor touch
its task's private shared scalar. A ``select`` either has exactly one arm
that can ever complete, or starts with an arm that is ready on its first
poll. Waits are only on signals that root tasks set before anything else,
so they always end; channels are handled in programs.py. A group task's
scratch buffer (groups.py) is written only by its own warp, outside join
children and parallel bodies, and by a parallel loop that reads none of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from differential.exprs import BITS, FLOATS, INTS, SCRATCH, TYPES, Expr, ExprGen, Fn, Local
from hypothesis import strategies as st

PAR_WIDTH = 8  # columns of each task's par_<task> buffer, written one per parallel iteration


@dataclass(frozen=True)
class Shapes:
    """Which shapes the generator draws. Both flags are the shapes of bugs being fixed in main,
    off until the fix is merged so that the CI slice stays green meanwhile:
    ``bulk_joins``: a join of several futures that each run a bulk for (bug 1: only the last
    one's loop runs); ``nested_joins``: a join inside a join, and a join as a select arm
    (bug 2: NotImplementedError in the code generator)."""

    bulk_joins: bool = False
    nested_joins: bool = False


@dataclass
class TaskInfo:
    """What a task's body may use; ``slots``/``fslots`` count its out_/fout_ columns."""

    name: str
    count: int
    var: str  # the instance index in buffer rows: 'i', or '0' for a task without a range
    own_signal: str | None = None
    own_shared: str | None = None  # a shared i64 only this (single-instance) task touches
    slots: int = 0
    fslots: int = 0
    uses_par: bool = False


@dataclass(frozen=True)
class Ctx:
    where: str  # 'task' | 'async' | 'block'
    task: TaskInfo | None
    depth: int = 0
    floor: int = 0  # locals declared below this depth are read-only here
    loop: bool = False  # break / continue allowed
    parallel: bool = False  # inside a parallel or bulk loop's body
    concurrent: bool = False  # inside a join child or select arm: siblings may interleave
    ret: str | None = None  # the type an early `return` gives ('unit': none), None: no return here
    no_bulk: bool = False  # no future that runs a bulk for (a join has one already; in a group, none)
    repeats: bool = False  # inside a loop: may run more than once


@dataclass(frozen=True)
class Future:
    text: str
    ty: str  # 'unit' or a scalar type
    runs_bulk: bool = False
    is_join: bool = False
    ready_now: bool = False  # certain to complete on its first poll


@dataclass
class Counters:
    names: int = 0
    channels: list[str] = field(default_factory=list)  # private channel declarations
    suspends: int = 0  # suspending constructs drawn so far
    bulk: int = 0  # bulk loops drawn so far
    waits: list[str] = field(default_factory=list)  # the signals waited on so far


class BodyGen(ExprGen):
    """Statements and futures, as lines of text (indented by the caller's block)."""

    def __init__(self, draw: st.DrawFn, shapes: Shapes, roots: list[str]):
        super().__init__(draw)
        self.shapes = shapes
        self.roots = roots  # signals set first thing by root tasks
        self.asyncs: list[Fn] = []
        self.env: list[Local] = []
        self.budget = 0
        self.n = Counters()
        self.no_await = False  # drawing an async block that must complete on its first poll

    def fresh(self, prefix: str = "v") -> str:
        self.n.names += 1
        return f"{prefix}{self.n.names}"

    def declare(self, ty: str, ctx: Ctx, mutable: bool = True) -> str:
        name = self.fresh()
        self.env.append(Local(name, ty, ctx.depth, mutable))
        return name

    def e(self, ty: str, depth: int = 2) -> Expr:
        return self.expr(ty, self.env, depth)

    def writable(self, ctx: Ctx) -> list[Local]:
        return [v for v in self.env if v.mutable and v.depth >= ctx.floor]

    # ---- blocks ----
    def block(self, ctx: Ctx, n: int) -> list[str]:
        inner = replace(ctx, depth=ctx.depth + 1)
        mark = len(self.env)
        out: list[str] = []
        for _ in range(n):
            if self.budget <= 0:
                break
            self.budget -= 1
            out += self.stmt(inner)
        del self.env[mark:]
        return out

    def stmt(self, ctx: Ctx) -> list[str]:
        kinds = ["let", "let", "atomic"]
        kinds += ["assign"] * bool(self.writable(ctx))
        kinds += ["emit", "emit"] * (ctx.task is not None and not ctx.parallel)
        kinds += ["own"] * bool(ctx.task and ctx.task.own_shared and not ctx.concurrent and not ctx.parallel)
        kinds += ["local", "local"] * bool(self.scratch and not ctx.concurrent and not ctx.parallel)
        if ctx.depth < 4:
            kinds += ["if", "for"] + ["while"] * (not ctx.parallel)
        if not ctx.parallel and not self.no_await:
            kinds += ["await", "await", "await", "select"]
        if not ctx.parallel:
            kinds += ["parallel"] * (ctx.where != "block" and ctx.depth < 3)
        kinds += ["jump"] * ctx.loop
        kinds += ["early_return"] * (ctx.ret is not None and not ctx.parallel)
        return list(getattr(self, "_s_" + self.pick(kinds))(ctx))

    def _s_let(self, ctx: Ctx) -> list[str]:
        ty = self.pick(TYPES)
        value = self.e(ty)
        return [f"let {self.declare(ty, ctx)}: {ty} = {value.text};"]

    def _s_assign(self, ctx: Ctx) -> list[str]:
        v = self.draw(st.sampled_from(self.writable(ctx)))
        ops = ["="] + ["+=", "-=", "*="] * (v.ty != "bool") + ["^=", "|=", "<<="] * (v.ty in INTS)
        op = self.pick(ops)
        # a constant shift amount past the width is a compile error (decision 33)
        value = str(self.draw(st.integers(0, BITS[v.ty] - 1))) if op == "<<=" else self.e(v.ty).text
        return [f"{v.name} {op} {value};"]

    def _s_emit(self, ctx: Ctx) -> list[str]:
        assert ctx.task is not None
        ty = self.pick(TYPES)
        value = self.nonflex(ty, self.env, 2).text
        op = self.pick(("=", "+="))
        if ty in FLOATS:
            ctx.task.fslots += 1
            return [f"fout_{ctx.task.name}[{ctx.task.var}, {ctx.task.fslots - 1}] {op} ({value}) as f64;"]
        ctx.task.slots += 1
        return [f"out_{ctx.task.name}[{ctx.task.var}, {ctx.task.slots - 1}] {op} ({value}) as i64;"]

    def _s_atomic(self, ctx: Ctx) -> list[str]:
        kind = self.pick(("sum", "sub", "max", "min", "buf"))
        if kind == "buf":
            op = self.pick(("atomic_add", "atomic_sub", "atomic_max", "atomic_min"))
            index = self.nonflex(self.pick(INTS), self.env, 1).text
            # one buffer per family of operations that commute with each other: an add and
            # a min on one element give a result that depends on their order (found by a long run)
            buf = {"atomic_max": "acc_max", "atomic_min": "acc_min"}.get(op, "acc")
            return [f"{op}({buf}[(({index}) as u32) % 8], {self.e('i64').text});"]
        name, ty, op = {"sum": ("tot", "u64", "add"), "sub": ("tot", "u64", "sub"), "max": ("hi", "i32", "max")}.get(
            kind, ("lo", "i64", "min")
        )
        return [f"{name}.fetch_{op}({self.e(ty).text});"]

    def _s_own(self, ctx: Ctx) -> list[str]:
        assert ctx.task is not None and ctx.task.own_shared is not None
        own = ctx.task.own_shared
        form = self.pick(("store", "cas", "fetch_add", "load"))
        if form == "store":
            return [f"{own}.store({self.e('i64').text});"]
        call = {"cas": f"cas({self.e('i64', 1).text}, {self.e('i64', 1).text})", "fetch_add": "fetch_add(3)"}
        value = f"{own}.{call[form]}" if form in call else own
        return [f"let {self.declare('i64', ctx)}: i64 = {value};"]

    def _s_local(self, ctx: Ctx) -> list[str]:
        """A store into the group task's scratch row: one element, or a parallel loop's."""
        sc = self.scratch
        assert sc is not None
        if ctx.where == "block" or self.draw(st.booleans()):
            at = self.nonflex(self.pick(INTS), self.env, 1).text
            return [f"{sc.name}[{sc.row}, (({at}) as u32) % {SCRATCH}] = {self.e(sc.ty).text};"]
        var = self.fresh("j")
        self.env.append(Local(var, "i32", ctx.depth + 1, mutable=False))
        self.scratch = None  # its lanes write the row: none reads it
        value = self.e(sc.ty).text
        self.scratch = sc
        self.env.pop()
        self.n.suspends += 1
        width = self.draw(st.integers(1, SCRATCH))
        return [f"parallel for {var} in 0..{width} {{ {sc.name}[{sc.row}, {var}] = {value}; }}"]

    def _s_if(self, ctx: Ctx) -> list[str]:
        cond = self.e("bool").text
        out = [f"if {cond} {{", *indent(self.block(ctx, 2)), "}"]
        if self.draw(st.booleans()):
            out[-1] = "} else {"
            out += [*indent(self.block(ctx, 2)), "}"]
        return out

    def _s_for(self, ctx: Ctx) -> list[str]:
        var = self.fresh("k")
        hi = self.draw(st.integers(0, 3))
        inner = replace(ctx, loop=True, repeats=True)
        self.env.append(Local(var, "i32", ctx.depth + 1, mutable=False))
        body = self.block(inner, 3)
        self.env.pop()
        return [f"for {var} in 0..{hi} {{", *indent(body), "}"]

    def _s_while(self, ctx: Ctx) -> list[str]:
        count = self.fresh("c")
        limit = self.draw(st.integers(0, 3))
        inner = replace(ctx, loop=True, repeats=True)
        if self.draw(st.booleans()):
            head = [f"let {count}: i32 = 0;", f"while {count} < {limit} {{", f"    {count} += 1;"]
        else:
            head = [f"let {count}: i32 = 0;", "loop {", f"    if {count} >= {limit} {{ break; }}", f"    {count} += 1;"]
        return [*head, *indent(self.block(inner, 3)), "}"]

    def _s_jump(self, ctx: Ctx) -> list[str]:
        return [f"if {self.e('bool', 1).text} {{ {self.pick(('break', 'continue'))}; }}"]

    def _s_early_return(self, ctx: Ctx) -> list[str]:
        # not literals only: an async block's returns are first typed without a context
        value = "" if ctx.ret == "unit" else " " + self.nonflex(str(ctx.ret), self.env, 2).text
        return [f"if {self.e('bool', 1).text} {{ return{value}; }}"]

    def _s_parallel(self, ctx: Ctx) -> list[str]:
        kind = "parallel" if ctx.no_bulk else self.pick(("parallel", "bulk"))
        var = self.fresh("j")
        inner = replace(ctx, depth=ctx.depth + 1, floor=ctx.depth + 1, parallel=True, loop=False)
        self.env.append(Local(var, "i32", ctx.depth + 1, mutable=False))
        mark = len(self.env)
        body = self.block(inner, 2)
        value = self.nonflex("i64", self.env, 2).text
        if ctx.task is not None:
            ctx.task.uses_par = True
            body.append(f"par_{ctx.task.name}[{ctx.task.var}, {var}] += {value};")
        else:
            body.append(f"atomic_add(acc[{var} % 8], {value});")
        reducing = self.draw(st.booleans())
        if reducing:  # the v1 reduction: the body's tail is the iteration's value
            ty = self.pick(TYPES)
            # float sums depend on the order of the lanes and chunks: not drawn
            ops = (
                ("and", "or")
                if ty == "bool"
                else ("min", "max")
                if ty in FLOATS
                else ("sum", "min", "max", "and", "or")
            )
            op, tail = self.pick(ops), self.nonflex(ty, self.env, 2).text
        del self.env[mark - 1 :]
        self.n.suspends += 1
        self.n.bulk += kind == "bulk"
        width = self.draw(st.integers(0 if reducing else 1, PAR_WIDTH))  # 0: the identity
        if not reducing:
            return [f"{kind} for {var} in 0..{width} {{", *indent(body), "}"]
        name = self.declare(ty, ctx)
        seen = (  # the value, where the comparison sees it
            f"out_{ctx.task.name}[{ctx.task.var}, {self._slot(ctx)}] += ({name}) as i64;"
            if ctx.task is not None
            else f"atomic_add(acc[{width % 8}], ({name}) as i64);"
        )
        head = f"let {name}: {ty} = {kind} for {var} in 0..{width} reduce {op} {{"
        return [head, *indent(body), f"    {tail}", "};", seen]

    def _slot(self, ctx: Ctx) -> int:
        assert ctx.task is not None
        ctx.task.slots += 1
        return ctx.task.slots - 1


def indent(lines: list[str]) -> list[str]:
    """Each line (and each line inside a multi-line one) four spaces further in."""
    return ["    " + part for line in lines for part in line.split("\n")]
