"""What every function emitter of one program shares: the plan, what emitting found, and
the calls that several emitters write (wakes, a channel's wait list), with the codes a poll
returns (split out of machine.py, which re-exports them)."""

from __future__ import annotations

from dataclasses import dataclass, field

from gasync.codegen import groups
from gasync.codegen.bounds import Checks
from gasync.codegen.counted import Counted
from gasync.codegen.jobs import JobWidths
from gasync.codegen.shapes import OPEN, ChannelShapes
from gasync.planner import ir
from gasync.planner.model import FrameLayout, Plan

READY, PENDING, DONE_STATE = 1, 0, -1
WAIT_ARGS = "G.wait, N_INST, WMASK"  # the wait lists, for dsync.register
FRAME = "FI, FF = G.frames.FI, G.frames.FF  # this instance's frame words: FI[fb_i:], FF[fb_f:]"
ABORT = 3  # a poll returns this when the run's deadline passed inside one of its loops
FORK = 2  # a poll returns this to have its warp run a parallel loop with all lanes, then polls again
COMPOUND = {"+=": "+", "-=": "-", "*=": "*", "/=": "/", "%=": "%", "&=": "&", "|=": "|", "^=": "^", "<<=": "<<"}
COMPOUND[">>="] = ">>"


class UnsupportedError(Exception):
    """A construct this code generator does not handle yet (reported with its span)."""

    def __init__(self, what: str, span: object):
        super().__init__(what)
        self.what = what
        self.span = span


@dataclass
class ParallelLoop:
    """A ``parallel for`` body, emitted as its own device function."""

    gid: int
    fn: str
    loop: ir.For
    captured: tuple[tuple[str, ir.Ty], ...]  # (local, type), in argument-row order
    n_int: int = 0
    n_float: int = 0
    bulk: bool = False  # a bulk for: arguments in JOBARGS[job], chunks of it run by any warp
    # a reducing loop's value: ('I'/'F', its JOBARGS word) for a bulk loop, ('FI'/'FF', the AI word
    # that holds the index of its frame word) for a parallel one
    result: tuple[str, int] | None = None
    inst_word: int | None = None  # where a body with bounds checks finds its task instance (AI; -1: inline's parameter)
    inline: bool = False  # called where it stands by a poll on all 32 lanes (codegen/warppoll.py)


