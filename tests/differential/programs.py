"""A Hypothesis strategy of random well-typed ``.gasync`` programs whose result does not depend on timing.

``programs(shapes)`` draws a :class:`Program`: its text (the whole compiler
runs on it, from the parser on) and the arrays of its ``input`` buffers.
A program has plain fns and async fns (each calling only those drawn before
it, so there is no recursion), one to four tasks (task arrays among them)
with ``after`` edges from earlier tasks to later ones, and bodies drawn by
:mod:`differential.bodies` and :mod:`differential.futures`; about one
program in four also holds one or two groups (:mod:`differential.groups`).

Channels between tasks join one single-instance producer to one later
single-instance consumer, with their sends and receives at the top level of
the two bodies, so both sides know how many values pass. Either the channel
holds them all (the sends never wait, so no cycle of waits can form), or the
consumer is *dedicated*: it starts at once (no ``after``) and waits on no
other task's channel, so a small capacity cannot deadlock. Root tasks (no
``after``) set their signal first thing; every task may wait on those.

A channel between task arrays (``shared_channel``) has many senders or many
receivers; its receivers fold what they get into a sum and a count, so the
result does not depend on which instance took which value. A *counted* channel
(``counted_channel``) has a loader task of its own whose values the receivers
compute from tickets (codegen/counted.py).

Deadlock-freedom and determinism are by construction; the differential test
checks both (a deadlock or a difference is a failure).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from differential.bodies import Ctx, Shapes, TaskInfo, indent
from differential.exprs import FLOATS, INPUT_LEN, TAME, TYPES, Fn, Local
from differential.futures import as_i64, sent_value
from differential.groups import GroupGen
from hypothesis import strategies as st

from gasync.runtime.buffers import DTYPES

# The shapes of the two bugs being fixed in main (see Shapes): flip each to True once its fix
# is merged, and the CI slice draws it too (scripts/differential.py --known-bugs draws both).
BULK_JOINS_FIXED = True
NESTED_JOINS_FIXED = True
DEFAULT_SHAPES = Shapes(bulk_joins=BULK_JOINS_FIXED, nested_joins=NESTED_JOINS_FIXED)
ALL_SHAPES = Shapes(bulk_joins=True, nested_joins=True)
PRELUDE = [
    "buffer acc: i64[8] = zeros;",
    "buffer acc_max: i64[8] = zeros;",
    "buffer acc_min: i64[8] = zeros;",
    "buffer knobs: i32[1] = zeros;",
    "shared tot: u64 = 0;",
    "shared hi: i32 = -2147483648;",
    "shared lo: i64 = 9223372036854775807;",
    "signal never;",
    "channel nowhere: i32[1];",
    # the channel nobody feeds (a select arm that never wins) needs a sender and a receiver
    "task dead { if knobs[0] == 1 { nowhere.send(0).await; let z = nowhere.recv().await; } }",
    *TAME.values(),
]


@dataclass(frozen=True)
class Program:
    text: str
    inputs: dict[str, np.ndarray] = field(default_factory=dict)


@dataclass
class Role:
    """A top-level obligation in a task body: sending or receiving a channel's values."""

    lines: list[str]


