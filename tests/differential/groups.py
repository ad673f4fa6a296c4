"""Groups for the program generator: ``group NAME for g in a..b { local ...; task ... }``.

One program in ``GROUP_ODDS`` holds one or two groups, each placed among the
ungrouped tasks: its ``after`` names earlier tasks, groups or a group's task,
and later ungrouped tasks may come ``after`` it or one of its tasks (a root
task that does so no longer sets a signal). A group has one to three
instances (``g`` over a range that need not start at 0, or no range) and one
to three tasks of one to three warps each (``for c in 0..C``; rarely, the
last of 8 to 16); ``g`` and ``c`` are locals of its tasks' bodies, which the
statements of bodies.py and futures.py fill, less what a group may not do or
what could hold its block for ever (decisions 50 and 54): no bulk for, not
even in an async fn it calls; no wait on a signal unless a task the group
comes after (so, done) set it; no global channel to or from another task (a
private one of a single-instance task is its own).

Local items, one copy per group instance (both groups use the same names):

- ``sc_<letter>: T[C, 8]``, a task's scratch: each warp's row is written only
  by that warp, outside join children and parallel bodies (bodies.py
  ``_s_local``), read by its expressions, and summed into its out row at the end.
- links (links.py): a local channel from a task to a later one or to itself,
  with the local buffer whose rows it hands over, if any.

Results: each warp's rows of out_/fout_/par_ are ``(g - a) * C + c``, and a
link's global buffers have a row for each group instance.
"""

from __future__ import annotations

from differential.bodies import Ctx, TaskInfo, indent
from differential.exprs import SCRATCH, TYPES, Scratch
from differential.futures import as_i64
from differential.links import GroupInfo, LinkGen
from hypothesis import strategies as st

GROUP_ODDS = 4  # one program in GROUP_ODDS holds groups
WIDE_ODDS = 16  # one group in WIDE_ODDS has a task of 8 to 16 warps (up to 22 in all, of 32)
LETTERS = "abc"


class GroupGen(LinkGen):
    def group_graph(self, tasks: list[TaskInfo], after: dict[str, list[str]]) -> list[GroupInfo]:
        self.groups: list[GroupInfo] = []
        if not self.draw(st.sampled_from([False] * (GROUP_ODDS - 1) + [True])):
            return self.groups
        pos = 0
        for k in range(self.draw(st.integers(1, 2))):
            pos = self.draw(st.integers(pos, len(tasks)))  # ungrouped tasks before it
            grp = self.group_shape(f"gr{k}")
            earlier = [t.name for t in tasks[:pos]] + [n for g in self.groups for n in (g.name, g.tasks[0].name)]
            grp.after = self.draw(st.lists(st.sampled_from(earlier), unique=True, max_size=2)) if earlier else []
            for t in tasks[pos:]:
                if self.draw(st.integers(0, 2)) == 0:
                    after[t.name].append(self.pick((grp.name, grp.name, grp.tasks[-1].name)))
                    t.own_signal = None  # a task waiting on it might be what the group waits for
            self.groups.append(grp)
        return self.groups

    def group_shape(self, name: str) -> GroupInfo:
        ranged = self.draw(st.integers(0, 3)) > 0
        count = self.draw(st.integers(1, 3)) if ranged else 1
        start = self.draw(st.sampled_from([0, 0, 2])) if ranged else 0
        copies = [self.draw(st.sampled_from([1, 1, 2, 3])) for _ in range(self.draw(st.integers(1, 3)))]
        if self.draw(st.sampled_from([False] * (WIDE_ODDS - 1) + [True])):  # slow on the simulator: rare
            copies[-1] = self.draw(st.integers(8, 16))
        grp = GroupInfo(name, count, start, ranged, copies)
        for letter, c in zip(LETTERS, copies, strict=False):
            row = grp.inst if c == 1 else "c" if grp.inst == "0" else f"{grp.inst} * {c} + c"
            t = TaskInfo(f"{name}{letter}", count * c, row)
            if t.count == 1:
                t.own_shared = f"own_{t.name}"
            grp.tasks.append(t)
        return grp

    def surely_set(self, grp: GroupInfo, after: dict[str, list[str]]) -> list[str]:
        """The signals of the tasks the group comes after, directly or not: set before it starts."""
        owner = {n: g for g in self.groups for n in (g.name, *(t.name for t in g.tasks))}
        seen: set[str] = set()
        todo = list(grp.after)
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo += owner[name].after if name in owner else after[name]
        return [s for s in self.roots if s.removeprefix("s_") in seen]

    def group(self, grp: GroupInfo, after: dict[str, list[str]]) -> str:
        saved, self.roots = self.roots, self.surely_set(grp, after)
        roles = self.links(grp)
        tasks = [self.group_task(grp, k, roles.get(k, [])) for k in range(len(grp.tasks))]
        self.roots = saved
        head = f"group {grp.name}" + (f" for g in {grp.start}..{grp.start + grp.count}" if grp.ranged else "")
        head += f" after {', '.join(grp.after)}" if grp.after else ""
        return "\n".join([head + " {", *indent([*grp.items, *tasks]), "}"])

    def group_task(self, grp: GroupInfo, k: int, roles: list[list[str]]) -> str:
        t, copies = grp.tasks[k], grp.copies[k]
        self.env = self.group_env(grp, copies)
        if self.draw(st.booleans()):
            self.scratch = Scratch(f"sc_{LETTERS[k]}", self.pick(TYPES), "c" if copies > 1 else "0")
            grp.items.append(f"local buffer {self.scratch.name}: {self.scratch.ty}[{copies}, {SCRATCH}];")
        ctx = Ctx("task", t, no_bulk=True)
        self.budget = self.draw(st.integers(2, 6))
        chunks = [self.block(ctx, 2) for _ in range(len(roles) + 1)]
        order = self.draw(st.permutations(list(range(len(roles)))))
        lines: list[str] = []
        for n, chunk in enumerate(chunks):
            lines += chunk + (roles[order[n]] if n < len(roles) else [])
        if self.scratch is not None:  # what the row holds at the end
            j, v = self.fresh("j"), self.fresh("v")
            item = as_i64(f"{self.scratch.name}[{self.scratch.row}, {j}]", self.scratch.ty)
            lines.append(f"let {v}: i64 = parallel for {j} in 0..{SCRATCH} reduce sum {{ {item} }};")
            lines += self.record(ctx, v, "i64")
        self.scratch, self.env = None, []
        head = f"task {t.name}" + (f" for c in 0..{copies}" if copies > 1 else "")
        return "\n".join([head + " {", *indent(lines), "}"])