@dataclass
class Shared:
    """What every function emitter shares: the plan and what emitting found."""

    plan: Plan
    suspends: dict[str, bool]
    frames: dict[str, FrameLayout]
    parallel: list[ParallelLoop] = field(default_factory=list)
    blocks: list[tuple[ir.AsyncBlock, str]] = field(default_factory=list)  # (block, enclosing function)
    has_sleep: bool = False
    trace: bool = False  # record polls and wakes into TRACE
    warp: frozenset[str] = frozenset()  # the groups whose tasks are polled on all 32 lanes (codegen/warppoll.py)
    trace_channels: tuple[tuple[int, ...], ...] = ()  # per task, the channels its traced polls sample
    # a channel's send or receive wakes one waiter, not all: see channel_wakes_one()
    wake_one_ok: bool = True
    jobs: JobWidths | None = None  # bulk job rows (codegen/jobs.py)
    shapes: ChannelShapes | None = None  # lone and bell channel ends (codegen/shapes.py)
    checks: Checks | None = None  # run-time bounds checks (codegen/bounds.py; None: off)
    dispatch_sizes: list[tuple[str, int]] = field(default_factory=list)  # (function, blocks) per dispatch loop
    # (task, state, what) for the states of a task's own word that are no await site: a
    # parallel or bulk for, a select waiting for its losing arms' bulk chunks
    internal_states: list[tuple[str, int, str]] = field(default_factory=list)

    @property
    def wait_in_place(self) -> bool:
        """Whether a channel await may wait in place (runtime/state.py, Waiting in place):
        in a program with channels, when untraced (a trace shows each suspension)."""
        return bool(self.plan.channels) and not self.trace

    def spin(
        self, side: str, c: str, look: str | None = None, own: str | None = None, into: str | None = None, first=False
    ) -> str:
        """A call that waits in place until channel ``c``'s ``side`` ("RECV" or "SEND") is
        ready, while the executor has nothing else to run (codegen/services.py says what it
        returns); ``look``: a channel whose early look it takes in its turns (a receive's);
        ``own``: the ticket a receive holds (runtime/state.py, Tickets), else its end's own;
        ``into``: the array and index a flagged value's halves go to (the scratch row's by default);
        ``first``: no attempt came before it (its first turn is the await's first attempt: a busy
        executor gives up after that turn, not before it)."""
        at = f"CH_{look}, CAP_{look}" if look is not None else "-1, 1"
        k = 0 if side == "RECV" else 1
        end = f"LONE_{side}_{c}, -1" if own is None else f"False, {own}"
        into = into or "G.exec.SCRATCH_I, w"
        return f"await_in_place({k}, CH_{c}, CAP_{c}, {end}, w, G, HOW_{c}, {at}, {into}, {first})"

    @property
    def job_width(self) -> int:
        return self.jobs.per_instance if self.jobs is not None else 1

    def jb_arg(self, jb: str) -> str:
        """``jb``, the first bulk job row, as an argument of a poll call ('' where every
        instance has one row and the row is the instance)."""
        return f"{jb}, " if self.job_width > 1 else ""

    def job_row(self, jb: str = "jb") -> str:
        """The bulk job row that starts at ``jb`` (the poll function's own by default)."""
        return "inst" if self.job_width == 1 else f"inst * {self.job_width} + {jb}"

    @property
    def has_service(self) -> bool:
        """Whether ``service`` has work: host signals or sleepers (the module's HAS_SERVICE)."""
        return bool(self.plan.signals) or self.has_sleep

    def wake(self, inst: str, waker: str) -> str:
        """A call that makes ``inst`` runnable (recording it when tracing)."""
        if self.trace:
            return f"dsync.wake_traced(G.sched, QMASK, G.TRACE, w, {waker}, {inst})"
        return f"dl.wake(G.sched, QMASK, {inst})"

    def wake_all(self, resource: str, waker: str = "inst") -> str:
        """A call that wakes every waiter of ``resource``."""
        return self._wake_waiters(resource, "N_INST", waker)

    def wake_one(self, resource: str, waker: str = "inst") -> str:
        """A call that wakes the oldest waiter of ``resource`` (every waiter where a
        waiter might not try ``resource`` again: see ``wake_one_ok``)."""
        return self._wake_waiters(resource, "1" if self.wake_one_ok else "N_INST", waker)

    def _wake_waiters(self, resource: str, most: str, waker: str) -> str:
        args = f"G.sched, QMASK, G.wait, N_INST, WMASK, {resource}, {most}"
        if self.trace:
            return f"dsync.wake_waiters_traced({args}, G.TRACE, w, {waker})"
        return f"dsync.wake_waiters({args})"

    def chan_register(self, side: str, c: str, flag: str) -> list[str]:
        """``inst`` joins the line of channel ``c``'s senders or receivers; ``flag`` (a
        frame word of the future, 0 when it starts) remembers that it did."""
        marked = [f"{flag} = 1"] if self.wake_one_ok else []
        return [*marked, f"dsync.register({WAIT_ARGS}, RES_{side}_{c}, inst, G.sched.CTL)"]

    def local_how(self, c: str) -> int:
        """How local channel ``c``'s ends claim: its LCH_ bits (codegen/shapes.py local_how;
        without shapes, 0: every end claims with a cas and looks for a close)."""
        return self.shapes.local_how.get(c, 0) if self.shapes is not None else 0

    def has_tickets(self, c: str) -> bool:
        """Whether channel ``c``'s receives take tickets (codegen/shapes.py): none waits in line."""
        return self.shapes is not None and c in self.shapes.tickets

    def defers(self, c: str) -> bool:
        """Whether channel ``c``'s sender defers its looks for waiting ticket holders."""
        return self.shapes is not None and self.shapes.defers(c)

    def credits(self, c: str) -> bool:
        """Whether channel ``c``'s sender keeps credits: its sends go through a cursor, two
        registers of its poll (runtime/devicecredit.py, credited_send)."""
        return self.shapes is not None and self.shapes.credits(c)

    def cursors(self, task: str) -> tuple[str, ...]:
        """The channels whose cursor task ``task``'s poll holds."""
        return self.shapes.crediting.get(task, ()) if self.shapes is not None else ()

    def looks_early(self, c: str) -> bool:
        """Whether channel ``c``'s sender looks at its next send's slot early, as its poll
        completes a receive (runtime/devicechan.py, chan_look): one sending instance, no task
        closes the channel, and no credits (a crediting sender reads its slots ahead already)."""
        s = self.shapes
        if s is None or groups.is_local(c) or not s.is_lone("SEND", c) or s.credits(c):
            return False
        return bool(s.how.get(c, 0) & OPEN)

    def counted(self, c: str) -> Counted | None:
        """Channel ``c``'s values by ticket, where it is a counted channel (codegen/counted.py)."""
        return self.shapes.counted.get(c) if self.shapes is not None else None

    def is_bell(self, side: str, c: str) -> bool:
        """Whether channel ``c``'s ``side`` end is a bell end (codegen/shapes.py): it waits on
        a bit in the slot word and never joins a wait list."""
        return self.shapes is not None and self.shapes.bell(side, c) is not None

    def chan_done(self, side: str, c: str, flag: str) -> list[str]:
        """After ``inst``'s send or receive on channel ``c`` completed (or lost a select):
        if it had joined the line, it leaves it, and a wake spent on it and not used
        passes on to the next waiter of that side. One that never joined the line
        (the usual case for a producer that keeps ahead) costs nothing here."""
        if not self.wake_one_ok or self.is_bell(side, c) or (side == "RECV" and self.has_tickets(c)):
            return []
        res = f"RES_{side}_{c}"
        return [
            f"if {flag} != 0 and dsync.deregister(G.wait.WREG, N_INST, {res}, inst) != dsync.REG_WAITING"
            f" and dsync.chan_can_{side.lower()}(G.chan, CH_{c}, CAP_{c}):",
            f"    {self.wake_one(res)}",
        ]
