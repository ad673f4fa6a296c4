"""Groups in the generated code: local buffers and channels, and their futures.

A local item ``GROUP.NAME`` (planner/groups.py) becomes a device function that
returns its ``cuda.shared.array``: ``LB_GROUP__NAME()`` for a buffer,
``LC_GROUP__NAME()`` (the ring's words) and ``LCD_GROUP__NAME()`` (its values)
for a channel. Numba gives each such declaration one static allocation per
block, whoever calls it, so every task of the group instance that the block
runs sees the same memory (on the simulator too: its shared arrays are keyed by
their line, per block). A local channel's send and receive are one attempt
each (runtime/devicegroups.py); a pending one suspends, and the task's pinned
warp polls it again (codegen/groupkernel.py): nothing waits on a wait list, and
a wake inside a group never leaves the SM. This module imports nothing from
the rest of codegen, which imports it.
"""

from __future__ import annotations

from gasync.planner import ir
from gasync.planner.model import BufferDef, ChannelDef, GroupDef, Plan, TaskDef

NUMBA = {"bool": "boolean", "i32": "int32", "i64": "int64", "u32": "uint32", "u64": "uint64"}
NUMBA |= {"f32": "float32", "f64": "float64"}


def is_local(name: str) -> bool:
    return "." in name


def ident(name: str) -> str:
    group, item = name.split(".", 1)
    return f"{group}__{item}"


def buffer_ref(name: str) -> str:
    return f"LB_{ident(name)}()"


def ring(name: str) -> str:
    return f"LC_{ident(name)}(), LCD_{ident(name)}(), 0, {{cap}}"


def declarations(plan: Plan) -> list[str]:
    """One device function per local buffer and channel, returning its shared array."""
    out: list[str] = []
    for g in plan.groups:
        for b in g.buffers:
            shape = f"({', '.join(map(str, b.shape))},)" if len(b.shape) == 1 else f"({', '.join(map(str, b.shape))})"
            out += _decl(f"LB_{ident(b.name)}", f"local buffer {b.name}: {b.elem}{list(b.shape)}", shape, NUMBA[b.elem])
        for c in g.channels:
            words = f"dgroups.LCH_WORDS + {c.capacity}"
            out += _decl(f"LC_{ident(c.name)}", f"local channel {c.name}: its words and sequences", words, "int64")
            data = "float64" if c.elem in ir.FLOATS else "int64"
            out += _decl(
                f"LCD_{ident(c.name)}", f"local channel {c.name}: its {c.capacity} values", str(c.capacity), data
            )
    return out


def _decl(fn: str, what: str, shape: str, dtype: str) -> list[str]:
    return [
        "@cuda.jit(device=True)",
        f"def {fn}():",
        f"    # {what}",
        f"    return cuda.shared.array({shape}, {dtype})",
        "",
        "",
    ]


def reset_lines(g: GroupDef, ind: str) -> list[str]:
    """Thread t of nt zeroes the instance's local buffers and empties its channels."""
    out = []
    for b in g.buffers:
        ref = buffer_ref(b.name)
        if len(b.shape) == 1:
            out += [f"{ind}for j in range(t, {b.size}, nt):", f"{ind}    {ref}[j] = {NUMBA[b.elem]}(0)"]
        else:
            w = b.shape[1]
            out += [f"{ind}for j in range(t, {b.size}, nt):", f"{ind}    {ref}[j // {w}, j % {w}] = {NUMBA[b.elem]}(0)"]
    for c in g.channels:
        out.append(f"{ind}dgroups.lch_reset(LC_{ident(c.name)}(), {c.capacity}, t, nt)")
    return out


def close(name: str) -> str:
    return f"dgroups.lch_close(LC_{ident(name)}())"


def send_lines(ch: ChannelDef, value: str, rdy: str) -> list[str]:
    """One attempt to send the value the send's frame holds; ``rdy`` unless the ring is full."""
    sent = f"sent_{rdy}"
    data = value if ch.elem in ir.FLOATS else f"int64({value})"
    return [
        f"{sent} = dgroups.lch_try_send({ring(ch.name).format(cap=ch.capacity)}, {data})",
        f"{rdy} = {sent} != dgroups.LCH_FULL",
        f"if {sent} == dgroups.LCH_CLOSED_SEND:",
        "    dl.add(G.sched.CTL, dsync.CTL_CLOSED_SENDS, int64(1))  # the value is dropped",
    ]


def recv_lines(ch: ChannelDef, rdy: str, out_target: list[str], ended: str | None) -> list[str]:
    """One attempt to receive into the warp's scratch word; ``ended``: closed and drained."""
    took = f"took_{rdy}"
    scratch = "G.exec.SCRATCH_F" if ch.elem in ir.FLOATS else "G.exec.SCRATCH_I"
    lines = [f"{took} = dgroups.lch_try_recv({ring(ch.name).format(cap=ch.capacity)}, {scratch}, w)"]
    if ended is not None:
        lines.append(f"{ended} = {took} == dgroups.LCH_ENDED")
    lines += [f"{rdy} = {took} == dgroups.LCH_TOOK", f"if {rdy}:", *("    " + x for x in out_target)]
    return lines


def scratch(ch: ChannelDef) -> str:
    return "G.exec.SCRATCH_F[w]" if ch.elem in ir.FLOATS else "G.exec.SCRATCH_I[w]"


def instance_vars(plan: Plan, task: TaskDef, np_of: dict[str, str]) -> list[str]:
    """A group task's variables from its instance id: instance k of the task is copy
    k // per_copy (the group instance) and k % per_copy within it."""
    g = plan.group_of(task)
    assert g is not None
    k = f"(inst - {task.first_instance})"
    out = []
    if g.var is not None:
        out.append(
            f"    v_{g.var} = {np_of[g.var_ty]}({g.start} + {k} // {task.per_copy})  # group {g.name}'s instance"
        )
    if task.var is not None:
        out.append(f"    v_{task.var} = {np_of[task.var_ty]}({task.start} + {k} % {task.per_copy})")
    return out


def local_buffer(plan: Plan, name: str) -> BufferDef | None:
    return plan.local_buffer(name) if is_local(name) else None
