"""``gasync compile --emit plan``: a Plan as readable, deterministic text.

Sections follow the Plan: data items, tasks in topological order, edges,
then each function's state machine and frame layout, and the device memory
that frames take. States are numbered as the spec describes a poll: 0 is the
start, each await point that can suspend is one state (in source order), and
the last is done. An await of a future that never suspends runs inline and
gets no state; it is listed as ``inline``.
"""

from __future__ import annotations

from gasync.planner import ir
from gasync.planner.model import FrameLayout, Function, GroupDef, Plan, TaskDef
from gasync.planner.walk import stmts_in


def format_plan(plan: Plan) -> str:
    """The whole plan as text, one section per kind of thing."""
    lines = [f"plan of {plan.path}"]
    lines += _section("consts", [f"{c.name}: {c.ty} = {_value(c.value)}" for c in plan.consts])
    lines += _section(
        "buffers",
        [
            f"{b.name}: {b.elem}[{', '.join(map(str, b.shape))}] = {_init(b.init, b.init_value)}  "
            f"({b.size * ir.BITS[b.elem] // 8} bytes)"
            for b in plan.buffers
        ],
    )
    lines += _section("shared", [f"{s.name}: {s.ty} = {_value(s.init)}" for s in plan.shared])
    lines += _section("signals", [s.name for s in plan.signals])
    lines += _section("channels", [f"{c.name}: {c.elem}[{c.capacity}]" for c in plan.channels])
    lines += _section(
        "externs",
        [f"{e.name}({_params(e.params)}) -> {e.ret} from {e.module}:{e.attr}" for e in plan.externs],
    )
    lines += _section("tasks (topological order)", [_task(t) for t in plan.tasks])
    if plan.groups:
        lines += _section("groups", [row for g in plan.groups for row in _group(g)])
    edges = [f"after: {u} -> {v}" for u, v in plan.edges]
    edges += [f"{f.kind} {f.name}: {f.src} -> {f.dst}" for f in plan.flows]
    lines += _section("edges", edges)
    for fn in [*plan.functions, *(t.body for t in plan.tasks)]:
        lines += ["", *_function(plan, fn)]
    lines += ["", "frame memory (bytes per frame x instances):"]
    for t in plan.tasks:
        lines.append(f"  {t.name}: {plan.frame(t.name).bytes} x {t.count} = {plan.task_frame_bytes(t)}")
    lines.append(f"  total: {plan.frame_bytes} bytes")
    return "\n".join(lines) + "\n"


def group_warps(g: GroupDef) -> str:
    """``4 warps``, ``1 warp``: what one instance of group ``g`` holds."""
    return f"{g.warps} warp{'' if g.warps == 1 else 's'}"


def each(g: GroupDef) -> str:
    """`` each`` after what one instance holds, where the group has a range (else it has one instance)."""
    return " each" if g.var is not None else ""


def _group(g: GroupDef) -> list[str]:
    head = f"{g.name} for {g.var}: {g.var_ty} in {g.start}..{g.stop}" if g.var else g.name
    rows = [f"{head}  instances {g.count}, {group_warps(g)} and {g.shared_bytes} bytes of shared memory{each(g)}"]
    rows.append(f"  tasks: {', '.join(g.tasks) or '-'}; after: {', '.join(g.after) or '-'}")
    rows += [f"  local buffer {b.name}: {b.elem}[{', '.join(map(str, b.shape))}]" for b in g.buffers]
    rows += [f"  local channel {c.name}: {c.elem}[{c.capacity}]" for c in g.channels]
    return rows


def _section(title: str, rows: list[str]) -> list[str]:
    return [f"{title}:", *(f"  {r}" for r in rows)] if rows else [f"{title}: none"]


def _value(v: int | float | bool | None) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v)


def _init(kind: str, value: int | float | bool | None) -> str:
    return f"{kind}({_value(value)})" if value is not None else kind


def _params(params: tuple[tuple[str, str], ...]) -> str:
    return ", ".join(f"{n}: {t}" for n, t in params)


def _task(t: TaskDef) -> str:
    head = f"#{t.index} {t.name}"
    if t.var is not None:
        head += f" for {t.var}: {t.var_ty} in {t.start}..{t.stop}"
    last = t.first_instance + t.count - 1
    inst = f"instances {t.first_instance}..={last} ({t.count})" if t.count else "no instances"
    return f"{head}  {inst}  after: {', '.join(t.after) or '-'}"


def _function(plan: Plan, fn: Function) -> list[str]:
    lines = [_signature(plan, fn)]
    if fn.kind == "fn":
        return lines
    lines += ["  states:", *_states(fn.body, "    ")]
    try:
        frame = plan.frame(fn.name)
    except KeyError:
        return [*lines, "  frame: none (never suspends; runs inside its caller's poll)"]
    return lines + _frame(frame)


