"""Random futures for the program generator: awaits, joins, selects, async blocks, private channels.

``join`` children are *concurrent* (their async blocks may not assign the
locals around them). A ``select`` has exactly one arm that can ever
complete (the others wait on the signal ``never`` or the channel
``nowhere``, which nothing feeds), or it starts with an arm that is ready on
its first poll, so the arms after it are never polled. A task with one
instance may also use a private channel: filled and then received by a
``select`` (where a losing ``recv`` must take nothing), or fed and drained by
two children of one ``join`` with a small capacity, so that the sender waits
on a full channel. Where ``roots`` is narrowed (a group's task), an async fn
is called only if every signal it waits on is among them.
"""

from __future__ import annotations

from dataclasses import replace

from differential.bodies import BodyGen, Ctx, Future, indent
from differential.exprs import FLOATS, TYPES, Fn
from hypothesis import strategies as st

NEVER = (Future("never.wait()", "unit"), Future("nowhere.recv()", "i32"))


class FutureGen(BodyGen):
    # ---- statements ----
    def _s_await(self, ctx: Ctx) -> list[str]:
        form = self.pick(("value", "unit", "join", "join", "inline", "private"))
        if form == "private" and ctx.task is not None and ctx.task.count == 1 and ctx.where != "async":
            return self.private_channel(ctx)
        if form in ("value", "inline"):
            rets = [f.ret for f in self.callable(ctx) if f.ret != "unit"]
            ty = self.pick(rets) if rets and self.draw(st.booleans()) else self.pick(TYPES)  # calls, often
            fut = self.value_future(ctx, ty, concurrent=False)
            if form == "inline" and ty != "bool":
                value = f"{fut.text}.await {self.pick(('+', '-', '*'))} {self.e(ty, 1).text}"
            else:
                value = f"{fut.text}.await"
            return [f"let {self.declare(ty, ctx)}: {ty} = {value};"]
        if form == "unit":
            return [f"{self.unit_future(ctx, concurrent=False).text}.await;"]
        return self.join_stmt(ctx)

    def join_stmt(self, ctx: Ctx) -> list[str]:
        fut, children = self.join(ctx, self.draw(st.integers(2, 3)))
        if self.draw(st.booleans()):
            return [f"{fut.text}.await;"]
        names = []
        for child in children:
            if child.ty == "unit" or child.is_join or self.draw(st.integers(0, 4)) == 0:
                names.append("_")
            else:
                names.append(self.declare(child.ty, ctx))
        return [f"let ({', '.join(names)}) = {fut.text}.await;"]

    def _s_select(self, ctx: Ctx) -> list[str]:
        if self.draw(st.booleans()):
            first = self.ready_future(ctx)
            rest = [self.any_future(ctx) for _ in range(self.draw(st.integers(1, 2)))]
            arms = [first, *rest]
        else:
            losers = [self.draw(st.sampled_from(NEVER)) for _ in range(self.draw(st.integers(1, 2)))]
            arms = self.draw(st.permutations([self.any_future(ctx), *losers]))
        out = ["select {"]
        for arm in arms:
            out += indent(self.arm(ctx, arm))
        return [*out, "}"]

    def arm(self, ctx: Ctx, fut: Future) -> list[str]:
        mark = len(self.env)
        bind = fut.ty not in ("unit", "tuple") and self.draw(st.booleans())
        binding = self.declare(fut.ty, replace(ctx, depth=ctx.depth + 1)) if bind else "_"
        body = self.block(ctx, 2)
        del self.env[mark:]
        return [f"{binding} = {fut.text} => {{", *indent(body), "}"]

    # ---- futures ----
    def callable(self, ctx: Ctx) -> list[Fn]:
        """The async fns a call here may name: no bulk for where none may run, no wait on a
        signal that is not surely set."""
        return [f for f in self.asyncs if not (ctx.no_bulk and f.runs_bulk) and set(f.waits) <= set(self.roots)]

    def any_future(self, ctx: Ctx) -> Future:
        if self.shapes.nested_joins and self.draw(st.integers(0, 4)) == 0:
            return self.join(ctx, 2)[0]  # known bug (2): a join as a select arm
        if self.draw(st.booleans()):
            return self.unit_future(ctx, concurrent=False)
        return self.value_future(ctx, self.pick(TYPES), concurrent=False)

    def value_future(self, ctx: Ctx, ty: str, concurrent: bool) -> Future:
        calls = [f for f in self.callable(ctx) if f.ret == ty]
        if calls and self.draw(st.booleans()):
            return self.async_call(ctx, self.draw(st.sampled_from(calls)))
        return self.async_block(ctx, ty, concurrent)

    def unit_future(self, ctx: Ctx, concurrent: bool) -> Future:
        kinds = ["yield", "sleep", "block"] + ["signal"] * bool(self.roots)
        units = [f for f in self.callable(ctx) if f.ret == "unit"]
        kinds += ["call", "call"] * bool(units)
        kind = self.pick(kinds)
        if kind == "yield":
            self.n.suspends += 1
            return Future("yield_now()", "unit")
        if kind == "sleep":
            self.n.suspends += 1
            return Future(f"sleep({self.draw(st.integers(0, 3000))})", "unit")
        if kind == "signal":
            self.n.suspends += 1
            self.n.waits.append(self.pick(self.roots))
            return Future(f"{self.n.waits[-1]}.wait()", "unit")
        if kind == "call":
            return self.async_call(ctx, self.draw(st.sampled_from(units)))
        return self.async_block(ctx, "unit", concurrent)

    def async_call(self, ctx: Ctx, fn: Fn) -> Future:
        args = ", ".join(self.e(p).text for p in fn.params)
        self.n.bulk += fn.runs_bulk
        self.n.suspends += fn.suspends
        self.n.waits += fn.waits
        return Future(f"{fn.name}({args})", fn.ret, runs_bulk=fn.runs_bulk, ready_now=not fn.suspends)

    def ready_future(self, ctx: Ctx) -> Future:
        """A future certain to complete on its first poll."""
        ready = [f for f in self.asyncs if not f.suspends]
        if ctx.task is not None and ctx.task.own_signal and self.draw(st.booleans()):
            return Future(f"{ctx.task.own_signal}.wait()", "unit", ready_now=True)
        if ready and self.draw(st.booleans()):
            return self.async_call(ctx, self.draw(st.sampled_from(ready)))
        return self.async_block(replace(ctx, loop=False), self.pick((*TYPES, "unit")), False, no_await=True)

    def async_block(self, ctx: Ctx, ty: str, concurrent: bool, no_await: bool = False) -> Future:
        inner = replace(
            ctx,
            where="block",
            floor=ctx.depth + 1 if concurrent else ctx.floor,
            concurrent=ctx.concurrent or concurrent,
            loop=False,
            ret=ty,
        )
        before = (self.n.bulk, self.n.suspends)
        saved, self.no_await = self.no_await, self.no_await or no_await
        mark = len(self.env)
        body = self.block(inner, self.draw(st.integers(0, 3)))
        if ty != "unit":  # the tail decides the block's type: it must not be literals only
            body.append(self.nonflex(ty, self.env, 2).text)
        del self.env[mark:]
        self.no_await = saved
        runs_bulk, suspends = self.n.bulk > before[0], self.n.suspends > before[1]
        text = "async {" + "".join("\n" + line for line in indent(body)) + ("\n}" if body else " }")
        return Future(text, ty, runs_bulk=runs_bulk, ready_now=not suspends)

    def join(self, ctx: Ctx, k: int) -> tuple[Future, list[Future]]:
        children: list[Future] = []
        for _ in range(k):
            bulk_taken = any(c.runs_bulk for c in children) and not self.shapes.bulk_joins
            cctx = replace(ctx, no_bulk=ctx.no_bulk or bulk_taken)
            if self.shapes.nested_joins and self.draw(st.integers(0, 5)) == 0:
                children.append(self.join(cctx, 2)[0])  # known bug (2): a join inside a join
                continue
            bulky = [f for f in self.callable(cctx) if f.runs_bulk]
            if self.shapes.bulk_joins and bulky and self.draw(st.booleans()):
                children.append(self.async_call(cctx, self.draw(st.sampled_from(bulky))))  # known bug (1)
                continue
            ty = self.pick((*TYPES, *["unit"] * 5))
            children.append(self.unit_future(cctx, True) if ty == "unit" else self.value_future(cctx, ty, True))
        runs_bulk = any(c.runs_bulk for c in children)
        text = f"join({', '.join(c.text for c in children)})"
        return Future(text, "tuple", runs_bulk=runs_bulk, is_join=True), children

    # ---- a channel private to one single-instance task ----
    def private_channel(self, ctx: Ctx) -> list[str]:
        ty = self.pick(TYPES)
        name = f"pc{len(self.n.channels)}"
        n = self.draw(st.integers(1, 4))
        cap = self.draw(st.integers(1, 3))
        self.n.channels.append(f"channel {name}: {ty}[{cap}];")
        self.n.suspends += 1
        if self.draw(st.booleans()):
            return self.prefilled_select(ctx, name, ty)
        closed = not ctx.repeats and self.draw(st.booleans())  # a second time round it would stay closed
        k = self.fresh("k")
        send = [f"for {k} in 0..{n} {{ {name}.send({sent_value(k, ty)}).await; }}"]
        if closed:
            send += [f"{name}.close();"] + [f"{name}.send({self.e(ty, 1).text}).await;"] * self.draw(st.booleans())
        h, v = self.fresh("h"), self.fresh("v")
        take = f"{h} = {h} * 31 + {as_i64(v, ty)};"
        if closed and self.draw(st.booleans()):
            recv = [f"for await {v} in {name} {{ {take} }}"]
        else:
            recv = [f"for {self.fresh('k')} in 0..{n} {{ let {v}: {ty} = {name}.recv().await; {take} }}"]
        producer = "async {" + "".join("\n    " + line for line in send) + "\n}"
        consumer = "\n".join([f"async {{\n    let {h}: i64 = 0;", *indent(recv), f"    {h}\n}}"])
        parts = [producer, consumer] if self.draw(st.booleans()) else [consumer, producer]
        got = self.declare("i64", ctx)
        names = [got if p is consumer else "_" for p in parts]
        return [f"let ({', '.join(names)}) = join({', '.join(parts)}).await;", *self.record(ctx, got, "i64")]

    def prefilled_select(self, ctx: Ctx, name: str, ty: str) -> list[str]:
        """Send one value, then select: the recv wins against `never`, or loses to a ready arm
        and the value is still there for the recv after the select."""
        out = [f"{name}.send({self.e(ty, 1).text}).await;"]
        if self.draw(st.booleans()):
            start = self.e(ty, 0).text
            got = self.declare(ty, ctx)
            out += [f"let {got}: {ty} = {start};", "select {"]
            out += [f"    x = {name}.recv() => {{ {got} = x; }}", "    _ = never.wait() => { }", "}"]
        else:
            first = self.ready_future(ctx)
            out += ["select {", *indent(self.arm(ctx, first)), f"    _ = {name}.recv() => {{ }}", "}"]
            got = self.declare(ty, ctx)
            out += [f"let {got}: {ty} = {name}.recv().await;"]
        return out + self.record(ctx, got, ty)

    def record(self, ctx: Ctx, name: str, ty: str) -> list[str]:
        if ctx.task is None:
            return []
        if ty in FLOATS:
            ctx.task.fslots += 1
            return [f"fout_{ctx.task.name}[{ctx.task.var}, {ctx.task.fslots - 1}] = {name} as f64;"]
        ctx.task.slots += 1
        return [f"out_{ctx.task.name}[{ctx.task.var}, {ctx.task.slots - 1}] = {name} as i64;"]


def sent_value(k: str, ty: str) -> str:
    """The k-th value a producer sends, distinct for each k."""
    if ty == "bool":
        return f"{k} % 2 == 1"
    if ty in FLOATS:
        return f"({k} as {ty}) * 0.75 - 1.0"
    return f"({k} as {ty}) * 3 + 1"


def as_i64(v: str, ty: str) -> str:
    return f"(({v} as f64) * 8.0) as i64" if ty in FLOATS else f"({v} as i64)"
