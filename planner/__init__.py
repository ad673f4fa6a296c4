"""Planner: resolve, type-check and graph a program; lay out frames; freeze a Plan.

``plan(program, options)`` runs, in order:

1. :class:`~gasync.planner.symbols.Symbols` -- the global namespace, with
   consts folded (``-D`` overrides applied) and data items sized;
2. the call graph (networkx): recursion is an error naming the cycle, and
   functions are checked callees first, so whether an async fn can suspend is
   known before its callers are checked;
3. every fn, async fn and task body is type-checked into await-normal IR
   (:mod:`gasync.planner.stmts`);
4. the task graph: ``after`` edges, topologically numbered (a cycle is an
   error naming it), with channel and signal edges for the program checks of
   :mod:`gasync.planner.checks`, then, for a program with no error, the
   unused items and locals (W0218, :mod:`gasync.planner.unused`);
5. frame layouts (:mod:`gasync.planner.frames`);
6. the accesses whose indices are proven in range, which need no run-time
   check (:mod:`gasync.planner.bounds`), then :func:`verify`.

Independent mistakes are collected and raised together as an ErrorGroup;
warnings travel in ``Plan.warnings``.
"""

from __future__ import annotations

import dataclasses

import networkx as nx

from gasync.dsl import ast
from gasync.dsl.diagnostics import ErrorGroup, GasyncError, Note
from gasync.dsl.gc_pause import paused_gc
from gasync.planner import bounds, graphs, groups, partial
from gasync.planner.checks import program_checks
from gasync.planner.deferred import defer_futures
from gasync.planner.effects import instance_ranges, transitive_effects
from gasync.planner.errors import (
    AfterCycleError,
    DependentError,
    NoTaskError,
    TypeMismatchError,
    UnknownNameError,
    a_or_an,
)
from gasync.planner.fnstate import POISONED
from gasync.planner.frames import layout
from gasync.planner.functions import check_function
from gasync.planner.model import Flow, FrameLayout, Function, Plan, PlanOptions, TaskDef
from gasync.planner.symbols import Symbols
from gasync.planner.unused import unused_warnings
from gasync.planner.verify import verify

__all__ = ["Plan", "PlanOptions", "plan", "verify"]


def plan(program: ast.Program, options: PlanOptions | None = None) -> Plan:
    """Check ``program`` and freeze it into a Plan; raise ErrorGroup on errors."""
    with paused_gc():  # many small objects, no cycles: see gasync.dsl.gc_pause
        errors: list[GasyncError] = []
        flat, group_asts = groups.flatten(program, errors)
        flat, unchecked = defer_futures(flat, errors)  # those items' bodies are not checked again
        try:
            result = _plan(flat, options or PlanOptions(), group_asts, errors, unchecked, program)
        except ErrorGroup as failed:
            relocated = groups.relocate_scope_errors(failed.errors, group_asts, program.source)
            raise ErrorGroup(groups.as_written(relocated, group_asts)) from None
        if not group_asts:
            return result
        return dataclasses.replace(result, warnings=tuple(groups.as_written(list(result.warnings), group_asts)))


