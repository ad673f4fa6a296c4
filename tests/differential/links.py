"""Links for the program generator's groups (groups.py): local channels, and the local
buffers they hand over, from one task of a group instance to a later one, or to itself.

Three kinds: ``msg`` passes values over a local channel; ``slots``: each
producer warp writes a row of a local buffer, then sends its index, and the
consumer reads the row after the receive (each row is written once, so no two
warps ever race on it); ``ring``, the spec's double buffer: the producer takes
a stage from ``free``, writes it and its round, sends it on ``full``, and the
consumer hands it back once read (so it is written again only after that).
A consumer may copy each row it takes to a global buffer, at the instance's
row and the row's index or round. As between ungrouped tasks, a channel
either holds all its values or its consumer is dedicated (that link is its
only one); a ring's always is. Links go from a task to a later one, so the
waits form no cycle; a link to itself is the two children of one join, and
needs a single-warp task (its warps would share the channel).

What the consumer takes is folded into an i64: into its out row, or, where
several warps send or take (which one takes which value is not fixed), by
atomics into a sum and a count in the instance's row of ``got_<group>``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from differential.bodies import TaskInfo, indent
from differential.exprs import INTS, TYPES, Local
from differential.futures import FutureGen, as_i64, sent_value
from hypothesis import strategies as st

WIDTHS = (1, 2, 3, 4, 8)  # elements in a row of a link's local buffer


@dataclass
class GroupInfo:
    name: str
    count: int  # instances
    start: int  # of the range, where it has one
    ranged: bool
    copies: list[int]  # warps of each task
    tasks: list[TaskInfo] = field(default_factory=list)
    after: list[str] = field(default_factory=list)
    items: list[str] = field(default_factory=list)  # local buffers and channels
    copies_out: list[str] = field(default_factory=list)  # global buffers that rows are copied to
    got: int = 0  # columns of got_<group>

    @property
    def inst(self) -> str:
        """The group instance, as a row index from 0."""
        return "0" if not self.ranged else f"(g - {self.start})" if self.start else "g"

    @property
    def outputs(self) -> list[str]:
        got = [f"buffer got_{self.name}: i64[{self.count}, {self.got}] = zeros;"] * bool(self.got)
        return self.copies_out + got


@dataclass(frozen=True)
class Link:
    """A local channel's two sides: each producer warp sends ``sends`` values, each consumer
    warp takes ``takes``; ``inside``: both in one warp, in a join's two async blocks."""

    name: str
    ty: str
    sends: int
    takes: int
    closed: bool
    inside: bool


@dataclass(frozen=True)
class Rows:
    """A link's local buffer ``name: ty[rows, width]`` (``[rows]`` for a width of 1); ``out``:
    the start of the global buffer element the consumer copies the rows it takes to."""

    name: str
    ty: str
    width: int
    out: str | None

    def at(self, row: str, j: str) -> str:
        return f"{self.name}[{row}]" if self.width == 1 else f"{self.name}[{row}, {j}]"


