"""Rows of sends on the sender's lanes (bench/NOTES.md, "Rows of sends"; issue 11).

A ``for`` whose body is one send to a crediting, deferring channel (codegen/poll.py,
``_send_run``) sends below its credit without reading anything: each send is its slot's
stores. One lane issuing them is the floor of a hand-written loop too (~0.25 us a send on
the H200: four stores to four lines), so where the sent value is arithmetic of the loop
variable and of locals the loop does not change, lane 0 hands the row to its warp: lane
``j`` sends iteration ``t + j`` into slot ``pos + j`` (``row_<k>``), up to 32 at once, and
lane 0 then moves the tail once (runtime/devicecredit.py, ``put_lane``, ``end_lane_row``).

Lane 0 is inside the poll, the other 31 lanes at the kernel loop's first ``warp_sync``
(codegen/kernel.py): lane 0 leaves the row's command in ``CMD`` and its arguments in
``PARGS``, meets them there, runs its own lane of the row, and meets them again at their
second ``warp_sync``, which is also what orders every lane's stores before lane 0's next
look for waiting ticket holders. ``__syncwarp`` meets across program points on sm_70 and
later; the simulator's stand-in is a barrier of the warp's 32 threads, which does too.
Lanes parked in a group's kernel loop (codegen/groupkernel.py) run rows of the non-group
functions a group task calls; a group task's own sends keep the one-lane row.
"""

from __future__ import annotations

from dataclasses import dataclass

from gasync.codegen import groups
from gasync.codegen.exprs import NP, local
from gasync.codegen.machine import Emitter, Shared, captured_loads, captured_stores, source_line
from gasync.planner import ir
from gasync.planner.walk import subexprs

LANE_ROWS = True  # False: rows stay on lane 0 (a stage: what handing them to the lanes buys)
ROW_COMMAND = 1 << 20  # row k's command is ROW_COMMAND + k, apart from the parallel loops' gids
ROW_ARGS = 3  # PARGS_I[w, 0:3]: the first iteration, the row's length, the first ticket
ROW_NOTE = "# rows of sends below the credit, a lane each"
PURE = (ir.Lit, ir.Var, ir.Unary, ir.Binary, ir.Cast)


@dataclass(frozen=True)
class LaneRow:
    """A ``for`` of sends whose rows its warp's lanes send."""

    k: int
    fn: str
    loop: ir.For
    send: ir.Send
    captured: tuple[tuple[str, ir.Ty], ...]  # the value's locals other than the loop's variable

    @property
    def command(self) -> int:
        return ROW_COMMAND + self.k

    @property
    def n_int(self) -> int:
        return ROW_ARGS + sum(1 for _, ty in self.captured if ty not in ir.FLOATS)

    @property
    def n_float(self) -> int:
        return sum(1 for _, ty in self.captured if ty in ir.FLOATS)


def lane_row(shared: Shared, em: Emitter, s: ir.For, send: ir.Send) -> LaneRow | None:
    """The row of ``s``'s sends for the lanes, registered, or None where it stays on lane 0:
    a group task's, or a value that is more than arithmetic (a load, a call)."""
    if not LANE_ROWS or groups.locals_param(shared.plan, em.fn.name):
        return None
    names: list[str] = []
    for e in subexprs(send.value):
        if not isinstance(e, PURE):
            return None
        if isinstance(e, ir.Var) and e.name != s.var and e.name not in names:
            names.append(e.name)
    row = LaneRow(len(shared.rows) + 1, em.fn.name, s, send, tuple((n, em.types[n]) for n in names))
    shared.rows.append(row)
    return row


def poll_lines(em: Emitter, row: LaneRow) -> list[str]:
    """Lane 0's loop of rows, in the poll: while the credit lasts, hand the warp a row."""
    s, c = row.loop, row.send.chan
    v, stop, ty = local(s.var), local(s.stop_var), NP[str(em.types[s.var])]
    n = f"nrow_{c}"
    out = [
        f"while {v} < {stop} and cur_{c}[0] >= 0 and cur_{c}[0] < cur_{c}[1]:  {ROW_NOTE}",
        f"    {n} = min(cur_{c}[1] - cur_{c}[0], int64({stop}) - int64({v}), LANES)",
        f"    G.exec.PARGS_I[w, 0] = int64({v})",
        f"    G.exec.PARGS_I[w, 1] = {n}",
        f"    G.exec.PARGS_I[w, 2] = cur_{c}[0]",
    ]
    stores, _, _ = captured_stores(row.captured, ROW_ARGS, "G.exec.PARGS_I[w", "G.exec.PARGS_F[w")
    out += ["    " + line for line in stores]
    out += [
        f"    G.exec.CMD[w, dl.CMD_COMMAND] = {row.command}",
        f"    dl.warp_sync(G.exec.CMD, w)  # lanes 1..31 meet it in the kernel's loop and run row_{row.k} too",
        f"    row_{row.k}(w, 0, G.exec.PARGS_I[w], G.exec.PARGS_F[w], G)",
        "    dl.warp_sync(G.exec.CMD, w)  # every lane's stores are out before the tail moves",
        f"    dsync.end_lane_row(G.chan, CH_{c}, {n}, cur_{c})",
        f"    {v} = {ty}({v} + {ty}({n}))",
    ]
    return out


def row_function(shared: Shared, row: LaneRow) -> list[str]:
    """``row_<k>(w, lane, AI, AF, G)``: lane ``lane`` sends iteration ``AI[0] + lane`` into
    ticket ``AI[2] + lane`` if the row (``AI[1]`` long) reaches it."""
    fn = shared.plan.function(row.fn)
    em = Emitter(shared, fn)
    s, c = row.loop, row.send.chan
    out = [
        "@cuda.jit(device=True)",
        f"def row_{row.k}(w, lane, AI, AF, G):",
        f"    {source_line(shared.plan, s.span)}  (its sends below the credit, a lane each)",
        "    if lane < AI[1]:",
        f"        {em.assign(s.var, 'AI[0] + lane')}",
    ]
    out += captured_loads(em, row.captured, ROW_ARGS, "        ")
    value = f"int64({NP[shared.plan.channel(c).elem]}({em.r(row.send.value)}))"
    out.append(f"        dsync.put_lane(G.chan, CH_{c}, CAP_{c}, {value}, AI[2] + lane, TICKETS_{c}, HOW_{c})")
    return out


def dispatch_lines(shared: Shared, ind: str) -> list[str]:
    """run_parallel's cases for the rows (every row is a non-group function's)."""
    out = []
    for row in shared.rows:
        out.append(f"{ind}if command == {row.command}:")
        out.append(f"{ind}    row_{row.k}(w, lane, G.exec.PARGS_I[w], G.exec.PARGS_F[w], G)")
    return out