def _plan(
    program: ast.Program,
    options: PlanOptions,
    group_asts: tuple[groups.GroupAst, ...],
    errors: list[GasyncError],
    unchecked: frozenset[str] = frozenset(),
    written: ast.Program | None = None,
) -> Plan:
    """Plan the flattened, future-deferred ``program``; ``written`` is it as the source wrote it
    (groups and deferred futures as they are), where unused items and locals are looked for."""
    syms = Symbols(program, dict(options.defines), errors)
    errors.extend(_no_task(program))
    order = {item.name: k for k, item in enumerate(program.items)}

    cg = graphs.call_graph(program)
    errors.extend(graphs.check_recursion(program, cg))  # the other checks go on: every frame is sized only later
    functions, suspends = _check_functions(program, syms, cg, order, errors, unchecked)
    tasks_ast = [i for i in program.items if isinstance(i, ast.Task) and syms.items.get(i.name) is i]
    ranges, owner = _group_ranges(syms, group_asts, errors)
    bodies = {}
    for t in tasks_ast:
        try:
            _check_after(syms, t, owner[t.name][0] if t.name in owner else None)
            if t.name not in unchecked:
                bodies[t.name] = _check_task(syms, t, suspends, owner.get(t.name))
        except ErrorGroup as group:
            errors.extend(group.errors)
        except GasyncError as exc:
            errors.append(exc)
    tg = graphs.task_graph(tasks_ast, set(bodies))
    try:
        topo = graphs.topo_tasks(tg, order, {t: own[0] for t, own in owner.items()})
    except GasyncError as exc:
        errors.append(exc)
        topo = []
    bulk = _bulk_spans(program, cg) if group_asts else {}
    if errors:
        errors += partial.independent_errors(program, syms, cg, functions, bodies, group_asts, ranges, bulk)
        raise ErrorGroup(_sorted(errors))

    tasks = _number_tasks(topo, bodies)
    local_names = {n for g in group_asts for n in (groups.qualified(g.item.name, m) for m in g.locals)}
    plan_groups = groups.group_defs(group_asts, tasks, syms.buffers, syms.channels, ranges)
    by_name = {a.item.name: a for a in group_asts}
    for g in plan_groups:
        errors.extend(groups.fit_errors(g, defines=groups.size_defines(syms, by_name[g.name])))
    for a in group_asts:
        errors.extend(groups.bulk_errors(a, bulk))
    if errors:  # a channel nobody uses is a mistake of its own
        errors += partial.unused_channels(program, syms, cg, functions, bodies)
        raise ErrorGroup(_sorted(errors))
    frames = _layouts(functions, tasks, suspends)
    effects = transitive_effects([*functions, *(t.body for t in tasks)], instance_ranges(tasks, plan_groups))
    graphs.add_flows(tg, effects)
    diags = program_checks(syms, tasks, effects, options.strict)
    errors.extend(d for d in diags if d.severity == "error")
    if errors:
        raise ErrorGroup(_sorted(errors))
    diags += unused_warnings(written or program, syms, options.defines)  # only where nothing failed
    functions, tasks = bounds.prove(functions, tasks, tuple(syms.buffers.values()), tuple(plan_groups))
    index = {t.name: t.index for t in tasks}
    result = Plan(
        path=program.path,
        source=program.source,
        consts=tuple(syms.consts[n] for n in sorted(syms.consts, key=order.__getitem__)),
        buffers=tuple(b for b in syms.buffers.values() if b.name not in local_names),
        shared=tuple(syms.shared.values()),
        signals=tuple(syms.signals.values()),
        channels=tuple(c for c in syms.channels.values() if c.name not in local_names),
        externs=tuple(syms.externs.values()),
        functions=tuple(functions),
        tasks=tuple(tasks),
        edges=tuple(sorted(graphs.after_graph(tg).edges, key=lambda e: (index[e[0]], index[e[1]]))),
        frames=tuple(frames),
        warnings=tuple(d for d in diags if d.severity != "error"),
        flows=tuple(Flow(*f) for f in sorted(_flows(tg))),
        groups=plan_groups,
    )
    verify(result)
    return result


def _no_task(program: ast.Program) -> list[GasyncError]:
    """A program runs its tasks and nothing else, so one without a task is a mistake."""
    if any(isinstance(item, ast.Task) for item in program.items):
        return []
    return [
        NoTaskError(
            "this program has no task, so nothing would run",
            ast.Span(1, 1, 1, 2),
            (Note("add a task, e.g. 'task main { ... }': a program runs its tasks and nothing else"),),
        )
    ]


def _flows(tg: nx.MultiDiGraph) -> list[tuple[str, str, str, str]]:
    """(kind, name, src, dst) of every channel and signal edge."""
    return [(d["kind"], d["name"], u, v) for u, v, d in tg.edges(data=True) if d["kind"] != "after"]


def _sorted(errors: list[GasyncError]) -> list[GasyncError]:
    """Errors in source order, without those that only repeat an earlier failure, and each
    one once (a check that two passes make gives its error once)."""
    primary = [e for e in errors if not isinstance(e, DependentError)] or errors
    seen: set[tuple[type, ast.Span, str]] = set()
    unique = []
    for e in primary:
        if (type(e), e.span, e.message) not in seen:
            seen.add((type(e), e.span, e.message))
            unique.append(e)
    return sorted(unique, key=lambda e: (e.span.line, e.span.column))


def _check_functions(
    program: ast.Program,
    syms: Symbols,
    cg: nx.DiGraph,
    order: dict[str, int],
    errors: list[GasyncError],
    unchecked: frozenset[str],
) -> tuple[list[Function], dict[str, bool]]:
    """Every fn and async fn, callees first; one that is not checked (its signature or its
    futures failed) or that failed is taken to suspend, which gives its callers no error."""
    suspends: dict[str, bool] = dict.fromkeys(graphs.recursive_names(cg), True)
    functions: list[Function] = []
    for name in graphs.callee_first(cg, order):
        item = syms.items.get(name)
        if not isinstance(item, ast.FnDef):
            continue
        if name in unchecked or name in syms.failed:
            suspends[name] = True
            continue
        try:
            fn = check_function(syms, item, lambda n: suspends.get(n, False), None)
        except (GasyncError, ErrorGroup) as exc:
            errors.extend(exc.errors if isinstance(exc, ErrorGroup) else [exc])
            suspends[name] = True
            continue
        suspends[name] = fn.suspends and fn.kind == "async"
        functions.append(fn)
    return functions, suspends


