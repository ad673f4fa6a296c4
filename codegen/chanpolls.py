"""Polling a channel's ends inside a poll function: a global channel's send and receive (a
lone end's, a crowd's by ticket, a crediting sender's), each with its wait in place where the
executor has nothing else to run and its wait in line otherwise, and a local channel's
(codegen/groups.py). Mixed into :class:`~gasync.codegen.futures.FutureRenderer`, which
dispatches each kind of future to its ``_poll_<Kind>``; runtime/state.py gives the protocols.
"""

from __future__ import annotations

from gasync.codegen import groups
from gasync.codegen.counted import Counted
from gasync.codegen.exprs import NP, ExprRenderer, local
from gasync.planner import ir

# a send's value stays in registers from its send's start to its attempts in the same poll,
# where the poll sends on that channel once (False: every attempt loads it from the frame; a
# stage of bench/NOTES.md; codegen/ends.py, kept_sends)
SEND_VALUE_KEPT = True
# a receive's wait in place loads its poll's first early look in each turn, beside the sequence
# it waits on (False: the look is a load of its own after the wait; a stage of bench/NOTES.md)
SPIN_LOOKS = True
# a lone receive awaited alone tries its channel before it waits in place (False: where its
# executor may wait in place, the wait's first turn is the try, one load sooner; a stage of
# bench/NOTES.md, 22nd session: the re-entry of a side that has just published)
TRY_FIRST = True


