"""Groups in the generated code: local buffers and channels, and their futures.

A local item ``GROUP.NAME`` (planner/groups.py) is a ``cuda.shared.array``
that the kernel declares (one static allocation per block; Numba returns no
array made inside a device function) and hands down in a namedtuple,
``Locals_GROUP``: ``L.b_NAME`` for a buffer, ``L.ch_NAME`` (the ring's words)
and ``L.chv_NAME`` (its values) for a channel. Every function of a group's
task (its poll, its async blocks, its parallel loops) takes that ``L`` last,
so every task of the group instance that the block runs sees the same memory.
A local channel's send and receive are one attempt each
(runtime/devicegroups.py); a pending one suspends, and the task's pinned warp
polls it again (codegen/groupkernel.py): nothing waits on a wait list, and a
wake inside a group never leaves the SM. This module imports nothing from the
rest of codegen but names.py, which imports nothing; the rest imports it.

Static shared arrays may hold 48 KiB per block (ptxas refuses more). Where the
program's groups and the kernel's own words need more, every local is instead a
view of the block's dynamic shared memory (``dynamic_shared``): one
``cuda.shared.array(0, dtype)`` per dtype (all of them alias the same bytes),
sliced at the local's fixed byte offset (a multiple of 16 for a buffer, of 8
for a ring) and given its two dimensions where it has two (``dgroups.rows``),
so every local has the type its static array would have and no other code
changes. A block
runs one group instance at a time, so every group's locals start at offset 0
and the launch asks for the largest group's bytes (runtime/launch.py, which
opts the kernel in to them first).
"""

from __future__ import annotations

import math

from gasync.codegen.names import group_array
from gasync.planner import ir
from gasync.planner.model import BufferDef, ChannelDef, GroupDef, Plan, TaskDef

LCH_WORDS = 4  # runtime/state.py's LCH_WORDS (a test keeps them equal): a ring's words before its sequences
# a local channel's claims (runtime/devicegroups.py, the same values: a test keeps them equal;
# codegen/shapes.py local_how): one warp of each group instance sends (receives) on it; no task
# closes it; no sender writes a local buffer
LCH_LONE_SEND, LCH_LONE_RECV, LCH_OPEN, LCH_LANE0 = 1, 2, 4, 8
LCH_NAMES = (
    ("LCH_LONE_SEND", LCH_LONE_SEND),
    ("LCH_LONE_RECV", LCH_LONE_RECV),
    ("LCH_OPEN", LCH_OPEN),
    ("LCH_LANE0", LCH_LANE0),
)
NUMBA = {"bool": "boolean", "i32": "int32", "i64": "int64", "u32": "uint32", "u64": "uint64"}
NUMBA |= {"f32": "float32", "f64": "float64"}
STATIC_SHARED = 48 * 1024  # what a kernel's static shared arrays may hold (ptxas)
# a copy map into a local buffer by the bulk copy engine, lane 0 waiting on its warp's mbarrier
# (codegen/vectors.py, _bulk_lines): correct on the H100, and slower than the lanes' cp.async
# (bench/NOTES.md, run 55); the kernel then declares MB, each warp's mbarrier, in every Locals
BULK_COPY = False


def is_local(name: str) -> bool:
    return "." in name


def item(name: str) -> str:
    return name.split(".", 1)[1]


def buffer_ref(name: str) -> str:
    return f"L.b_{item(name)}"


def ring(name: str) -> str:
    return f"L.ch_{item(name)}, L.chv_{item(name)}, 0, {{cap}}"