class LinkGen(FutureGen):
    def group_env(self, grp: GroupInfo, copies: int) -> list[Local]:
        env = [Local("g", "i32", 0, mutable=False)] if grp.ranged else []
        return env + ([Local("c", "i32", 0, mutable=False)] if copies > 1 else [])

    def links(self, grp: GroupInfo) -> dict[int, list[list[str]]]:
        roles: dict[int, list[list[str]]] = {}
        dedicated: set[int] = set()
        cs = grp.copies
        for m in range(self.draw(st.sampled_from([0, 1, 1, 2]))):
            ends = [(p, q) for p in range(len(cs)) for q in range(p + 1, len(cs)) if q not in dedicated]
            ends += [(p, p) for p in range(len(cs)) if cs[p] == 1 and (not ends or self.draw(st.integers(0, 3)) == 0)]
            if not ends:
                break
            p, q = self.draw(st.sampled_from(ends))
            kind = self.pick(("msg", "slots") + ("ring", "ring") * (p < q and cs[p] == 1 and not roles.get(q)))
            per = self.draw(st.integers(1, 3))
            total = cs[p] * cs[q] * per
            small = kind == "ring" or (p < q and not roles.get(q) and self.draw(st.booleans()))
            if small:
                dedicated.add(q)
            cap = self.draw(st.integers(1, total - 1) if small and total > 1 else st.integers(total, total + 2))
            ty = self.pick(TYPES if kind == "msg" else INTS)
            link = Link(f"lc{m}", ty, cs[q] * per, cs[p] * per, cs[p] == 1 and self.draw(st.booleans()), p == q)
            fold = self.fold(grp, grp.tasks[q], link, cs[p] > 1 or cs[q] > 1)
            if kind == "ring":
                send, take = self.ring(grp, link, m, min(cap, 2), fold)
            else:
                grp.items.append(f"local channel {link.name}: {ty}[{cap}];")
                send, take = self.slots(grp, link, m, cs[p], fold) if kind == "slots" else self.msg(link, cs[p], fold)
            if p < q:
                roles.setdefault(p, []).append(send)
                roles.setdefault(q, []).append(take)
            else:
                roles.setdefault(p, []).append(self.inside(grp.tasks[p], send, take))
        return roles

    def fold(self, grp: GroupInfo, q: TaskInfo, link: Link, shared: bool) -> Callable[[str], list[str]]:
        """How the consumer keeps an i64 it took: in its out row, or, where which warp takes
        which value is not fixed, a sum and a count in got_<group>."""
        if link.inside:
            return lambda v: [f"h = h * 31 + {v};"]
        if shared:
            grp.got += 2
            total, count = (f"got_{grp.name}[{grp.inst}, {col}]" for col in (grp.got - 2, grp.got - 1))
            return lambda v: [f"atomic_add({total}, {v}); atomic_add({count}, 1);"]
        q.slots += 1
        slot = f"out_{q.name}[{q.var}, {q.slots - 1}]"
        return lambda v: [f"{slot} = {slot} * 31 + {v};"]

    def msg(self, link: Link, producers: int, fold: Callable[[str], list[str]]) -> tuple[list[str], list[str]]:
        k = self.fresh("k")
        at = k if producers == 1 else f"({k} + c * 7)"
        send = [f"for {k} in 0..{link.sends} {{ {link.name}.send({sent_value(at, link.ty)}).await; }}"]
        return send + self.close(link), self.consume(link, lambda v: fold(as_i64(v, link.ty)))

    def slots(
        self, grp: GroupInfo, link: Link, m: int, producers: int, fold: Callable[[str], list[str]]
    ) -> tuple[list[str], list[str]]:
        """Each producer warp writes its rows, sending each one's index once written."""
        rows = self.rows(grp, f"st{m}", producers * link.sends, producers * link.sends)
        k = self.fresh("k")
        row = k if producers == 1 else f"c * {link.sends} + {k}"
        self.env = [*self.group_env(grp, producers), Local(k, "i32", 1, mutable=False)]
        body = [*self.fill(rows, row, link.inside), f"{link.name}.send(({row}) as {link.ty}).await;"]
        self.env = []
        send = [f"for {k} in 0..{link.sends} {{", *indent(body), "}", *self.close(link)]
        return send, self.consume(link, lambda v: self.read(rows, v, v, link.inside, fold))

    def ring(
        self, grp: GroupInfo, link: Link, m: int, stages: int, fold: Callable[[str], list[str]]
    ) -> tuple[list[str], list[str]]:
        """The spec's double buffer: stages go round from ``free`` to ``full`` and back."""
        rows, full, free, rounds = self.rows(grp, f"rs{m}", stages, link.sends), f"full{m}", f"free{m}", f"ro{m}"
        grp.items += [f"local buffer {rounds}: i64[{stages}];", f"local channel {free}: i32[{stages}];"]
        grp.items += [f"local channel {full}: i32[{self.draw(st.integers(1, stages))}];"]
        k, s = self.fresh("k"), self.fresh("s")
        self.env = [*self.group_env(grp, 1), Local(k, "i32", 1, mutable=False)]
        fill = self.fill(rows, s, False)  # the values depend on the round, not on the stage
        self.env = []
        loop = [f"let {s}: i32 = {free}.recv().await;", f"{rounds}[{s}] = {k} as i64;", *fill]
        send = [f"for {s} in 0..{stages} {{ {free}.send({s}).await; }}", f"for {k} in 0..{link.sends} {{"]
        send += [*indent([*loop, f"{full}.send({s}).await;"]), "}"]
        send += self.close(Link(full, "i32", 0, 0, link.closed, False))

        def take(v: str) -> list[str]:
            got = self.read(rows, v, f"{rounds}[{v}]", False, lambda x: fold(f"{x} + {rounds}[{v}] * 1000"))
            return [*got, f"{free}.send({v}).await;"]

        return send, self.consume(Link(full, "i32", 0, link.takes, link.closed, False), take)

    def inside(self, t: TaskInfo, send: list[str], take: list[str]) -> list[str]:
        """Both sides in one warp: the two async blocks of a join."""
        producer = "\n".join(["async {", *indent(send), "}"])
        consumer = "\n".join(["async {", "    let h: i64 = 0;", *indent(take), "    h", "}"])
        got = self.fresh("v")
        both = self.draw(st.permutations([producer, consumer]))
        names = ", ".join(got if b is consumer else "_" for b in both)
        t.slots += 1
        return [f"let ({names}) = join({', '.join(both)}).await;", f"out_{t.name}[{t.var}, {t.slots - 1}] = {got};"]

    def close(self, link: Link) -> list[str]:
        if not link.closed:
            return []
        dropped = f"{link.name}.send({sent_value('5', link.ty)}).await;  // dropped"
        return [f"{link.name}.close();"] + [dropped] * self.draw(st.booleans())

    def consume(self, link: Link, take: Callable[[str], list[str]]) -> list[str]:
        v = self.fresh("v")
        body = take(v)
        form = self.pick(("for_await", "for_await", "recv", "select") if link.closed else ("recv", "select"))
        if form == "for_await":
            return [f"for await {v} in {link.name} {{", *indent(body), "}"]
        k = self.fresh("k")
        if form == "recv":
            body = [f"let {v}: {link.ty} = {link.name}.recv().await;", *body]
            return [f"for {k} in 0..{link.takes} {{", *indent(body), "}"]
        arms = self.draw(
            st.permutations([[f"{v} = {link.name}.recv() => {{", *indent(body), "}"], ["_ = never.wait() => { }"]])
        )
        return [f"for {k} in 0..{link.takes} {{", "    select {", *indent(indent(arms[0] + arms[1])), "    }", "}"]

    def rows(self, grp: GroupInfo, name: str, count: int, places: int) -> Rows:
        """A link's local buffer of ``count`` rows, and (or not) a global one of ``places`` rows
        for each instance, that the consumer copies each row it takes to."""
        ty, width = self.pick(TYPES), self.draw(st.sampled_from(WIDTHS))
        grp.items.append(f"local buffer {name}: {ty}[{count}{'' if width == 1 else f', {width}'}];")
        if not self.draw(st.sampled_from([True, True, False])):
            return Rows(name, ty, width, None)
        grp.copies_out.append(f"buffer {grp.name}_{name}: {ty}[{grp.count}, {places * width}] = zeros;")
        return Rows(name, ty, width, f"{grp.name}_{name}[{grp.inst}, ")

    def fill(self, rows: Rows, row: str, in_block: bool) -> list[str]:
        """Write a row: values of the producer's locals, or the input buffer's first elements."""
        if rows.width == 1 and self.draw(st.booleans()):
            return [f"{rows.at(row, '0')} = {self.e(rows.ty).text};"]
        j = self.fresh("j")
        self.env.append(Local(j, "i32", 2, mutable=False))
        value = f"in_{rows.ty}[{j}]" if self.draw(st.booleans()) else self.e(rows.ty).text
        self.env.pop()
        loop = "for" if in_block or self.draw(st.booleans()) else "parallel for"
        return [f"{loop} {j} in 0..{rows.width} {{ {rows.at(row, j)} = {value}; }}"]

    def read(self, rows: Rows, row: str, place: str, in_block: bool, fold: Callable[[str], list[str]]) -> list[str]:
        """Copy a row out (to ``place``), and fold one of its elements or their parallel sum."""
        j, loop = self.fresh("j"), "for" if in_block else "parallel for"
        copy = [f"{rows.out}({place} as i32) * {rows.width} + {j}] = {rows.at(row, j)};"] if rows.out else []
        out = [f"{loop} {j} in 0..{rows.width} {{ {line} }}" for line in copy]
        if in_block or rows.width == 1 or self.draw(st.booleans()):
            return out + fold(as_i64(rows.at(row, str(self.draw(st.integers(0, rows.width - 1)))), rows.ty))
        r, item = self.fresh("r"), as_i64(rows.at(row, j), rows.ty)
        return [*out, f"let {r}: i64 = parallel for {j} in 0..{rows.width} reduce sum {{ {item} }};", *fold(r)]