def _signature(plan: Plan, fn: Function) -> str:
    if fn.kind == "task":
        t = next(t for t in plan.tasks if t.name == fn.name)
        over = f" for {t.var}: {t.var_ty} in {t.start}..{t.stop}" if t.var is not None else ""
        return f"task {fn.name}{over}  at {_at(fn)}"
    word = "async fn" if fn.kind == "async" else "fn"
    ret = f" -> {fn.ret}" if fn.ret != "unit" else ""
    return f"{word} {fn.name}({_params(fn.params)}){ret}  at {_at(fn)}"


def _states(body: tuple[ir.Stmt, ...], indent: str) -> list[str]:
    """start, one state per suspending await point of ``body``, done; an async block's
    own states are listed under the await of that block."""
    lines = [f"{indent}0 start"]
    state = 0
    for s in stmts_in(body, into_futures=False):
        if isinstance(s, ir.AwaitS) and not s.suspends:
            lines.append(f"{indent}- inline, site {s.site} at {_at(s)}: {describe(s.future)} (never suspends)")
            continue
        if isinstance(s, ir.AwaitS):
            what = describe(s.future)
        elif isinstance(s, ir.Select):
            what = "select { " + " | ".join(describe(a.future) for a in s.arms) + " }"
        elif isinstance(s, ir.ForAwait):
            what = f"for await {s.var} in {s.chan}"
        else:
            continue
        state += 1
        lines.append(f"{indent}{state} await, site {s.site} at {_at(s)}: {what}")
        for block in _async_blocks(s):
            lines += [f"{indent}  async block at {_at(block)}:", *_states(block.body, indent + "    ")]
    lines.append(f"{indent}{state + 1} done")
    return lines


def _async_blocks(s: ir.Stmt) -> list[ir.AsyncBlock]:
    """The async blocks an await point drives directly (alone, or in a join or select)."""
    futures: list[ir.Future] = []
    if isinstance(s, ir.AwaitS):
        futures = [s.future]
    elif isinstance(s, ir.Select):
        futures = [arm.future for arm in s.arms]
    out = []
    while futures:
        f = futures.pop(0)
        if isinstance(f, ir.Join):
            futures = [*f.futures, *futures]
        elif isinstance(f, ir.AsyncBlock):
            out.append(f)
    return out


def _at(node: Function | ir.Stmt | ir.Future) -> str:
    return f"{node.span.line}:{node.span.column}"


def describe(f: ir.Future) -> str:
    """A short source-like name for a future."""
    if isinstance(f, ir.AsyncCall):
        return f"{f.fn}(...)"
    if isinstance(f, ir.YieldNow):
        return "yield_now()"
    if isinstance(f, ir.Sleep):
        return "sleep(...)"
    if isinstance(f, ir.Send):
        return f"{f.chan}.send(...)"
    if isinstance(f, ir.Recv):
        return f"{f.chan}.recv()"
    if isinstance(f, ir.Wait):
        return f"{f.signal}.wait()"
    if isinstance(f, ir.Join):
        return "join(" + ", ".join(describe(s) for s in f.futures) + ")"
    return "async { ... }"


def _frame(fr: FrameLayout) -> list[str]:
    lines = [f"  frame: {fr.bytes} bytes ({fr.n_int} int words, {fr.n_float} float words)", "    int[0] state"]
    if fr.result is not None:
        lines.append(f"    {fr.result[0]}[{fr.result[1]}] result")
    lines += [f"    int[{w}] {name}" for name, w in fr.int_slots]
    lines += [f"    float[{w}] {name}" for name, w in fr.float_slots]
    lines += [f"    child of site {site} at int[{i}], float[{f}]" for site, i, f in fr.children]
    return lines


def source_name(fn: Function, name: str) -> str:
    """The name a local has in the program: the planner gives a shadowing local ``x_1`` (``x_2``,
    ...) when ``x`` is taken; diagrams and traces show ``x``. (A user's own ``x_1`` beside an
    ``x`` reads as ``x`` too: a diagram loses nothing by it.)"""
    user, sep, k = name.rpartition("_")
    taken = {n for n, _ in fn.locals}
    return user if sep and k.isdigit() and user in taken else name


def loop_text(fn: Function, s: ir.For) -> str:
    """What a ``parallel for`` or ``bulk for``'s state is called in traces and ``--states``
    (codegen names the state, viz/states.py finds it by this): ``line 27: bulk for i reduce min
    (waits for its chunks)``."""
    what = "bulk for" if s.kind == "bulk" else "parallel for"
    reducing = f" reduce {s.reduce.op}" if s.reduce is not None else ""
    tail = " (waits for its chunks)" if s.kind == "bulk" else ""
    return f"line {s.span.line}: {what} {source_name(fn, s.var)}{reducing}{tail}"
