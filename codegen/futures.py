"""Polling each kind of future inside a poll function.

Every future has two renderers: ``init`` (lines run once, when the await
starts: arguments into the child frame, state words to zero) and ``poll``
(lines that set the Python bool ``rdy_<k>`` and, when it is true, store the
output). A future that cannot complete registers its instance on the wait
list of what it waits for before it reports "not ready", then checks once
more, so no wake is lost (devicesync.py). Child frames sit at ``ci``/``cf``
words from the frame bases (``fb_i``/``fb_f``); the planner laid them out.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from gasync.codegen import groups
from gasync.codegen.chanpolls import ChannelPolls
from gasync.codegen.ends import kept_names
from gasync.codegen.exprs import NP, fn_call, local, wrap
from gasync.codegen.machine import WAIT_ARGS
from gasync.planner import ir
from gasync.planner.frames import future_size

# in a poll on all lanes, after a local send's value is in the frame (FutureRenderer.init)
VALUE_STORED = "dl.lanes_ordered(G.exec.CMD, w)  # the lanes' stores of the value, before they read it back"


class FutureRenderer(ChannelPolls):
    """Mixed into the poll emitter; needs ``self.r``, ``self.types``, ``self.shared``."""

    def out_target(self, target: str | None, src: str) -> list[str]:
        if target is None:
            return []
        ty = self.types[target]  # type: ignore[attr-defined]
        if ty == "bool":
            return [f"{local(target)} = {src} != 0"]
        return [f"{local(target)} = {NP[str(ty)]}({src})"]

    def child_size(self, fut: ir.Future) -> tuple[int, int]:
        sh = self.shared  # type: ignore[attr-defined]
        return future_size(fut, sh.frames, sh.suspends)

    # ---- init ----
    def init(self, fut: ir.Future, ci: str, cf: str) -> list[str]:
        if isinstance(fut, ir.AsyncCall):
            return self._init_call(fut, ci, cf)
        if isinstance(fut, ir.Sleep):  # negative until its first poll (_poll_Sleep)
            return [f"FI[fb_i + {ci}] = -dl.deadline_after({self.r(fut.ns)})"]  # type: ignore[attr-defined]
        if isinstance(fut, ir.Send):
            lines = self._init_send(fut, ci, cf)
            kept = fut.chan in self.kept  # type: ignore[attr-defined]
            if groups.is_local(fut.chan) and self.warp and not kept:  # type: ignore[attr-defined]
                # every lane stored the value, and reads it back for the attempt: the lanes meet
                # between (another lane's store of one word is a hazard to racecheck)
                lines.append(VALUE_STORED)
            return lines
        if isinstance(fut, ir.Join):
            lines = [f"FI[fb_i + {ci}] = 0"]
            for sub, (si, sf) in zip(fut.futures, self.join_offsets(fut, ci, cf), strict=True):
                lines += self.init(sub, si, sf)
            return lines
        if isinstance(fut, ir.AsyncBlock):
            return [f"FI[fb_i + {ci}] = 0"]
        return [f"FI[fb_i + {ci}] = 0"]  # yield_now, recv, wait

    def _init_send(self, fut: ir.Send, ci: str, cf: str) -> list[str]:
        """The send's value into its frame words (computed once, when the send starts)."""
        value = f"{NP[self._chan(fut.chan).elem]}({self.r(fut.value)})"  # type: ignore[attr-defined]
        if self._chan(fut.chan).elem in ir.FLOATS:
            return [f"FF[fb_f + {cf}] = float64({value})", f"FI[fb_i + {ci}] = 0"]
        c = fut.chan
        if c in self.restored:  # type: ignore[attr-defined]  # in the frame only while suspended (poll.kept_words)
            return [f"{kept_names(c)[0]} = int64({value})", f"FI[fb_i + {ci}] = 0"]
        if c in self.kept:  # type: ignore[attr-defined]
            # kept in registers too: this poll's attempts send it without a load
            sv, ok = kept_names(c)
            keep = [f"{sv} = int64({value})", f"{ok} = True", f"FI[fb_i + {ci} + 1] = {sv}"]
            return [*keep, f"FI[fb_i + {ci}] = 0"]
        return [f"FI[fb_i + {ci} + 1] = int64({value})", f"FI[fb_i + {ci}] = 0"]

    def _init_call(self, fut: ir.AsyncCall, ci: str, cf: str) -> list[str]:
        sh = self.shared  # type: ignore[attr-defined]
        if not sh.suspends[fut.fn]:
            return []
        callee = sh.frames[fut.fn]
        fn = sh.plan.function(fut.fn)
        slots = dict(callee.int_slots) | dict(callee.float_slots)
        lines = []
        for (pname, pty), arg in zip(fn.params, fut.args, strict=True):
            value = f"{NP[pty]}({self.r(arg)})"  # type: ignore[attr-defined]
            if pty in ir.FLOATS:
                lines.append(f"FF[fb_f + {cf} + {slots[pname]}] = float64({value})")
            else:
                lines.append(f"FI[fb_i + {ci} + {slots[pname]}] = int64({value})")
        lines.append(f"FI[fb_i + {ci}] = 0")
        return lines

    def join_offsets(self, fut: ir.Join, ci: str, cf: str) -> list[tuple[str, str]]:
        """Children of a join (or arms of a select) side by side after one mask word."""
        out = []
        ni, nf = 1, 0
        for sub in fut.futures:
            out.append((f"{ci} + {ni}", f"{cf} + {nf}"))
            a, b = self.child_size(sub)
            ni, nf = ni + a, nf + b
        return out

    # ---- poll ----
    def poll(self, fut: ir.Future, ci: str, cf: str, rdy: str, target: str | None, alone: bool = False) -> list[str]:
        """``alone``: the future is awaited by itself (no select arm, no part of a join), so
        a channel send or receive may wait in place before it suspends."""
        if isinstance(fut, ir.Send) and groups.is_local(fut.chan):
            value = f"FF[fb_f + {cf}]" if self._chan(fut.chan).elem in ir.FLOATS else f"FI[fb_i + {ci} + 1]"
            if fut.chan in self.restored:  # type: ignore[attr-defined]  # its register, always (poll.kept_words)
                value = kept_names(fut.chan)[0]
            elif fut.chan in self.kept:  # type: ignore[attr-defined]  # this poll's start of it, else (resumed) the frame's
                value = "({} if {} else {})".format(*kept_names(fut.chan), value)
            how = self.shared.local_how(fut.chan)  # type: ignore[attr-defined]
            return groups.send_lines(self._chan(fut.chan), value, rdy, self.warp, alone, how)
        if isinstance(fut, ir.Send):
            return self._poll_Send(fut, ci, cf, rdy, target, alone)
        if isinstance(fut, ir.Recv):
            return self.recv_lines(fut.chan, ci, rdy, target, ended=None, alone=alone)
        method = getattr(self, "_poll_" + type(fut).__name__)
        lines: list[str] = method(fut, ci, cf, rdy, target)
        return lines

    def _poll_AsyncCall(self, fut: ir.AsyncCall, ci: str, cf: str, rdy: str, target: str | None) -> list[str]:
        sh = self.shared  # type: ignore[attr-defined]
        if not sh.suspends[fut.fn]:
            call = fn_call(fut.fn, [wrap(NP[str(a.ty)], self.r(a)) for a in fut.args], sh.checks)  # type: ignore[attr-defined]
            if target is None:
                return [call, f"{rdy} = True"]
            return [f"{local(target)} = {NP[str(self.types[target])]}({call})", f"{rdy} = True"]  # type: ignore[attr-defined]
        jb = sh.jb_arg(self.jb)  # type: ignore[attr-defined]
        extra = self.call_args(fut)  # type: ignore[attr-defined]
        got = f"code, {rdy}_v" if sh.frames[fut.fn].result is not None else "code"  # its value, in registers
        lines = [f"{got} = poll_{fut.fn}(inst, w, fb_i + {ci}, fb_f + {cf}, {jb}G, {extra})"]
        lines += self.forked()  # type: ignore[attr-defined]
        lines += [f"{rdy} = code == 1"]
        value = self.future_value(fut, rdy, target)
        return lines + ([f"if {rdy}:", *("    " + x for x in value)] if value else [])

    def future_value(self, fut: ir.AsyncCall | ir.AsyncBlock, rdy: str, target: str | None) -> list[str]:
        """Once a call or block is ready: its value into ``target`` (a call returned it beside
        its code, as ``<rdy>_v``)."""
        if isinstance(fut, ir.AsyncBlock):
            return [f"{local(target)} = {local(fut.result)}"] if target is not None and fut.result is not None else []
        callee = self.shared.frames[fut.fn]  # type: ignore[attr-defined]
        if target is None or callee.result is None:
            return []
        return self.out_target(target, f"{rdy}_v")

    def _poll_YieldNow(self, fut: ir.YieldNow, ci: str, cf: str, rdy: str, target: str | None) -> list[str]:
        return [
            f"{rdy} = FI[fb_i + {ci}] != 0",
            f"if not {rdy}:",
            f"    FI[fb_i + {ci}] = 1",
            f"    {self.shared.wake('inst', 'inst')}",  # type: ignore[attr-defined]
        ]

    def _poll_Sleep(self, fut: ir.Sleep, ci: str, cf: str, rdy: str, target: str | None) -> list[str]:
        """A sleep suspends at least once: its deadline word is negative until its first poll,
        which makes it positive and, where it is due already, goes to the back of the run queue
        as ``yield_now`` does. Completing in place let a loop of selects against a short sleep
        (due by the time the select came to it) keep its executor for ever, starving the
        tasks queued behind it (a sender it waits for, on one executor)."""
        at = f"{rdy}_at"
        sleep = f"dsync.sleep_register(G.sleep, SMASK, G.sched.CTL, inst, {at})"
        return [
            f"{at} = FI[fb_i + {ci}]",
            f"{rdy} = False",
            f"if {at} < 0:  # its first poll",
            f"    {at} = -{at}",
            f"    FI[fb_i + {ci}] = {at}",
            f"    if dl.now_ns() >= {at}:",
            f"        {self.shared.wake('inst', 'inst')}  # due: to the back of the run queue",  # type: ignore[attr-defined]
            "    else:",
            f"        {sleep}",
            "else:",
            f"    {rdy} = dl.now_ns() >= {at}",
            f"    if not {rdy}:",
            f"        {sleep}",
        ]

    def _poll_Wait(self, fut: ir.Wait, ci: str, cf: str, rdy: str, target: str | None) -> list[str]:
        k = f"SIGNAL_{fut.signal}"
        return [
            f"{rdy} = dl.signal_is_set(G.signals.SIG, {k})",
            f"if not {rdy}:",
            f"    dsync.register({WAIT_ARGS}, {k}, inst, G.sched.CTL)",
            f"    {rdy} = dl.signal_is_set(G.signals.SIG, {k})",
        ]

    def _poll_Join(self, fut: ir.Join, ci: str, cf: str, rdy: str, target: str | None) -> list[str]:
        # a join inside a join or a select arm: its values are not bound (the planner
        # rejects binding a tuple), only its completion counts
        return self.poll_join(fut, ci, cf, rdy, ())

    def poll_join(self, fut: ir.Join, ci: str, cf: str, rdy: str, targets: tuple[str | None, ...]) -> list[str]:
        """Poll every child not done yet; word ``ci`` keeps the mask of those done."""
        mask = f"{rdy}_mask"  # one per join: a join may hold another
        lines = [f"{mask} = FI[fb_i + {ci}]"]
        targets = targets or (None,) * len(fut.futures)
        children = zip(fut.futures, self.join_offsets(fut, ci, cf), self.job_offsets(fut.futures), targets, strict=True)
        for k, (sub, (si, sf), jb, tgt) in enumerate(children):
            sub_rdy = f"{rdy}_{k}"
            lines.append(f"if ({mask} >> {k}) & 1 == 0:")
            with self.jobs_from(jb):
                lines += ["    " + x for x in self.poll(sub, si, sf, sub_rdy, tgt)]
            lines.append(f"    if {sub_rdy}:")
            lines.append(f"        {mask} |= {1 << k}")
            if k < len(fut.futures) - 1:
                # into the frame at once: a later child's FORK leaves the poll from inside it,
                # and a child polled again after it is done would run its effects twice
                lines.append(f"        FI[fb_i + {ci}] = {mask}")
        lines.append(f"FI[fb_i + {ci}] = {mask}")
        lines.append(f"{rdy} = {mask} == {(1 << len(fut.futures)) - 1}")
        return lines

    jb = "jb"  # the first bulk job row of the future being polled (codegen/jobs.py)

    def job_offsets(self, futures: tuple[ir.Future, ...]) -> list[str]:
        """Each future's first bulk job row, when several are polled side by side."""
        jobs = self.shared.jobs  # type: ignore[attr-defined]
        offsets = jobs.offsets(futures) if jobs is not None else [0] * len(futures)
        return [f"{self.jb} + {off}" if off else self.jb for off in offsets]

    @contextmanager
    def jobs_from(self, jb: str) -> Iterator[None]:
        """Render a future whose bulk job rows start at ``jb``."""
        saved, self.jb = self.jb, jb
        try:
            yield
        finally:
            self.jb = saved

    def _poll_AsyncBlock(self, fut: ir.AsyncBlock, ci: str, cf: str, rdy: str, target: str | None) -> list[str]:
        name = self.block_name(fut)  # type: ignore[attr-defined]
        lines = self.spill_all()  # type: ignore[attr-defined]
        jb = self.shared.jb_arg(self.jb)  # type: ignore[attr-defined]
        lp = groups.locals_param(self.shared.plan, self.fn.name)  # type: ignore[attr-defined]
        lines.append(f"code = {name}(inst, w, fb_i, fb_f, fb_i + {ci}, fb_f + {cf}, {jb}G{lp})")
        lines += self.restore_all()  # type: ignore[attr-defined]
        lines += self.forked()  # type: ignore[attr-defined]
        lines.append(f"{rdy} = code == 1")
        value = self.future_value(fut, rdy, target)
        return lines + ([f"if {rdy}:", *("    " + x for x in value)] if value else [])