def _arrays(g: GroupDef) -> list[tuple[str, tuple[int, ...], str, int]]:
    """Each shared array of group ``g``: (field of its Locals, shape, dtype, bytes per element);
    its buffers first, then each channel's words and values."""
    out = [(f"b_{item(b.name)}", b.shape, NUMBA[b.elem], ir.BITS[b.elem] // 8) for b in g.buffers]
    for c in g.channels:
        out.append((f"ch_{item(c.name)}", (LCH_WORDS + 3 * c.capacity,), "int64", 8))  # words, seqs, mbarriers
        out.append((f"chv_{item(c.name)}", (c.capacity,), "float64" if c.elem in ir.FLOATS else "int64", 8))
    return out


def fields(g: GroupDef) -> list[tuple[str, str, str]]:
    """(field of the group's Locals, its shared array's shape, its dtype), in order."""
    out = []
    for k, (f, shape, dtype, _) in enumerate(_arrays(g)):
        if k < len(g.buffers):  # a buffer's shape is a tuple; a ring's, its length
            out.append((f, f"({', '.join(map(str, shape))}{',' if len(shape) == 1 else ''})", dtype))
        else:
            out.append((f, str(shape[0]), dtype))
    return out


def _offsets(g: GroupDef) -> list[int]:
    """Each shared array's byte offset in the dynamic shared memory, in _arrays' order: buffers
    each rounded up to 16 bytes, then the rings' words (8 bytes each), so the last ends at
    ``g.shared_bytes`` (planner/groups.py, shared_bytes)."""
    out, at = [], 0
    for k, (_, shape, _, size) in enumerate(_arrays(g)):
        out.append(at)
        nbytes = size * math.prod(shape)
        at += -(-nbytes // 16) * 16 if k < len(g.buffers) else nbytes
    assert at == g.shared_bytes, (g.name, at, g.shared_bytes)
    return out


def kernel_shared(plan: Plan | None = None) -> int:
    """The bytes of the group kernel's own static shared arrays: its block words, each warp's
    wait word (codegen/groupkernel.py, KERNEL) and, with BULK_COPY, its mbarrier, and for
    ``plan`` its pinned tasks' frame area (codegen/pinned.py)."""
    # (not at the top: the runtime package imports codegen)
    from gasync.codegen.pinned import frame_bytes
    from gasync.runtime.state import BW_WORDS, GW_WORDS, MB_WORDS

    own = BW_WORDS + GW_WORDS + (MB_WORDS if BULK_COPY else 0)
    return 8 * own + (frame_bytes(plan) if plan is not None else 0)


def dynamic_shared(plan: Plan) -> int:
    """The bytes of dynamic shared memory a block of ``plan``'s kernel takes: 0 where every
    group's locals (the kernel declares them all) fit static arrays beside the kernel's own,
    else the largest group's (each group's locals start at 0: a block runs one at a time)."""
    if sum(g.shared_bytes for g in plan.groups) + kernel_shared(plan) <= STATIC_SHARED:
        return 0
    return max(g.shared_bytes for g in plan.groups)


def declarations(plan: Plan) -> list[str]:
    """Each group's ``Locals_<group>``: its shared arrays, which the kernel declares (a shared
    array cannot be returned by a device function) and hands to the functions that use them."""
    # a global, which Numba reads as a constant (an attribute of dv it would not)
    out = ["LOCAL_ALIGN = dv.LOCAL_ALIGN  # a local buffer's alignment: a 16-byte line (None: the simulator's)"]
    if BULK_COPY:
        out.append("BULK_COPY = dv.bulk_copy_works()  # whether a map may fill a local buffer by the bulk copy engine")
    for g in plan.groups:  # each group's locals, then the block's mbarriers (the kernel's MB)
        names = ", ".join([*(f'"{f}"' for f, _, _ in fields(g)), *(['"mb"'] if BULK_COPY else [])]) or '"none"'
        out.append(f'Locals_{g.name} = namedtuple("Locals_{g.name}", ({names},))  # group {g.name}\'s shared memory')
    return out


def alloc_lines(plan: Plan, ind: str) -> list[str]:
    """The kernel's declarations of every group's shared arrays, one per line (the simulator
    tells its static shared arrays apart by their line); views of the dynamic shared memory
    where the program needs more than static arrays may hold (the module's text)."""
    if dynamic_shared(plan):
        return _dynamic_lines(plan, ind)
    out = []
    for k, g in enumerate(plan.groups):
        for f, shape, dtype in fields(g):
            # a local buffer starts a 16-byte line, so that a map may move it 16 bytes at a time
            # (codegen/vectors.py; the simulator takes no alignment: LOCAL_ALIGN is None there)
            align = ", alignment=LOCAL_ALIGN" if f.startswith("b_") else ""
            out.append(f"{ind}{group_array(k, f)} = cuda.shared.array({shape}, {dtype}{align})")
        out.append(_locals_line(g, k, ind))
    return out


def _locals_line(g: GroupDef, k: int, ind: str) -> str:
    args = ", ".join([*(group_array(k, f) for f, _, _ in fields(g)), *(["MB"] if BULK_COPY else [])]) or "BW"
    return f"{ind}L_{g.name} = Locals_{g.name}({args})"


def _dynamic_lines(plan: Plan, ind: str) -> list[str]:
    """One dynamic shared array per dtype, and each local a view of it at its byte offset."""
    used = sorted({dtype for g in plan.groups for _, _, dtype, _ in _arrays(g)})
    total = dynamic_shared(plan)
    out = [f"{ind}# {total} bytes of dynamic shared memory (the launch's); each group's locals from byte 0"]
    out += [f"{ind}DYN_{dtype} = cuda.shared.array(0, {dtype})" for dtype in used]
    for k, g in enumerate(plan.groups):
        for (f, shape, dtype, size), at in zip(_arrays(g), _offsets(g), strict=True):
            first, n = at // size, math.prod(shape)
            view = f"DYN_{dtype}[{first}:{first + n}]"
            if len(shape) > 1:  # a view with two dimensions (runtime/devicegroups.py)
                view = f"dgroups.rows({view}, {shape[0]}, {shape[1]})"
            out.append(f"{ind}{group_array(k, f)} = {view}  # bytes {at}..{at + n * size - 1}")
        out.append(_locals_line(g, k, ind))
    return out


def group_of_function(plan: Plan, fn: str) -> GroupDef | None:
    task = next((t for t in plan.tasks if t.body.name == fn), None)
    return plan.group_of(task) if task is not None else None


def locals_param(plan: Plan, fn: str) -> str:
    """``, L`` where function ``fn`` is a group task's (its polls, blocks and parallel loops)."""
    return ", L" if plan.groups and group_of_function(plan, fn) is not None else ""


def reset_lines(g: GroupDef, ind: str) -> list[str]:
    """Thread t of nt zeroes the instance's local buffers and empties its channels."""
    out = []
    for b in g.buffers:
        ref = buffer_ref(b.name)  # L is the group's Locals
        if len(b.shape) == 1:
            out += [f"{ind}for j in range(t, {b.size}, nt):", f"{ind}    {ref}[j] = {NUMBA[b.elem]}(0)"]
        else:
            w = b.shape[1]
            out += [f"{ind}for j in range(t, {b.size}, nt):", f"{ind}    {ref}[j // {w}, j % {w}] = {NUMBA[b.elem]}(0)"]
    for c in g.channels:
        out.append(f"{ind}dgroups.lch_reset(L.ch_{item(c.name)}, {c.capacity}, t, nt)")
    return out


def retire_lines(g: GroupDef, ind: str, locals_: str) -> list[str]:
    """Thread t of nt ends the instance's channels' mbarriers (the block has met after it)."""
    return [f"{ind}dgroups.lch_retire({locals_}.ch_{item(c.name)}, {c.capacity}, t, nt)" for c in g.channels]


def close(name: str) -> str:
    return f"dgroups.lch_close(L.ch_{item(name)})"


LOCAL_TRIES = 64  # a lone local await's claims in a poll on all lanes before it returns pending


def lch_how(how: int) -> str:
    """A local channel's bits as the generated call passes them: the runtime's names, or 0."""
    return " | ".join(f"dgroups.{n}" for n, bit in LCH_NAMES if how & bit) or "0"


def send_lines(
    ch: ChannelDef, value: str, rdy: str, warp: bool = False, alone: bool = False, how: int = 0
) -> list[str]:
    """One attempt to send the value the send's frame holds; ``rdy`` unless the ring is full.
    ``warp``: the poll runs on all 32 lanes (codegen/warppoll.py): lane 0 sends, all learn how;
    ``alone`` (awaited by itself) it claims up to LOCAL_TRIES times first: a wait in place, which
    spares a hand-off the pinned loop's round (the poll's end, the nap, its frame read again);
    ``how``: the channel's LCH_ bits (codegen/shapes.py, local_how)."""
    sent = f"sent_{rdy}"
    data = value if ch.elem in ir.FLOATS else f"int64({value})"
    ring_ = ring(ch.name).format(cap=ch.capacity)
    bits = lch_how(how)
    attempt = (
        f"dgroups.lch_send_warp({ring_}, {data}, G.exec.CMD, w, lane, {LOCAL_TRIES if alone else 1}, {bits})"
        if warp
        else f"dgroups.lch_try_send({ring_}, {data}, {bits})"
    )
    lines = [f"{sent} = {attempt}", f"{rdy} = {sent} != dgroups.LCH_FULL"]
    if how & LCH_OPEN:  # (no task closes it: no send finds it closed)
        return lines
    return [
        *lines,
        f"if {sent} == dgroups.LCH_CLOSED_SEND{' and lane == 0' if warp else ''}:",
        "    dl.add(G.sched.CTL, dsync.CTL_CLOSED_SENDS, int64(1))  # the value is dropped",
    ]


def recv_lines(
    ch: ChannelDef,
    rdy: str,
    out_target: list[str],
    ended: str | None,
    warp: bool = False,
    alone: bool = False,
    how: int = 0,
) -> list[str]:
    """One attempt to receive into the warp's scratch word (``warp``: into ``got_<rdy>``, lane 0's
    take by shuffle, codegen/warppoll.py; ``alone``: up to LOCAL_TRIES claims, as send_lines);
    ``ended``: closed and drained."""
    took = f"took_{rdy}"
    ring_ = ring(ch.name).format(cap=ch.capacity)
    if warp:
        zero = "float64(0.0)" if ch.elem in ir.FLOATS else "int64(0)"  # the value's type, no slot read for it
        tries = LOCAL_TRIES if alone else 1
        call = f"dgroups.lch_recv_warp({ring_}, {zero}, G.exec.CMD, w, lane, {tries}, {lch_how(how)})"
        lines = [f"{took}, got_{rdy} = {call}"]
    else:
        scratch = "G.exec.SCRATCH_F" if ch.elem in ir.FLOATS else "G.exec.SCRATCH_I"
        lines = [f"{took} = dgroups.lch_try_recv({ring_}, {scratch}, w, {lch_how(how)})"]
    if ended is not None:
        lines.append(f"{ended} = {took} == dgroups.LCH_ENDED")
    lines += [f"{rdy} = {took} == dgroups.LCH_TOOK"]
    if out_target:  # (a value awaited and dropped goes nowhere)
        lines += [f"if {rdy}:", *("    " + x for x in out_target)]
    return lines


def scratch(ch: ChannelDef, rdy: str = "", warp: bool = False) -> str:
    """Where a receive of local channel ``ch`` leaves its value."""
    if warp:
        return f"got_{rdy}"
    return "G.exec.SCRATCH_F[w]" if ch.elem in ir.FLOATS else "G.exec.SCRATCH_I[w]"


def instance_vars(plan: Plan, task: TaskDef, np_of: dict[str, str]) -> list[str]:
    """A group task's variables from its instance id: instance k of the task is copy
    k // per_copy (the group instance) and k % per_copy within it."""
    g = plan.group_of(task)
    assert g is not None
    k = f"(inst - {task.first_instance})"
    out = []
    if g.var is not None:
        value = offset(np_of[g.var_ty], g.start, f"{k} // {task.per_copy}")
        out.append(f"    v_{g.var} = {value}  # group {g.name}'s instance")
    if task.var is not None:
        out.append(f"    v_{task.var} = {offset(np_of[task.var_ty], task.start, f'{k} % {task.per_copy}')}")
    return out


def offset(ty: str, start: object, k: str) -> str:
    """An instance variable: its range's ``start`` plus the instance's place ``k``, in type
    ``ty``; a u64 one adds as u64 (a start past 2^63 is no int64, and u64 plus int64 would be
    a float in Numba)."""
    if ty == "uint64":
        return f"uint64(uint64({start}) + uint64({k}))"
    return f"{ty}({start} + {k})"


def local_buffer(plan: Plan, name: str) -> BufferDef | None:
    return plan.local_buffer(name) if is_local(name) else None