class ProgramGen(GroupGen):
    def program(self) -> Program:
        items, inputs = self.input_buffers()
        tasks, after = self.task_graph()
        groups = self.group_graph(tasks, after)  # groups.py: none in most programs
        self.roots = [t.own_signal for t in tasks if t.own_signal]
        for _ in range(self.draw(st.integers(0, 2))):
            items.append(self.plain_fn())
        for _ in range(self.draw(st.integers(0, 3))):
            items.append(self.async_fn())
        roles = self.channels(tasks, after, items)
        for t in tasks:
            items.append(self.task(t, after[t.name], roles.get(t.name, [])))
        items += [self.group(g, after) for g in groups]
        items += self.n.channels + self.outputs([*tasks, *(t for g in groups for t in g.tasks)])
        items += [b for g in groups for b in g.outputs]
        return Program("\n".join([*PRELUDE, *items]) + "\n", inputs)

    def input_buffers(self) -> tuple[list[str], dict[str, np.ndarray]]:
        items, inputs = [], {}
        for ty in TYPES:
            init = self.pick(("zeros", "iota", "random", "fill", "input"))
            if init == "random":
                init = f"random({self.draw(st.integers(0, 99))})"
            elif init == "fill":
                init = f"fill({self.literal(ty).text})"
            elif init == "input":
                inputs[f"in_{ty}"] = self.input_array(ty)
            items.append(f"buffer in_{ty}: {ty}[{INPUT_LEN}] = {init};")
        return items, inputs

    def input_array(self, ty: str) -> np.ndarray:
        if ty in FLOATS:
            values: st.SearchStrategy[object] = st.floats(-100, 100, width=32)
        elif ty == "bool":
            values = st.booleans()
        else:
            info = np.iinfo(DTYPES[ty])
            values = st.one_of(st.integers(-50 if info.min else 0, 50), st.sampled_from([int(info.min), int(info.max)]))
        return np.array(self.draw(st.lists(values, min_size=INPUT_LEN, max_size=INPUT_LEN)), DTYPES[ty])

    def task_graph(self) -> tuple[list[TaskInfo], dict[str, list[str]]]:
        tasks: list[TaskInfo] = []
        after: dict[str, list[str]] = {}
        for k in range(self.draw(st.integers(1, 4))):
            count = self.draw(st.sampled_from([1, 1, 2, 3]))
            ranged = count > 1 or self.draw(st.booleans())
            t = TaskInfo(f"t{k}", count, "i" if ranged else "0")
            earlier = [p.name for p in tasks]
            after[t.name] = self.draw(st.lists(st.sampled_from(earlier), unique=True, max_size=2)) if earlier else []
            if not after[t.name]:
                t.own_signal = f"s_{t.name}"
            if count == 1:
                t.own_shared = f"own_{t.name}"
            tasks.append(t)
        return tasks, after

    def plain_fn(self) -> str:
        name = f"pf{len(self.plain)}"
        params = tuple(self.pick(TYPES) for _ in range(self.draw(st.integers(1, 2))))
        ret = self.pick(TYPES)
        self.env = [Local(f"p{k}", ty, 0, False) for k, ty in enumerate(params)]
        lines = []
        if self.draw(st.booleans()):
            lines.append(f"if {self.e('bool', 1).text} {{ return {self.e(ret).text}; }}")
        lines.append(f"return {self.e(ret).text};")
        self.env = []
        self.plain.append(Fn(name, params, ret, suspends=False))
        sig = ", ".join(f"p{k}: {ty}" for k, ty in enumerate(params))
        return "\n".join([f"fn {name}({sig}) -> {ret} {{", *indent(lines), "}"])

    def async_fn(self) -> str:
        name = f"af{len(self.asyncs)}"
        params = tuple(self.pick(TYPES) for _ in range(self.draw(st.integers(0, 2))))
        ret = self.pick((*TYPES, "unit"))
        self.env = [Local(f"p{k}", ty, 0, False) for k, ty in enumerate(params)]
        before = (self.n.bulk, self.n.suspends, len(self.n.waits))
        self.budget = self.draw(st.integers(1, 4))
        ctx = Ctx("async", None, ret=ret)
        body = self._s_parallel(ctx) if self.draw(st.integers(0, 2)) == 0 else []  # parallel work to join
        body += self.block(ctx, 4)
        if ret != "unit":
            body.append(f"return {self.e(ret).text};")
        self.env = []
        waits = tuple(self.n.waits[before[2] :])
        fn = Fn(name, params, ret, runs_bulk=self.n.bulk > before[0], suspends=self.n.suspends > before[1], waits=waits)
        self.asyncs.append(fn)
        sig = ", ".join(f"p{k}: {ty}" for k, ty in enumerate(params))
        arrow = "" if ret == "unit" else f" -> {ret}"
        return "\n".join([f"async fn {name}({sig}){arrow} {{", *indent(body), "}"])

    def channels(self, tasks: list[TaskInfo], after: dict[str, list[str]], items: list[str]) -> dict[str, list[Role]]:
        roles: dict[str, list[Role]] = {}
        single = [t for t in tasks if t.count == 1]
        dedicated: set[str] = set()
        for c in range(self.draw(st.sampled_from([0, 1, 1, 2]))):
            pairs = [(p, q) for p in single for q in single if int(p.name[1:]) < int(q.name[1:])]
            pairs = [(p, q) for p, q in pairs if q.name not in dedicated]
            if not pairs:
                break
            p, q = self.draw(st.sampled_from(pairs))
            n = self.draw(st.integers(1, 5))
            small = not after[q.name] and not roles.get(q.name) and n > 1 and self.draw(st.booleans())
            cap = self.draw(st.integers(1, n - 1)) if small else self.draw(st.integers(n, n + 2))
            if small:
                dedicated.add(q.name)
            ty = self.pick(TYPES)
            name = f"ch{c}"
            items.append(f"channel {name}: {ty}[{cap}];")
            closed = self.draw(st.booleans())
            roles.setdefault(p.name, []).append(Role(self.sends(name, ty, n, closed)))
            roles.setdefault(q.name, []).append(Role(self.receives(q, name, ty, n, closed)))
        if self.draw(st.integers(0, 2)) == 0:
            self.shared_channel(tasks, after, items, roles, dedicated)
        if self.draw(st.integers(0, 3)) == 0:
            self.counted_channel(tasks, items, roles)
        return roles

    def counted_channel(self, tasks: list[TaskInfo], items: list[str], roles: dict[str, list[Role]]) -> None:
        """A counted channel (codegen/counted.py: its receivers compute its values from tickets):
        a loader task of its own, whose whole body is a loop of sends of arithmetic of the loop's
        variable and a close, with no ``after`` edge either way; a receiving task (an array or
        not) whose ``for await`` adds what it takes into ``got_chc`` (a sum and a count). The
        loader needs nothing from any task, so no capacity can deadlock."""
        q = self.draw(st.sampled_from(tasks))
        lo, n, cap = self.draw(st.integers(-3, 3)), self.draw(st.integers(0, 6)), self.draw(st.integers(1, 4))
        ty = self.pick(TYPES)
        k, v = self.fresh("k"), self.fresh("v")
        items.append(f"channel chc: {ty}[{cap}];")
        items.append("buffer got_chc: i64[2] = zeros;")
        loop = f"for {k} in {lo}..{lo + n} {{ chc.send({sent_value(k, ty)}).await; }}"
        items.append("\n".join(["task ldc {", *indent([loop, "chc.close();"]), "}"]))
        take = f"atomic_add(got_chc[0], {as_i64(v, ty)}); atomic_add(got_chc[1], 1);"
        roles.setdefault(q.name, []).append(Role([f"for await {v} in chc {{ {take} }}"]))

    def shared_channel(
        self,
        tasks: list[TaskInfo],
        after: dict[str, list[str]],
        items: list[str],
        roles: dict[str, list[Role]],
        dedicated: set[str],
    ) -> None:
        """A channel between task arrays (many senders, many receivers, or both): each of
        P sender instances sends Q * m values and each of Q receiver instances takes P * m,
        and the receivers add what they get into ``got_<chan>`` (a sum and a count, which do
        not depend on which instance took which value). As for one-to-one channels, either
        the ring holds every value, or the receivers are dedicated (no ``after``, no other
        channel), so a small ring cannot deadlock."""
        pairs = [
            (p, q)
            for p in tasks
            for q in tasks
            if int(p.name[1:]) < int(q.name[1:]) and (p.count > 1 or q.count > 1) and q.name not in dedicated
        ]
        if not pairs:
            return
        p, q = self.draw(st.sampled_from(pairs))
        m = self.draw(st.integers(1, 3))
        total = p.count * q.count * m
        small = not after[q.name] and not roles.get(q.name) and total > 1 and self.draw(st.booleans())
        cap = self.draw(st.integers(1, total - 1)) if small else self.draw(st.integers(total, total + 2))
        if small:
            dedicated.add(q.name)
        ty = self.pick(TYPES)
        name = "chm"
        items.append(f"channel {name}: {ty}[{cap}];")
        items.append(f"buffer got_{name}: i64[2] = zeros;")
        k, v = self.fresh("k"), self.fresh("v")
        send = f"for {k} in 0..{q.count * m} {{ {name}.send({sent_value(f'({k} + {p.var} * 7)', ty)}).await; }}"
        take = f"atomic_add(got_{name}[0], {as_i64(v, ty)}); atomic_add(got_{name}[1], 1);"
        if self.draw(st.booleans()):
            recv = [f"for {k} in 0..{p.count * m} {{ let {v}: {ty} = {name}.recv().await; {take} }}"]
        else:
            arms = self.draw(st.permutations([f"{v} = {name}.recv() => {{ {take} }}", "_ = never.wait() => { }"]))
            recv = [f"for {k} in 0..{p.count * m} {{", "    select {", *indent(indent(arms)), "    }", "}"]
        roles.setdefault(p.name, []).append(Role([send]))
        roles.setdefault(q.name, []).append(Role(recv))

    def sends(self, chan: str, ty: str, n: int, closed: bool) -> list[str]:
        k = self.fresh("k")
        lines = [f"for {k} in 0..{n} {{ {chan}.send({sent_value(k, ty)}).await; }}"]
        if closed:
            lines.append(f"{chan}.close();")
            if self.draw(st.booleans()):
                lines.append(f"{chan}.send({sent_value('7', ty) if ty != 'bool' else 'true'}).await;  // dropped")
        return lines

    def receives(self, task: TaskInfo, chan: str, ty: str, n: int, closed: bool) -> list[str]:
        task.slots += 1
        slot = f"out_{task.name}[{task.var}, {task.slots - 1}]"
        v = self.fresh("v")
        take = f"{slot} = {slot} * 31 + {as_i64(v, ty)};"
        form = self.pick(("for_await", "for_await", "recv", "select") if closed else ("recv", "select"))
        if form == "for_await":
            return [f"for await {v} in {chan} {{ {take} }}"]
        k = self.fresh("k")
        if form == "recv":
            return [f"for {k} in 0..{n} {{ let {v}: {ty} = {chan}.recv().await; {take} }}"]
        arms = [f"{v} = {chan}.recv() => {{ {take} }}", "_ = never.wait() => { }"]
        arms = self.draw(st.permutations(arms))
        return [f"for {k} in 0..{n} {{", "    select {", *indent(indent(arms)), "    }", "}"]

    def task(self, t: TaskInfo, after: list[str], roles: list[Role]) -> str:
        self.env = []
        ctx = Ctx("task", t)
        lines = [f"{t.own_signal}.set();"] if t.own_signal else []
        self.set_signals = ["never", *([t.own_signal] if t.own_signal else [])]
        self.budget = self.draw(st.integers(2, 8))
        chunks = [self.block(ctx, 2) for _ in range(len(roles) + 1)]
        order = self.draw(st.permutations(list(range(len(roles)))))
        for k, chunk in enumerate(chunks):
            lines += chunk
            if k < len(roles):
                lines += roles[order[k]].lines
        header = f"task {t.name}" + (f" for i in 0..{t.count}" if t.var == "i" else "")
        header += f" after {', '.join(after)}" if after else ""
        self.set_signals = ["never"]
        return "\n".join([header + " {", *indent(lines), "}"])

    def outputs(self, tasks: list[TaskInfo]) -> list[str]:
        out = []
        for t in tasks:
            out.append(f"buffer out_{t.name}: i64[{t.count}, {max(1, t.slots)}] = zeros;")
            out.append(f"buffer fout_{t.name}: f64[{t.count}, {max(1, t.fslots)}] = zeros;")
            if t.uses_par:
                out.append(f"buffer par_{t.name}: i64[{t.count}, 8] = zeros;")
            if t.own_signal:
                out.append(f"signal {t.own_signal};")
            if t.own_shared:
                out.append(f"shared {t.own_shared}: i64 = 0;")
        return out


@st.composite
def programs(draw: st.DrawFn, shapes: Shapes = DEFAULT_SHAPES) -> Program:
    """A random program whose buffers and shared scalars do not depend on timing."""
    return ProgramGen(draw, shapes, []).program()


__all__ = ["ALL_SHAPES", "DEFAULT_SHAPES", "Program", "Shapes", "programs"]
