"""Loops of sends that a poll runs in a form of their own (mixed into
:class:`~gasync.codegen.poll.PollEmitter`): a counted channel's sender's loop, which sends
nothing (codegen/counted.py), and a row of sends below a crediting channel's credit.
"""

from __future__ import annotations

from typing import Any

from gasync.codegen.blocks import expr_reads
from gasync.codegen.counted import Counted
from gasync.codegen.exprs import NP, counter_step, local
from gasync.codegen.machine import PENDING, WAIT_ARGS
from gasync.planner import ir

# a for of sends on a crediting channel runs its sends below the credit in a row of their own
# (SendLoops._send_run; False: each goes through the poll's general send, a stage)
SEND_RUNS = True
ROW_NOTE = "# a row of sends below the credit"


def _lone_send(s: ir.For) -> tuple[ir.AwaitS, ir.Send] | None:
    """The await and its send, of a sequential ``for`` whose whole body is one await of a send."""
    if s.kind != "seq" or len(s.body) != 1:
        return None
    st = s.body[0]
    return (st, st.future) if isinstance(st, ir.AwaitS) and isinstance(st.future, ir.Send) else None


class SendLoops:
    """Needs the emitter's blocks (``add``, ``start``, labels, ``suspend_if``), ``shared``,
    ``task``, ``block``, ``children``, ``r``, ``types`` and ``_loop_body``."""

    shared: Any
    task: Any
    block: Any
    children: Any
    r: Any
    types: Any
    current_site: int

    def _counted_sends(self, s: ir.For) -> Counted | None:
        """The counted channel whose sender's loop ``s`` is (codegen/counted.py), or None."""
        lone = _lone_send(s)
        if lone is None or self.task is None or self.block is not None:
            return None
        k = self.shared.counted(lone[1].chan)
        return k if k is not None and k.task == self.task.name else None

    def _counted_for(self, s: ir.For, k: Counted) -> None:
        """A counted channel's sender's loop: no sends (the receivers compute each value from
        their tickets); it completes once they have taken ``NEED`` tickets, as its last send
        would, waiting in the channel's line of senders at its send's await point until then."""
        st = s.body[0]
        assert isinstance(st, ir.AwaitS)
        c, flag = k.chan, f"FI[fb_i + {self.children[st.site][0]}]"
        room = f"dsync.counted_room(G.chan, CH_{c}, NEED_{c})"
        note = f"# its {k.count} sends: the receivers compute each value from their tickets (a counted channel)"
        tail = f"G.chan.CHHT[CH_{c}, dl.TAIL] = COUNT_{c}  # every value is there to take (a trace's occupancy)"
        self.add([note, tail, f"{flag} = 0"])
        self.resume_at(st.site)
        self.current_site = st.site
        register = f"dsync.register({WAIT_ARGS}, RES_SEND_{c}, inst, G.sched.CTL)"
        self.add([f"rdy = {room}", "if not rdy:", f"    {flag} = 1", f"    {register}", f"    rdy = {room}"])
        self.suspend_if("not rdy", st.site, PENDING)
        leave = f"    dsync.deregister(G.wait.WREG, N_INST, RES_SEND_{c}, inst)"
        self.add([f"if {flag} != 0:  # it leaves the line (no one else waits in it)", leave])

    def _send_run(self, s: ir.For) -> ir.Send | None:
        """The send of a ``for`` whose body is one send to a crediting, deferring channel whose
        cursor this poll holds (and whose receiver is no bell end): such a send below its
        credit only stores, and the loop may run a row of them on its own (SEND_RUNS)."""
        lone = _lone_send(s)
        if not SEND_RUNS or lone is None or lone[0].targets:
            return None
        c = lone[1].chan
        if c not in self.r.cursors or not self.shared.defers(c) or self.shared.is_bell("RECV", c):
            return None
        return lone[1]

    def _send_run_for(self, s: ir.For, send: ir.Send) -> None:
        """A ``for`` of sends (``_send_run``): at each turn, first the sends below the credit
        in a row (the value, its slot's stores, the tail: no state word, frame word or
        dispatch), then the send as any other for the one that reads credits, waits or finds
        the channel closed (runtime/devicecredit.py, put_credited)."""
        c = send.chan
        head, body, step, exit_ = self.new_label(), self.new_label(), self.new_label(), self.new_label()
        self.add([self.assign(s.stop_var, self.r(s.stop))], expr_reads(s.stop), frozenset([s.stop_var]))
        self.add([self.assign(s.var, self.r(s.start))], expr_reads(s.start), frozenset([s.var]))
        self.start(head)
        v, stop, ty = local(s.var), local(s.stop_var), NP[str(self.types[s.var])]
        value = f"int64({NP[self.shared.plan.channel(c).elem]}({self.r(send.value)}))"
        run = [
            f"while {v} < {stop} and cur_{c}[0] >= 0 and cur_{c}[0] < cur_{c}[1]:  {ROW_NOTE}",
            f"    dsync.put_credited(G.chan, CH_{c}, CAP_{c}, {value}, TICKETS_{c}, HOW_{c}, cur_{c})",
            f"    {counter_step(v, ty)}",
        ]
        uses = frozenset([s.var, s.stop_var]) | expr_reads(send.value)
        self.add(run, uses, frozenset([s.var]))
        self.branch(f"not {v} < {stop}", exit_, body, frozenset([s.var, s.stop_var]))
        self.start(body)
        self._loop_body(exit_, step, s.body)
        self._close(step)
        self.start(step)
        self.add([counter_step(v, ty)], frozenset([s.var]), frozenset([s.var]))
        self.goto(head)
        self.start(exit_)