class ChannelPolls:
    """The channel futures' renderers; needs ``self.r``, ``self.types``, ``self.shared``."""

    warp = False  # the poll runs on all 32 lanes of its warp (codegen/warppoll.py)

    def _chan(self, name: str):  # type: ignore[no-untyped-def]
        return self.shared.plan.channel(name)  # type: ignore[attr-defined]

    def _in_place(
        self, side: str, c: str, failed: str, outcome: str, attempt: str, owned: str, ready: tuple[str, ...] = ()
    ) -> list[str]:
        """Where the first attempt ``failed``: wait in place, then attempt again into
        ``outcome``, or (a lone end, which waited on its own ticket ``got``) finish with
        ``owned``, after ``ready``'s lines (runtime/state.py, Waiting in place). A receive's
        first early look (``ready``'s first line) is taken by the wait, in its turns
        (``SPIN_LOOKS``; runtime/devicechan.py, spin_look)."""
        if not self.shared.wait_in_place:  # type: ignore[attr-defined]
            return []
        got = f"got_{outcome}"
        # the wait takes the first look in its turns, into the receive's second register
        ints = c in self.values and self._chan(c).elem not in ir.FLOATS  # type: ignore[attr-defined]
        look = self.looks[0] if side == "RECV" and ready and self.looks and SPIN_LOOKS and ints else None  # type: ignore[attr-defined]
        if look is not None:
            ready = (self.spin_look_line(look, f"rv_{c}"), *ready[1:])  # type: ignore[attr-defined]
        into = f"rv_{c}, 0" if side == "RECV" and c in self.values else None  # type: ignore[attr-defined]
        first = side == "RECV" and self._no_try(c)
        spin = self.shared.spin(side, c, look, into=into, first=first)  # type: ignore[attr-defined]
        return [
            f"if {failed}:",
            *("    " + x for x in self.ring_flush()),  # the other ends it waits on may wait for them
            f"    {got} = {spin}",
            f"    if {got} >= 0:",
            *("        " + x for x in ready),
            f"        {outcome} = {owned.format(got=got)}",
            f"    elif {got} == -2:",
            f"        {outcome} = {attempt}",
        ]

    def _poll_Send(
        self, fut: ir.Send, ci: str, cf: str, rdy: str, target: str | None, alone: bool = False
    ) -> list[str]:
        c = fut.chan
        value = f"FF[fb_f + {cf}]" if self._chan(c).elem in ir.FLOATS else f"FI[fb_i + {ci} + 1]"
        if c in self.restored:  # type: ignore[attr-defined]  # its register, always (poll.kept_words)
            value = f"sv_{c}"
        elif c in self.kept:  # type: ignore[attr-defined]  # set by this send's start in this poll, else (a resumed send) in the frame
            value = f"(sv_{c} if svok_{c} else {value})"
        data = "G.chan.CHF" if self._chan(c).elem in ir.FLOATS else "G.chan.CHI"
        ring = f"BELL_RECV_{c} >= 0"  # the receiver is a bell end: the put's exchange tells
        word = self.ring_word("RECV", c)
        tail = f"LONE_SEND_{c}, {ring}, TICKETS_{c}, HOW_{c}, {word}"
        owed = self.owed_arg(c, self.current_site)  # type: ignore[attr-defined]
        send = f"dsync.chan_try_send(G.chan, CH_{c}, CAP_{c}, {data}, {value}, {tail}, {self.seen_arg(c)}, {owed})"
        after = f"{ring}, TICKETS_{c}, HOW_{c}, {word}, {owed}"
        put = f"dsync.chan_put(G.chan, CH_{c}, CAP_{c}, {data}, {value}, {{got}}, {after})"
        sh = self.shared  # type: ignore[attr-defined]
        if c in self.r.cursors:  # type: ignore[attr-defined]  # the sender's tail and credit, in registers
            args = f"G.chan, CH_{c}, CAP_{c}, {value}, {ring}, TICKETS_{c}, HOW_{c}, cur_{c}, {word}"
            send = f"dsync.credited_send(G.sched, QMASK, {args})"
            rest = f"{{got}}, {ring}, TICKETS_{c}, HOW_{c}, cur_{c}, {word}"
            put = f"dsync.credited_put(G.chan, CH_{c}, CAP_{c}, {data}, {value}, {rest})"
        flag = f"FI[fb_i + {ci}]"  # set once it waits in line
        sent = f"sent_{rdy}"  # dsync.SEND_DONE, SEND_CLOSED or SEND_FULL
        full = f"{sent} == dsync.SEND_FULL"
        done = sh.chan_done("SEND", c, flag)
        if sh.is_bell("RECV", c):
            woken = []  # a late ring (ring_flush)
        elif sh.has_tickets(c):
            woken = [f"    if {sent} >= dsync.SEND_WAKE:", f"        {sh.wake(f'{sent} - dsync.SEND_WAKE', 'inst')}"]
        else:
            woken = [f"    {sh.wake_one(f'RES_RECV_{c}')}"]
        look = f"dsync.look_for_holders(G.sched, QMASK, G.chan, CH_{c})"  # a deferring sender's
        defer = sh.defers(c)
        if defer:  # it looks as it reads its credits, and before it waits (below)
            woken = []
        return [
            *self.ring_flush((("RECV", c),)),  # the last send's, before this one's takes its word
            *self.free_lines(c),  # type: ignore[attr-defined]  # (a slot of its own channel that this poll took)
            f"{sent} = {send}",
            *self.look_resets(c),  # type: ignore[attr-defined]
            *self.free_lines(),  # type: ignore[attr-defined]  # (made before the publish where it reached one)
            *([f"if {full}:", f"    {look}  # the run ends here: wake its waiting holders first"] if defer else []),
            *(self._in_place("SEND", c, full, sent, send, put) if alone else []),
            f"if {full}:",
            *("    " + x for x in self._wait_in_line("SEND", c, flag, sent, send)),
            f"{rdy} = not ({full})",
            f"if {sent} == dsync.SEND_CLOSED:",
            "    dl.add(G.sched.CTL, dsync.CTL_CLOSED_SENDS, int64(1))  # the value is dropped",
            *([f"elif {rdy}:", *woken] if woken else []),
            *([f"if {rdy}:", *("    " + x for x in done)] if done else []),
        ]

    def _wait_in_line(self, side: str, c: str, flag: str, outcome: str, attempt: str) -> list[str]:
        """Where the attempt failed: join the line of channel ``c``'s ``side``, then attempt
        again. A bell end (codegen/shapes.py) sets its bit in its slot's word instead, whose
        old value is its second look: it attempts again only if that found the slot ready."""
        sh = self.shared  # type: ignore[attr-defined]
        # (no late ring here: registering waits for nothing, and the suspend exit rings them)
        if sh.is_bell(side, c):
            k = 0 if side == "RECV" else 1
            return [
                f"if dsync.ring_me(G.chan, G.wait.WAITON, CH_{c}, CAP_{c}, {k}, inst, RES_{side}_{c}):",
                f"    {outcome} = {attempt}",
            ]
        return [*sh.chan_register(side, c, flag), f"{outcome} = {attempt}"]

    def recv_lines(
        self, c: str, ci: str, rdy: str, target: str | None, ended: str | None, alone: bool = False
    ) -> list[str]:
        """Receive into ``target``; with ``ended``, also detect a closed, drained channel.
        The future's frame word ``ci`` (0 when it starts) is set once it waits in line;
        ``alone``: awaited by itself, so it may wait in place first (see ``poll``)."""
        sh = self.shared  # type: ignore[attr-defined]
        if groups.is_local(c):  # one attempt (alone: a few); the pinned warp polls again (codegen/groups.py)
            ch = self._chan(c)
            warp = self.warp
            into = self.out_target(target, groups.scratch(ch, rdy, warp))
            return groups.recv_lines(ch, rdy, into, ended, warp, alone, sh.local_how(c))
        counted = sh.counted(c)
        if counted is not None:
            assert ended is not None  # (a counted channel's every receive is a for await)
            return self._counted_lines(counted, rdy, target, ended)
        flag = f"FI[fb_i + {ci}]"
        is_float = self._chan(c).elem in ir.FLOATS
        data, scratch = ("G.chan.CHF", "G.exec.SCRATCH_F") if is_float else ("G.chan.CHI", "G.exec.SCRATCH_I")
        ring = f"BELL_SEND_{c} >= 0"  # the sender is a bell end: the take's exchange tells
        word = self.ring_word("SEND", c)
        ring = f"{ring}, HOW_{c}, {word}"
        took = f"took_{rdy}"  # dsync.RECV_TOOK or RECV_NONE
        none = f"{took} == dsync.RECV_NONE"
        if sh.has_tickets(c):
            return self._ticket_lines(c, flag, data, scratch, ring, took, rdy, target, ended, alone)
        arr, k = (f"rv_{c}", "0") if c in self.values else (scratch, "w")  # type: ignore[attr-defined]
        into = f"{arr}, {k}"
        later = alone and self.frees.get(self.current_site) == c  # type: ignore[attr-defined]
        tail = f"{ring}, True" if later else ring  # (True: the poll frees the slot, codegen/ends.py)
        take = f"dsync.chan_try_recv(G.chan, CH_{c}, CAP_{c}, {data}, {into}, LONE_RECV_{c}, {tail})"
        owned = f"dsync.chan_take(G.chan, CH_{c}, CAP_{c}, {data}, {into}, {{got}}, {tail})"
        looks = tuple(self.look_lines())  # early looks (ends.early_looks): as soon as a value is seen
        first = [f"{took} = {take}", *([f"if not ({none}):", *("    " + x for x in looks)] if looks else [])]
        if alone and self._no_try(c):
            # the wait's first turn is the try (an executor that may not wait gives up after it)
            first = [f"{took} = dsync.RECV_NONE  # the wait in place's first turn is the attempt"]
        lines = [
            *self.ring_flush((("SEND", c),)),  # the last receive's, before this one's takes its word
            *(self.look_resets() if later else []),  # type: ignore[attr-defined]
            *first,
            *(self._in_place("RECV", c, none, took, take, owned, looks) if alone else []),
            f"if {none}:",
            *("    " + x for x in self._wait_in_line("RECV", c, flag, took, take)),
        ]
        if ended is not None:
            lines += [
                f"{ended} = False",
                f"if {none} and dsync.chan_closed(G.chan.CHCLOSED, CH_{c}):",
                f"    {took} = {take}",
                f"    {ended} = {none}",
            ]
        lines += [f"{rdy} = not ({none})", f"if {rdy}:"]
        if not sh.is_bell("SEND", c):  # (a bell sender's: a late ring, ring_flush)
            lines += [f"    {sh.wake_one(f'RES_SEND_{c}')}"]
        else:
            lines += ["    pass"]
        lines += ["    " + x for x in sh.chan_done("RECV", c, flag)]
        lines += ["    " + x for x in self.out_target(target, f"{arr}[{k}]")]
        return lines

    def _no_try(self, c: str) -> bool:
        """Whether a lone receive of ``c`` awaited alone goes straight to its wait in place,
        whose first turn is its attempt (``TRY_FIRST`` off)."""
        sh = self.shared  # type: ignore[attr-defined]
        return not TRY_FIRST and sh.wait_in_place and sh.shapes is not None and sh.shapes.is_lone("RECV", c)

    def _counted_lines(self, k: Counted, rdy: str, target: str | None, ended: str) -> list[str]:
        """A receive of counted channel ``k.chan`` (codegen/counted.py): a ticket, and the
        send's value at that ticket computed here; the ticket that gives the sender the room
        for its last send wakes it."""
        c, tk, var = k.chan, f"tk_{rdy}", f"cv_{rdy}"
        render = ExprRenderer(var=lambda name: var if name == k.var else local(name))
        value = f"{NP[self._chan(c).elem]}({render(k.value)})"
        return [
            f"# a counted channel: ticket k's value is line {k.line}'s send at {k.var} = {k.start} + k",
            f"{tk} = dsync.counted_take(G.chan, CH_{c})",
            f"if {tk} == NEED_{c} - 1:  # the sender's last send would now find room: it may finish",
            "    dl.fence_sc()  # the ticket is out before the look at the line (dsync.counted_room)",
            f"    {self.shared.wake_all(f'RES_SEND_{c}')}",  # type: ignore[attr-defined]
            f"{ended} = {tk} >= COUNT_{c}",
            f"{rdy} = True",
            f"if not {ended}:",
            f"    {var} = {NP[k.var_ty]}({k.start} + {tk})",
            *("    " + x for x in self.out_target(target, value)),  # type: ignore[attr-defined]
        ]

    def _ticket_lines(
        self,
        c: str,
        word: str,
        data: str,
        scratch: str,
        ring: str,
        took: str,
        rdy: str,
        target: str | None,
        ended: str | None,
        alone: bool,
    ) -> list[str]:
        """A receive that takes a ticket first, kept in frame ``word`` plus one (0: none yet),
        and waits for that ticket's value alone (runtime/state.py, Tickets)."""
        sh = self.shared  # type: ignore[attr-defined]
        tk = f"tk_{rdy}"
        none = f"{took} == dsync.RECV_NONE"

        def take_of(t: str) -> str:
            return f"dsync.chan_take_ticket(G.chan, CH_{c}, CAP_{c}, {data}, {scratch}, w, {t}, {ring})"

        take = take_of(tk)
        lines = [
            *self.ring_flush((("SEND", c),)),
            f"{tk} = {word} - 1",
            f"if {tk} < 0:  # its ticket: one atomic, no race with the other receivers",
            f"    {tk} = dl.add(G.chan.CHHT, (CH_{c}, dl.HEAD), int64(1))",
            f"    {word} = {tk} + 1",
            f"{took} = {take}",
        ]
        if alone and sh.wait_in_place:
            spin = sh.spin("RECV", c, own=tk)
            got = f"got_{took}"  # the ticket (with dsync.PREREAD once its value is in the scratch word)
            took_got = take_of(f"{got} if {got} >= 0 else {tk}")
            flush = ["    " + x for x in self.ring_flush()]
            lines += [
                f"if {none}:",
                *flush,
                f"    {got} = {spin}",
                f"    if {got} != -1:",
                f"        {took} = {took_got}",
            ]
        lines += [
            f"if {none} and dsync.ticket_wait(G.chan, G.wait.WAITON, CH_{c}, CAP_{c}, {tk}, inst, RES_RECV_{c}):",
            f"    {took} = {take}",
        ]
        if ended is not None:
            lines += [f"{ended} = {none} and dsync.ticket_ended(G.chan, CH_{c}, {tk})"]
        lines += [f"{rdy} = not ({none})", f"if {rdy}:"]
        if not sh.is_bell("SEND", c):  # (a bell sender's: a late ring, ring_flush)
            lines += [f"    {sh.wake_one(f'RES_SEND_{c}')}"]
        lines += ["    " + x for x in self.out_target(target, f"{scratch}[w]")] or ["    pass"]
        return lines
