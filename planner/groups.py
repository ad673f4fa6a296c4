"""Groups (v1): tasks that share one SM, with local buffers and channels.

The planner sees a group through :func:`flatten`: each group's tasks become
ordinary tasks of the program, its local buffers and channels become items
named ``GROUP.NAME`` (a dot no identifier holds, so they never meet a global
and a message about one names its group), and every use of a local name inside
the group's tasks is renamed to match. ``after G`` becomes ``after`` every task
of G; a group's own ``after`` is given to each of its tasks. What stays of the
group (its range, its variable, which tasks and locals it holds) is a
:class:`GroupAst`, which :func:`group_defs` turns into the Plan's ``GroupDef``
and checks against the block and the device (``fit_errors``). A use of a local
name outside its group is a located E0220 (:func:`relocate_scope_errors`).
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from typing import Any

from gasync.dsl import ast
from gasync.dsl.diagnostics import GasyncError, Note
from gasync.planner import ir
from gasync.planner.errors import DuplicateNameError, GroupFitError, GroupRuleError, LocalScopeError, UnknownNameError
from gasync.planner.model import BufferDef, ChannelDef, GroupDef, TaskDef
from gasync.planner.symbols import Symbols, define_note

MAX_GROUP_WARPS = 32  # a CUDA block holds at most 1024 threads
# The H200's (and H100's) usable shared memory per block, with the opt-in carve-out:
# 227 KiB (gpu-notes.md); the limit when no device is known.
H200_SHARED_PER_BLOCK = 227 * 1024
H200_REGISTERS_PER_BLOCK = 64 * 1024
LOCAL_CHANNEL_WORDS = 4  # send, recv, closed, spare: runtime/state.py's LCH_WORDS
RENAMED_FIELDS = ("id", "name", "var", "binding")


def qualified(group: str, name: str) -> str:
    return f"{group}.{name}"


@dataclass(frozen=True)
class GroupAst:
    """What flattening keeps of one group."""

    item: ast.Group
    tasks: tuple[str, ...]
    locals: dict[str, ast.LocalBuffer | ast.LocalChannel]  # by the name the source uses


def flatten(program: ast.Program, errors: list[GasyncError]) -> tuple[ast.Program, tuple[GroupAst, ...]]:
    """``program`` with every group's members as items of their own (see the module's text)."""
    groups = [i for i in program.items if isinstance(i, ast.Group)]
    if not groups:
        return program, ()
    members = {g.name: tuple(t.name for t in g.tasks) for g in groups}
    items: list[ast.Item] = []
    kept: list[GroupAst] = []
    for item in program.items:
        if isinstance(item, ast.Task):
            items.append(dataclasses.replace(item, after=_expand(item.after, members)))
        elif isinstance(item, ast.Group):
            locs = _locals(item, errors)
            kept.append(GroupAst(item, members[item.name], locs))
            items.append(item)  # keeps its name in the one namespace
            items += _members(item, locs, members, errors)
        else:
            items.append(item)
    return dataclasses.replace(program, items=tuple(items)), tuple(kept)


def _expand(after: tuple[ast.Name, ...], members: dict[str, tuple[str, ...]]) -> tuple[ast.Name, ...]:
    out: list[ast.Name] = []
    for ref in after:
        out += [ast.Name(t, ref.span) for t in members[ref.id]] if ref.id in members else [ref]
    return tuple(out)


def _locals(group: ast.Group, errors: list[GasyncError]) -> dict[str, ast.LocalBuffer | ast.LocalChannel]:
    out: dict[str, ast.LocalBuffer | ast.LocalChannel] = {}
    for m in group.locals:
        if m.name in out:
            first = out[m.name].span
            errors.append(
                DuplicateNameError(
                    f"group '{group.name}' defines the local name '{m.name}' more than once",
                    m.span,
                    (Note(f"'{m.name}' was first defined here", first),),
                )
            )
            continue
        out[m.name] = m
        errors += _var_clash(group, m)
    return out


def _var_clash(group: ast.Group, m: ast.LocalBuffer | ast.LocalChannel) -> list[GasyncError]:
    """E0203 for a local item named as the group's variable or a task's instance variable: every
    use of the name in the group's tasks means the item (it is renamed so), and the variable
    could not be read there; a ``let`` may not shadow a local item either."""
    kind = "buffer" if isinstance(m, ast.LocalBuffer) else "channel"
    owners = [f"group '{group.name}'"] if m.name == group.var else []
    owners += [f"task '{t.name}'" for t in group.tasks if t.var == m.name]
    return [
        DuplicateNameError(
            f"local {kind} '{m.name}' of group '{group.name}' has the name of the variable of {owner}",
            m.span,
            (Note(f"in the group's tasks '{m.name}' would name only the {kind}: rename one of them"),),
        )
        for owner in owners
    ]


def _members(
    group: ast.Group,
    locs: dict[str, ast.LocalBuffer | ast.LocalChannel],
    members: dict[str, tuple[str, ...]],
    errors: list[GasyncError],
) -> list[ast.Item]:
    out: list[ast.Item] = []
    for m in locs.values():
        name = qualified(group.name, m.name)
        if isinstance(m, ast.LocalBuffer):
            out.append(ast.Buffer(name, m.type, ast.BufferInit("zeros", None, m.span), m.span))
        else:
            out.append(ast.Channel(name, m.elem, m.capacity, m.span))
    renames = {n: qualified(group.name, n) for n in locs}
    own = {t.name for t in group.tasks}
    for task in group.tasks:
        if task.after:
            first = task.after[0].id
            note = (
                f"'{first}' is a task of group '{group.name}' too: let '{task.name}' wait for it on a local"
                " channel ('.recv().await' what it sends when done)"
                if first in own
                else f"give 'after' to the group: 'group {group.name} ... after {first} {{'"
            )
            errors.append(
                GroupRuleError(
                    f"task '{task.name}' of group '{group.name}' cannot have 'after': the tasks of a group"
                    " instance start together",
                    task.after[0].span,
                    (Note(note),),
                )
            )
        if group.var is not None and task.var == group.var:
            errors.append(
                DuplicateNameError(
                    f"task '{task.name}' names its instance variable '{task.var}', as group '{group.name}' does",
                    task.span,
                )
            )
        body = _rename(task.body, renames)
        out.append(dataclasses.replace(task, after=_expand(group.after, members), body=body))
    return out


def _rename(node: Any, renames: dict[str, str]) -> Any:
    """``node`` with every identifier in ``renames`` replaced, bindings included, so that a
    local variable that shadows a local item still shadows it."""
    if isinstance(node, tuple):
        return tuple(_rename(x, renames) for x in node)
    if not dataclasses.is_dataclass(node) or isinstance(node, type | ast.Span | ast.ScalarType):
        return node
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if isinstance(value, str) and f.name in RENAMED_FIELDS and value in renames:
            changes[f.name] = renames[value]
        elif isinstance(value, tuple) and value and all(isinstance(v, str | None) for v in value):
            if f.name == "names":
                changes[f.name] = tuple(renames.get(v, v) if v else v for v in value)
        elif isinstance(value, tuple) or dataclasses.is_dataclass(value):
            new = _rename(value, renames)
            if new is not value:
                changes[f.name] = new
    return dataclasses.replace(node, **changes) if changes else node


def relocate_scope_errors(errors: list[GasyncError], groups: tuple[GroupAst, ...], source: str) -> list[GasyncError]:
    """A name that is not found outside its group but is a local item of one: E0220, naming it."""
    owners: dict[str, tuple[GroupAst, ast.LocalBuffer | ast.LocalChannel]] = {}
    for g in groups:
        for local_name, m in g.locals.items():
            owners.setdefault(local_name, (g, m))
    if not owners:
        return errors
    lines = source.splitlines()
    out: list[GasyncError] = []
    for e in errors:
        name = _name_at(lines, e.span) if isinstance(e, UnknownNameError) else None
        if name is not None and name in owners:
            g, m = owners[name]
            kind = "buffer" if isinstance(m, ast.LocalBuffer) else "channel"
            e = LocalScopeError(
                f"'{name}' is a local {kind} of group '{g.item.name}': it is visible only inside that group",
                e.span,
                (Note(f"'{name}' is defined here, in group '{g.item.name}'", m.span),),
            )
        out.append(e)
    return out


def as_written(errors: list[GasyncError], groups: tuple[GroupAst, ...]) -> list[GasyncError]:
    """Diagnostics that name a local item as the source does: ``'s' (in group 'g')``, not
    ``'g.s'`` (the name flattening gave it)."""
    renames = {f"'{qualified(g.item.name, n)}'": f"'{n}' (in group '{g.item.name}')" for g in groups for n in g.locals}
    renames |= {f"{qualified(g.item.name, n)}[": f"{n}[" for g in groups for n in g.locals}  # a note's 's[i]'
    if not renames:
        return errors

    def shown(text: str) -> str:
        for old, new in renames.items():
            text = text.replace(old, new)
        return text

    out: list[GasyncError] = []
    for e in errors:
        message, notes = shown(e.message), tuple(dataclasses.replace(n, message=shown(n.message)) for n in e.notes)
        if message != e.message or notes != e.notes:
            e = copy.copy(e)
            e.message, e.args, e.notes = message, (message,), notes
        out.append(e)
    return out


def _name_at(lines: list[str], span: ast.Span) -> str | None:
    if span.line < 1 or span.line > len(lines):
        return None
    text = lines[span.line - 1][span.column - 1 :]
    word = ""
    for ch in text:
        if not (ch.isalnum() or ch == "_"):
            break
        word += ch
    return word or None


def group_defs(
    groups: tuple[GroupAst, ...],
    tasks: list[TaskDef],
    buffers: dict[str, BufferDef],
    channels: dict[str, ChannelDef],
    ranges: dict[str, tuple[str, int, int]],
) -> tuple[GroupDef, ...]:
    """The Plan's groups; ``ranges`` gives each group's variable type and range."""
    by_name = {t.name: t for t in tasks}
    out = []
    for g in groups:
        var_ty, start, stop = ranges[g.item.name]
        mine = tuple(by_name[n] for n in g.tasks if n in by_name)
        local_names = tuple(qualified(g.item.name, n) for n in g.locals)  # (a failed one is left out)
        local_bufs = tuple(buffers[n] for n in local_names if n in buffers)
        local_chans = tuple(channels[n] for n in local_names if n in channels)
        after = tuple(dict.fromkeys(a for t in mine for a in t.after))
        names = tuple(t.name for t in mine)
        warps = tuple(t.per_copy for t in mine)
        out.append(GroupDef(g.item.name, g.item.var, var_ty, start, stop, after, names, local_bufs, local_chans, warps))
        out[-1] = dataclasses.replace(out[-1], span=g.item.span)
    return tuple(out)


def shared_bytes(buffers: tuple[BufferDef, ...], channels: tuple[ChannelDef, ...]) -> int:
    """The shared memory one instance needs: its buffers, each 16-byte aligned, and each
    local channel's words, then per slot its sequence, its two mbarriers and its value (8 bytes
    each: runtime/state.py, local channels)."""
    n = sum(-(-b.size * ir.BITS[b.elem] // 8 // 16) * 16 for b in buffers)
    return n + sum(8 * (LOCAL_CHANNEL_WORDS + 4 * c.capacity) for c in channels)


@dataclass(frozen=True)
class SizeDefines:
    """The notes on the defines (-D) that a group's sizes read: its warps (its tasks' ranges),
    its shared memory (its local items' sizes)."""

    warps: tuple[Note, ...] = ()
    shared: tuple[Note, ...] = ()


def size_defines(syms: Symbols, group: GroupAst) -> SizeDefines:
    """What :class:`SizeDefines` says of ``group``."""
    ranges = [e for t in group.item.tasks for e in (t.start, t.stop) if e is not None]
    sizes: list[ast.Expr] = []
    for loc in group.locals.values():
        sizes += loc.type.dims if isinstance(loc, ast.LocalBuffer) else [loc.capacity]
    return SizeDefines(_define_notes(syms, ranges), _define_notes(syms, sizes))


def _define_notes(syms: Symbols, exprs: list[ast.Expr]) -> tuple[Note, ...]:
    found = dict(pair for e in exprs for pair in syms.defines_in(e))
    return tuple(define_note(n, given) for n, given in sorted(found.items()))


def fit_errors(
    group: GroupDef, shared_limit: int = H200_SHARED_PER_BLOCK, defines: SizeDefines = SizeDefines()
) -> list[GasyncError]:
    """A group instance must fit one block: warps, and shared memory (E0221); ``defines``: notes on
    the defines its sizes read."""
    out: list[GasyncError] = []
    if group.warps > MAX_GROUP_WARPS:
        counts = ", ".join(f"{t} {n}" for t, n in zip(group.tasks, group.task_warps, strict=True))
        out.append(
            GroupFitError(
                f"group '{group.name}' needs {group.warps} warps per instance, more than the {MAX_GROUP_WARPS} of"
                " one CUDA block",
                group.span,
                (Note(f"each task instance of a group takes one warp of the block (tasks: {counts})"), *defines.warps),
            )
        )
    need = group.shared_bytes
    if need > shared_limit:
        kib = -(-need * 10 // 1024) / 10  # rounded up, and the limit down: 232464 bytes are 227.1 KiB, not 227.0
        out.append(
            GroupFitError(
                f"group '{group.name}' needs {need} bytes of shared memory per instance ({kib:.1f} KiB),"
                f" more than the {shared_limit} bytes ({shared_limit // 1024} KiB) a block may use",
                group.span,
                (
                    Note("its local buffers and channels live in the block's shared memory; make them smaller"),
                    *defines.shared,
                ),
            )
        )
    return out


def bulk_errors(group: GroupAst, bulk_spans: dict[str, tuple[ast.Span, str | None]]) -> list[GasyncError]:
    """A group's warps are pinned to it, so nothing would run a bulk loop's chunks (of every
    task of the group, checked or not: ``bulk_spans`` come from the source, each with the async
    fn it is in, if not the task's own body)."""
    out: list[GasyncError] = []
    for name in group.tasks:
        if name not in bulk_spans:
            continue
        span, fn = bulk_spans[name]
        runs = f"the 'bulk for' is in async fn '{fn}', which task '{name}' runs"
        via = () if fn is None else (Note(f"{runs} (it awaits it, or an async fn that does)"),)
        out.append(
            GroupRuleError(
                f"task '{name}' of group '{group.item.name}' cannot run a 'bulk for': a group's warps stay with it",
                span,
                (*via, Note("use 'parallel for' (the task's warp), or a task outside the group")),
            )
        )
    return out