def _group_ranges(
    syms: Symbols, group_asts: tuple[groups.GroupAst, ...], errors: list[GasyncError]
) -> tuple[dict[str, tuple[str, int, int]], dict[str, tuple[str, str | None, str, int]]]:
    """Each group's (variable type, start, stop), and for each of its tasks (group, variable,
    its type, group instances)."""
    ranges: dict[str, tuple[str, int, int]] = {}
    owner: dict[str, tuple[str, str | None, str, int]] = {}
    for g in group_asts:
        try:
            ranges[g.item.name] = _range(syms, g.item.var, g.item.start, g.item.stop, g.item.span, "group")
        except GasyncError as exc:
            errors.append(exc)  # its tasks are still checked, its variable poisoned (no cascade)
            owner.update({t: (g.item.name, g.item.var, POISONED, 0) for t in g.tasks})
            continue
        ty, lo, hi = ranges[g.item.name]
        owner.update({t: (g.item.name, g.item.var, ty, max(0, hi - lo)) for t in g.tasks})
    return ranges, owner


def _range(
    syms: Symbols, var: str | None, start: ast.Expr | None, stop: ast.Expr | None, span: ast.Span, what: str
) -> tuple[str, int, int]:
    if var is None:
        return "i32", 0, 1
    assert start is not None and stop is not None
    lo, hi = syms.const_range(start, stop)
    if lo.ty != hi.ty or lo.ty not in ("i32", "i64", "u32", "u64"):
        raise TypeMismatchError(f"a {what} range needs two integers of one type, found {lo.ty}..{hi.ty}", span)
    return str(lo.ty), int(lo.value), int(hi.value)


def _bulk_spans(program: ast.Program, cg: nx.DiGraph) -> dict[str, tuple[ast.Span, str | None]]:
    """The first ``bulk for`` each task body runs, its callees' included, and the async fn it is
    in (None: the task's own body)."""
    fns = {i.name: i for i in program.items if isinstance(i, ast.FnDef)}

    def own(body: ast.Block) -> ast.Span | None:
        return next((n.span for n in graphs.ast_nodes(body) if isinstance(n, ast.For) and n.kind == "bulk"), None)

    out: dict[str, tuple[ast.Span, str | None]] = {}
    for t in (i for i in program.items if isinstance(i, ast.Task)):
        found = own(t.body)
        if found is not None:
            out[t.name] = (found, None)
            continue
        called = {n.func for n in graphs.ast_nodes(t.body) if isinstance(n, ast.Call) and n.func in fns}
        for name in sorted(called | {d for c in called for d in nx.descendants(cg, c)}):
            if (span := own(fns[name].body)) is not None:
                out[t.name] = (span, name)
                break
    return out


def _check_task(
    syms: Symbols, t: ast.Task, suspends: dict[str, bool], group: tuple[str, str | None, str, int] | None = None
) -> TaskDef:
    var_ty, start, stop = _range(syms, t.var, t.start, t.stop, t.span, "task")
    extra = ((group[1], group[2]),) if group is not None and group[1] is not None else ()
    body = check_function(syms, t, lambda n: suspends.get(n, False), (t.var, var_ty) if t.var else None, extra)
    after = tuple(dict.fromkeys(p.id for p in t.after))
    if group is None:
        return TaskDef(t.name, 0, t.var, var_ty, start, stop, after, body, 0, t.span)
    return TaskDef(t.name, 0, t.var, var_ty, start, stop, after, body, 0, t.span, group[0], group[3])


def _check_after(syms: Symbols, t: ast.Task, group: str | None = None) -> None:
    """The names in ``t``'s ``after``: tasks, and not ``t`` (a task of ``group``: not the group)."""
    for pred in t.after:
        kind = syms.kind(pred.id)
        if kind is None:
            raise UnknownNameError(f"cannot find task '{pred.id}' named in 'after'", pred.span)
        if kind != "task":
            raise TypeMismatchError(f"'after' names tasks; '{pred.id}' is {a_or_an(kind)}", pred.span)
        if pred.id == t.name:
            name = t.name if group is None else f"group {group}"  # (`group g after g`: the user wrote g)
            raise AfterCycleError(f"cycle in 'after' edges: {name} -> {name}", pred.span)


def _number_tasks(topo: list[str], bodies: dict[str, TaskDef]) -> list[TaskDef]:
    out = []
    first = 0
    for k, name in enumerate(topo):
        t = bodies[name]
        out.append(dataclasses.replace(t, index=k, first_instance=first))
        first += t.count
    return out


def _layouts(functions: list[Function], tasks: list[TaskDef], suspends: dict[str, bool]) -> list[FrameLayout]:
    frames: dict[str, FrameLayout] = {}
    for fn in functions:
        if fn.kind == "async" and suspends[fn.name]:
            frames[fn.name] = layout(fn, frames, suspends)
    for t in tasks:
        frames[t.name] = layout(t.body, frames, suspends)
    return list(frames.values())
