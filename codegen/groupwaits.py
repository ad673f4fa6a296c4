"""How a group instance's pinned warps tell that they are stuck (codegen/groupkernel.py).

``local_wait_<g>`` says what a pending task instance of group ``g`` waits on, where that is one
of the group's own local channels (alone, or every future of a join or select); ``view_<g>``
sums the local channels' words, and ``stuck_<g>`` tells whether every live warp of the instance
waits at the same view: no local channel can change then, so the instance is deadlocked
(runtime/state.py, groups; docs/language.md, decision 53).
"""

from __future__ import annotations

from gasync.codegen import groups, pinned
from gasync.codegen.machine import Shared
from gasync.planner import ir
from gasync.planner.model import GroupDef, Plan, TaskDef
from gasync.planner.walk import stmts_in


def local_waits(plan: Plan, g: GroupDef, t: TaskDef) -> dict[int, tuple[bool, tuple[int, ...]]] | None:
    """For a task of ``g``, each await site that waits on g's local channels alone (one, or all
    the futures of a join or select): whether it is a join, and each future's channel and side
    (2 * its index in g.channels, + 1 for a send). A site that awaits anything else (a global
    channel, a signal, a sleep, a call) is left out: only the deadline ends a wait there that
    never completes. None for a task without a local site."""
    index = {c.name: k for k, c in enumerate(g.channels)}

    def code(fut: ir.Future) -> int | None:
        """A local channel operation's number (a join's: its first future's, where all are)."""
        if isinstance(fut, ir.Send | ir.Recv):
            return 2 * index[fut.chan] + (1 if isinstance(fut, ir.Send) else 0) if fut.chan in index else None
        if isinstance(fut, ir.Join):
            codes = [code(sub) for sub in fut.futures]
            return None if not codes or None in codes else codes[0]
        return None

    out: dict[int, tuple[bool, tuple[int, ...]]] = {}
    for s in stmts_in(t.body.body):
        if isinstance(s, ir.For) and s.kind == "bulk":
            return None
        futures: tuple[ir.Future, ...] = ()
        if isinstance(s, ir.ForAwait):
            if s.chan in index:
                out[s.site] = (False, (2 * index[s.chan],))
        elif isinstance(s, ir.AwaitS) and s.suspends:
            futures = s.future.futures if isinstance(s.future, ir.Join) else (s.future,)
        elif isinstance(s, ir.Select):
            futures = tuple(a.future for a in s.arms)
        if futures:
            codes = tuple(code(f) for f in futures)
            if None in codes:
                continue
            joined = isinstance(s, ir.AwaitS) and isinstance(s.future, ir.Join)
            out[s.site] = (joined, tuple(c for c in codes if c is not None))
    return out or None


def local_wait(shared: Shared, g: GroupDef) -> list[str]:
    """``local_wait_<g>(inst, G)``: what a pending task instance of ``g`` waits on, as
    local_waits numbers it (a join: its first future not done yet, from its done mask), or -1
    (it may wait on something outside the group)."""
    plan = shared.plan
    out = ["@cuda.jit(device=True)", f"def local_wait_{g.name}(inst, G):"]
    for t in [t for t in plan.tasks if t.group == g.name]:
        waits = local_waits(plan, g, t)
        end = t.first_instance + t.count
        if waits is None:
            out += [f"    if inst < {end}:  # task {t.name}: it awaits no local channel alone", "        return -1"]
            continue
        base = pinned.frame_bases(shared, g, t)[0]
        children = {site: ci for site, ci, _ in shared.frames[t.body.name].children}
        out.append(f"    if inst < {end}:  # task {t.name}")
        out.append(f"        s = G.frames.FI[{base}]")
        for site, (joined, codes) in sorted(waits.items()):
            out.append(f"        if s == {site}:")
            if joined:
                out.append(f"            m = G.frames.FI[{base} + {children[site]}]  # the join's done mask")
                out += [f"            if (m >> {k}) & 1 == 0:\n                return {c}" for k, c in enumerate(codes)]
            out.append(f"            return {codes[0]}")
        out.append("        return -1")
    out.append("    return -1")
    return out


def stuck(g: GroupDef) -> list[str]:
    view = " + ".join(f"dgroups.lch_view(L.ch_{groups.item(c.name)}, {c.capacity})" for c in g.channels) or "0"
    return [
        "@cuda.jit(device=True)",
        f"def view_{g.name}(L):",
        "    # what the instance's waiters wait for, on each of its local channels: it rises at",
        "    # every step one waits for and never falls (runtime/devicegroups.py lch_view)",
        f"    return int64({view})",
        "",
        "",
        "@cuda.jit(device=True)",
        f"def stuck_{g.name}(GW, L):",
        "    # every warp of the instance not done found its local channel not ready at this view:",
        "    # none of them can ever make another ready (runtime/state.py, groups)",
        f"    v = view_{g.name}(L)",
        "    live = 0",
        f"    for j in range({g.warps}):",
        "        e = ordr.ld_acquire_cta(GW, j)",
        "        if e == -2:",
        "            continue",
        "        if e != v:",
        "            return False",
        "        live += 1",
        "    return live > 0",
    ]
