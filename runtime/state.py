"""Every array, word and column of the executor's device state, by name, with its protocol.

This module imports nothing from Numba: the host (runtime/launch.py, the
reports) and the device layer (devicelib.py, devicesync.py, the generated
kernel) read the same names from it (the words' indices are defined in
runtime/statewords.py and named here too). Device code uses their plain-int copies
in runtime/words.py (Numba freezes a module's ints into the kernel as
constants); host code may use the enums. It runs past the house's 400 lines on
purpose: it is the one place where every word of device state is named and its
protocol written down, and a protocol split from its names would be read apart.

Groups. The kernel takes the whole state as one argument ``G``, a namedtuple
of groups, one per concern below, each a namedtuple of arrays (Numba passes
nested namedtuples of arrays to a kernel on the GPU and in the simulator
alike), then ``TRACE`` and the program's own arrays (``B_<buffer>``,
``S_<shared scalar>``). Generated code reads ``G.sched.ST`` or ``G.B_out``;
a device helper takes the group it works on (``dl.wake(G.sched, QMASK, inst)``).
:data:`GROUPS` is the table of G's groups in order; each generated module
builds its own ``State`` class from it and its program's arrays (the class
must be importable by name: Numba's disk cache keys the kernel on the types of
its arguments). The groups:

- ``G.frames`` (:class:`Frames`): every instance's frame.
- ``G.sched`` (:class:`Scheduler`): the run's control words, each instance's
  state, the run queue, and the fresh instances of each task.
- ``G.wait`` (:class:`WaitLists`): one wait list per resource.
- ``G.chan`` (:class:`Channels`): every channel's ring.
- ``G.signals`` (:class:`Signals`): signals, and those the host will set.
- ``G.sleep`` (:class:`Sleepers`): the sleepers' ring.
- ``G.jobs`` (:class:`BulkJobs`): posted ``bulk for`` jobs.
- ``G.exec`` (:class:`Executors`): each executor's (warp's) own rows.
- ``G.TRACE``: a traced run's events, a row of ``TraceCol`` columns each (Trace below;
  one row where the run is not traced).

Memory order. Words that several SMs touch are read with ``ld.relaxed.gpu``
(``dl.ld``) or ``ld.acquire.gpu`` (``order.ld_acquire``) and written with
atomics or ``st.release.gpu``; no word is read with a plain load inside a spin
loop (the compiler would hoist it). Each acquire below names the release it
pairs with; a release is cumulative over what its thread has observed, so a
chain release -> acquire -> release -> acquire carries writes along.

No lost wake. A waiter registers on a wait list (RMWs whose results it waits for)
and then looks at what it waits for again; a waker changes it (a channel's slot
sequence, a channel's closed flag) and then looks for waiters. Each side's write
must be performed before its look, or both may miss each other: the waiter's
RMWs are, as it branches on their results; the waker's publishing store is
followed by ``fence.sc.gpu`` (``order.fence_sc``), since a later load may pass a
release store. A signal's set is an RMW whose result the setter branches on.
A bell end (codegen/shapes.py: a lone end that awaits each operation on its
own) needs neither: it waits by setting ``WAIT_BIT`` in the sequence word of its
slot with an RMW (its old value is the second look), and the other end writes
that slot with an exchange, which returns the bit: one word both sides meet on.
The exchanger tests the bit late (codegen/ends.py, ``ring_flush``): the old word
stays in a register until its next operation of that end, a wait in place, a
loop's turn or the poll's return, so no hand-off waits for the exchange's result.

``CTL``, the run's control words (int64). Words written often sit on their own
128-byte line (``LINE`` words apart), so that the idle executors' reads of
``EXIT`` do not queue behind the atomics on ``INFLIGHT`` and ``DONE``.

- ``EXIT``: 0 while the run goes on, else an ``Exit`` code. Set once, by the
  first ``cas`` from 0; every executor leaves when it sees it non-zero, and so
  does every loop that looks at the deadline (``dl.overdue``).
- ``DETAIL``: what the exit code is about (an instance id), stored after the
  ``cas`` that set ``EXIT`` won; with ``Exit.TIMEOUT``, ``GAVE_UP`` where a loop of a
  plain fn or of a parallel loop's body gave up at the deadline (``dl.stop_overdue``):
  the run failed even if every task then finished, on values cut short.
- ``DEADLINE``: device time after which every executor stops (0: none); the first to start sets it.
- ``EXECUTORS``: set by the host: the warps of the launch.
- ``INFLIGHT``: instances that are ready, queued, running or asleep, plus
  posted bulk jobs and host signals being delivered. The deadlock rule: when it
  reads 0 (twice, around a look at the host's signals) while instances remain,
  nothing can ever wake them. Whoever hands work on counts the new unit
  *before* uncounting its own, so it never reads 0 while work exists.
- ``DONE``: instances finished, in batches, each before its release decrement of ``INFLIGHT``;
  the batch that completes it sets ``EXIT`` (``count_done``), which idle executors read.
- ``TRACE_N``: trace events recorded, including those that did not fit.
- ``CLOSED_SENDS``: values sent on a closed channel (dropped).
- ``JOB_EPOCH``: bulk jobs posted so far (see Bulk jobs below).
- ``FAULTS``: buffer accesses that failed their bounds check (``dl.bounds_fault``),
  counted with an atomic add by each one, the first included; on a line of its own,
  as every lane of a warp may fault at once.
- ``FAULT_SITE``, ``FAULT_INDEX``, ``FAULT_DIM``: the first fault's check (its row
  of the generated module's ``BOUNDS_SITES``), the index it met and the
  dimension (0 or 1); plain stores by the fault whose ``cas`` set ``EXIT`` to
  ``Exit.BOUNDS`` (``DETAIL`` holds its instance), read by the host after the kernel.

A ring (the run queue ``Q*``, each resource's wait list ``W*``, the sleepers
``S*``) is Vyukov's bounded queue: a sequence number per slot, ``HEAD`` and
``TAIL`` tickets on their own lines. A producer with ticket ``t`` waits for
``seq == t`` (acquire: pairs with the consumer's release of the slot), writes
the value, then ``st.release`` ``seq = t + 1`` (pairs with the consumer's
acquire). A consumer with ticket ``t`` waits for ``seq == t + 1`` (acquire),
takes ``HEAD`` with a ``cas``, reads the value, then ``st.release``
``seq = t + capacity`` (pairs with the next producer's acquire). A full ring is
a gasync bug, reported loudly (``Exit.QUEUE_FULL`` and friends), never dropped.

``ST[inst]`` (int32), an instance's ``Sched`` state: FRESH until the executor
that claims it (a fresh instance, ``claim``) stores RUNNING and polls it; a wake
leaves a FRESH instance as it is, since its first poll sees all that came
before (a close or a bell that queued it would have had two executors poll it at
once: the claimant and the queue's). IDLE -> QUEUED by the
waker's ``cas`` (acquire-release: it acquires the poller's release of IDLE and
its own push then releases the frame onwards); QUEUED -> RUNNING by the
executor that popped it; RUNNING -> NOTIFIED by a waker that finds it running
(the poller re-queues it); RUNNING -> IDLE by the poller's release ``cas``
(releases the frame stores of the poll); RUNNING -> DONE.

Channels. ``CSEQ[c, i * LINE]`` (each slot on its own line) is a slot's sequence: ``2t`` while it waits for the
value of send ticket ``t``, ``2t + 1`` while that value waits for receive
ticket ``t``. The sender publishes the value with ``st.release`` of ``2t + 1``;
the receiver's ``ld.acquire`` of the sequence pairs with it; the receiver frees
the slot with ``st.release`` of ``2(t + capacity)``, which the next sender of
that slot acquires. ``TAIL`` and ``HEAD`` are taken with a ``cas``, except where
the program has one sending (receiving) instance for the channel (codegen's
``lone_senders``, from the tasks' effects): its polls never overlap, so it takes
its ticket with a plain store, which it alone reads (an instance that moves to
another executor moves through the run queue's or its state word's release and
acquire, which carry the store along).

Tickets. Where every receive of a channel is awaited on its own in a task's body
but many instances receive (codegen/shapes.py: ``TICKETS_c``), a receive takes
its ticket ``t`` up front with one ``atom.add`` on ``HEAD`` (kept in the
future's frame word) and waits for slot ``t``'s value only: no ``cas`` race
among the receivers, whichever number of them wait. To suspend, it writes its
instance into ``CTW[c, t mod (TMASK + 1)]`` with an exchange and looks at the
slot again after a ``fence.sc``; the sender of ticket ``t``, after its publish
and fence, exchanges that word with 0 and wakes whoever it held (at most one
ticket per receiving instance is out, and the table has a word for more tickets
than there are instances and a deferring sender's run between two looks together
(hoststate.py, ``ticket_words``), so live tickets never share a word; a stale entry
only gives a spurious wake, after which its holder registers again). A close wakes
the holders of every ticket past the tail; a ticket at or past the tail of a closed
channel is never served.

Flagged words, credits, deferred looks (codegen/shapes.py, ``HOW_c``). Where the one sending
instance does nothing before a send that another task must see ordered (no write, atomic or
shared-scalar update, and reads only of buffers and scalars no task writes, up to its last
statement with a send of ``c``), a send needs no release: ``FLAGGED`` channels (integers only)
carry each value as two halves, the low and the high 32 bits, each beside a 31-bit tag ``2t + 1``
(words ``HALF_LO`` and ``HALF_HI`` of the slot's sequence line), written with relaxed stores
before the sequence (relaxed too). A receiver that saw the sequence re-reads the halves until both
carry its tag (the sender stored them first, so they arrive). Where every receiving task is as
clean before its receives, ``QUIET_FREE`` frees a slot with a relaxed write (after the loads of
its halves, on whose values it depends). A ``CREDITS`` sender (flagged, and awaiting nothing but
its sends of ``c``) reads up to eight slots' sequences at once when its ``CREDIT`` runs out, and
with them the closed flag (after an acquire fence where the frees are releases, so a close that
came before a free is seen); below ``CREDIT`` a send reads nothing: two stores and the sequence's.
Holders of tickets count themselves into ``REGISTERED`` before they write ``CTW`` (then
``fence.sc`` and look again); a sender looks at ``CTW`` only when, after its ``fence.sc``,
``REGISTERED`` is not 0 (the two fences order it: either the sender sees the count and the
holder's word, or the holder's second look sees the value). A ``DEFER`` sender (crediting, with
ticketed receivers) makes that look once for a run of sends (``CHECKED`` to ``TAIL``): as it reads
its next credits (one ``fence.sc`` then serves the look and the frees' acquire, and ``REGISTERED``
is read beside the closed flag), before it waits, at a close, and when its poll returns. Within
one poll the sender keeps its tail and credit in registers (a cursor: ``cur_c``, two int64 the
compiler keeps out of memory), and the value of a send it started there (``sv_c``): both words are
its own, so below its credit a send loads nothing at all. A ``for`` whose body is one such send
runs its sends below the credit in a row of their own (``put_credited``: the stores alone, no
state word, frame word or dispatch). A *calm* end (``CALM_RECV``: the sends are flagged;
``CALM_SEND``: the frees are quiet; and every task of that end reads no buffer or scalar a task
writes) reads the sequences relaxed: the other end's write released nothing, and no line of its L1
can be stale. Other ends spin relaxed too and acquire once with ``fence.acquire`` when the slot is
ready. *Early looks* (devicechan.py, ``chan_look``): the lone sender of an ``OPEN`` channel that
also receives loads its next send's slot sequence (relaxed) as a receive completes, beside the
receive's own loads; the send takes it where it equals ``2 * TAIL`` (a slot seen free stays free
until its one sender fills it), with ``fence.acquire`` unless calm. *Deferred frees*
(devicechan.py, ``free_first``): a lone receive of a bell sender's channel whose next await is a
send on another leaves its slot's free to that send, made right before its publish (both exchanges
in flight at once), else after its attempt and before any wait, suspend, return, loop or receive
of that channel (codegen/ends.py, ``free_lines``). While the ring's word 1 holds the owed
ticket + 1, that send trusts its early look's ``2 * TAIL``.

Waiting in place. A channel send or receive awaited on its own (not a
``select`` arm or a part of a ``join``) that finds the channel full or empty
first waits for it inside the poll, while its executor has nothing else to run:
``EXS[w, SPIN]`` is 1 when the executor holds no claimed fresh instance still to
start. It re-reads the slot's sequence (relaxed: only a hint; the real take or
put follows) and stops when queued instances or unclaimed fresh ones have waited
a while for an idle executor to take them, a bulk for was posted, the run is
exiting, or ``SPIN_NS`` has passed; then
it registers and suspends as usual, so the deadlock check is only delayed, never
fooled (a spinning instance is RUNNING, counted in ``INFLIGHT``). While it
waits, it delivers host signals and wakes due sleepers for the others.
A hand-off between two waiting tasks then costs no wait list, wake or run
queue. Not in traced programs: a trace shows every suspension as it happens.

Bulk jobs. ``JOB[j]`` holds a posted ``bulk for``'s fields (``Job`` columns);
the poster writes them and the job's arguments, then publishes ``j`` into a
free ``JOBSLOTS`` entry with a release ``cas`` and bumps ``JOBEPOCH`` (release);
an idle executor reads ``JOBEPOCH`` and scans the slots only when it moved,
reading each slot with an acquire load (pairs with the poster's release). A
warp that ran a chunk adds to ``Job.DONE`` with an acquire-release add after
its lanes' ``syncwarp``: the last one acquires every chunk's stores and wakes
the parent with a release.

Trace. ``TRACE`` (int64, a row per event, only in a program generated with
``trace=True``) has the ``TraceCol`` columns; ``CTL[TRACE_N]`` hands out rows
with one atomic add per event (a count past the capacity is a dropped event).
A ``POLL`` row also holds three *counters* sampled as the poll ends, after its
``t1``: the run queue's length (``QHT`` tail less head), the instances in flight
(``CTL[INFLIGHT]``), and, from ``TraceCol.CHANNELS`` on, the occupancy (tail
less head of its ``CHHT`` row) of each channel the polled task sends or
receives on (``Generated.trace_channels``: that task's channels, in the plan's
order; a program's rows are ``TRACE_WORDS`` plus its widest task's channels).
Why there: the poll already pays the one atomic for its row, and a counter
costs one or two relaxed loads and a store into that row, with no atomic and
no row of its own; a channel changes only in the polls of tasks that use it,
so the ends of those polls see each of its changes. The loads are relaxed and
apart (a head is read before its tail), so a sample may be skewed by what
other executors did meanwhile: the host clamps an occupancy into 0..capacity.
In flight is the deadlock check's count (``INFLIGHT`` above): it counts the
polled instance itself, a sleeper twice while it also runs (a ``select``'s
sleep arm), and instances that finished but whose executor has not yet
added them to ``DONE`` (it does so in batches, see ``flush_done``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from gasync.runtime.statewords import (  # the word indices, re-exported: this docstring describes them
    CMD_EXIT,  # noqa: F401
    CMD_WORDS,  # noqa: F401
    CTL_WORDS,  # noqa: F401
    EVENT_WORDS,  # noqa: F401
    EXS_INITIAL,  # noqa: F401
    EXS_WORDS,  # noqa: F401
    JOB_WORDS,  # noqa: F401
    LINE,  # noqa: F401
    RING_WORDS,  # noqa: F401
    STAT_WORDS,  # noqa: F401
    TRACE_WORDS,  # noqa: F401
    ChanWord,  # noqa: F401
    Cmd,  # noqa: F401
    Ctl,  # noqa: F401
    Exit,  # noqa: F401
    Exs,  # noqa: F401
    Job,  # noqa: F401
    Ring,  # noqa: F401
    Sched,  # noqa: F401
    Stat,  # noqa: F401
    TraceCol,  # noqa: F401
    TraceKind,  # noqa: F401
)

SLOT_WORDS = LINE  # CSEQ words per channel slot: each slot's sequence on a line of its own
# flagged halves in the sequence's line (word 1 is free_first's): one L2 slice for all three
# (bench/NOTES.md: in arrays of their own they were no slower, runs 52-53, and took 22 more instructions)
HALF_LO, HALF_HI = 2, 3
CREDIT_RUN = 8  # slots a crediting sender's credit read takes at once (runtime/devicecredit.py)


class Frames(NamedTuple):
    """G.frames: the frames of every task instance, laid out by the planner (word 0 of an
    instance's int words is its poll state). Only its own instance's poll touches a frame."""

    FI: Any  # int64 words
    FF: Any  # float64 words


class Scheduler(NamedTuple):
    """G.sched: what decides who runs (the rings' and words' protocols: the docstring above)."""

    ST: Any  # int32 per instance: its Sched state
    QSEQ: Any  # the run queue: a sequence number per slot,
    QDATA: Any  # the instance in each slot,
    QHT: Any  # and its Ring tickets
    CTL: Any  # the run's control words (Ctl)
    CURSOR: Any  # per task: its fresh instances claimed so far (fetch-add)
    PRED: Any  # per task: instances of its predecessors still to finish (0: it may start)


class WaitLists(NamedTuple):
    """G.wait: a ring of waiting instances per resource (a signal, or a channel's receive
    or send side; devicesync.py), one row each, and a flag per (resource, instance)."""

    WSEQ: Any
    WDATA: Any
    WHT: Any  # Ring tickets, a row per resource
    WREG: Any  # int32 per (resource, instance): 0 not listed, REG_WAITING, REG_STALE
    WAITON: Any  # int32 per instance: the last resource it waited on, plus one (deadlock reports)


class Channels(NamedTuple):
    """G.chan: a row per channel; its value slots are CHI (integers) or CHF (floats)."""

    CSEQ: Any  # a sequence per slot (the Channels protocol above)
    CHI: Any
    CHF: Any
    CHHT: Any  # ChanWord columns: the Ring tickets (HEAD receives, TAIL sends) and the words beside them
    CHCLOSED: Any  # int32 per channel: 1 once closed (release; receivers acquire)
    CTW: Any  # int32 per (channel, ticket mod TMASK + 1): the ticket's waiting receiver + 1, or 0


class Signals(NamedTuple):
    """G.signals: a word per signal."""

    SIG: Any  # int32: 1 once set (release; waiters acquire)
    HOSTSIG: Any  # int32, in host-mapped memory: the host sets it (read with a system-scope acquire)
    HOSTPEND: Any  # int32: 1 where the host will set the signal during the run


class Sleepers(NamedTuple):
    """G.sleep: one ring of sleeping instances, looked at by idle executors.

    A sleep suspends at least once (codegen/futures.py, ``_poll_Sleep``): its frame word holds
    its deadline negated until its first poll, and one due by then goes to the back of the run
    queue, as ``yield_now`` does, instead of onto this ring; so a loop of selects against a
    short sleep leaves its executor between turns."""

    SSEQ: Any
    SDATA: Any
    SHT: Any  # Ring tickets
    UNTIL: Any  # int64 per instance: the device time it sleeps until (0: not asleep)


class BulkJobs(NamedTuple):
    """G.jobs: posted ``bulk for`` loops (the Bulk jobs protocol above)."""

    JOB: Any  # a row of Job columns per job
    JOBARGS_I: Any  # the loop's captured locals, a row per job
    JOBARGS_F: Any
    JOBSLOTS: Any  # int64 per slot: a posted job's id, or -1


class Executors(NamedTuple):
    """G.exec: a row per executor (warp): touched by that warp only, except STATS (the host)."""

    CMD: Any  # what lane 0 hands the warp (Cmd)
    EXS: Any  # lane 0's variables while its lanes run a command (Exs)
    PARGS_I: Any  # a parallel for's range and captured locals, or a bulk chunk's range
    PARGS_F: Any
    SCRATCH_I: Any  # a received value on its way to a local
    SCRATCH_F: Any
    STATS: Any  # counters for the host (Stat)


# G's groups in order: (field of G, its namedtuple). G ends with TRACE, then the program's
# buffers (B_<name>) and shared scalars (S_<name>), in the Plan's order.
GROUPS: tuple[tuple[str, type], ...] = (
    ("frames", Frames),
    ("sched", Scheduler),
    ("wait", WaitLists),
    ("chan", Channels),
    ("signals", Signals),
    ("sleep", Sleepers),
    ("jobs", BulkJobs),
    ("exec", Executors),
)
STATE_FIELDS = (*(name for name, _ in GROUPS), "TRACE")  # G's fields before the program's arrays


# ---- groups (v1): words in a block's shared memory (runtime/devicegroups.py) -------
# Group instances are claimed by whole blocks: thread 0 of a block takes the next
# instance of a group whose predecessors are done with a fetch-add on CURSOR[k], k the
# group's first task (claim() never claims a group's tasks), and tells its block through
# the block words; the block's warps run that instance's task instances, one each, and
# meet at __syncthreads when all are done. The block words (int64, shared memory):
# - PICK: the group instance the block runs next (group number * 2^32 + instance), or -1.
# - WANT, in EXS's row of the block's first warp (device memory: Numba links a shared array
#   declared in a device function badly): set by the block's first warp to see a claimable
#   group instance at a service point, with an exchange; every warp of the block leaves the
#   executor (command CMD_GROUPS) when it sees it (relaxed loads: it orders nothing). Thread 0
#   clears it as the block meets, or sets WANT_BUSY as it takes an instance: spare warps (beyond
#   its tasks) run the executor until its last task instance ends and sets WANT (GW_LIVE).
# - STOP: CTL's EXIT as thread 0 read it after the block met: the whole block leaves together.
# - TURN: how far the block turns its group's task layout round its warps, its first warp's
#   hardware slot / 4 (devicegroups.warp_slot), set once by thread 0: an SM's scheduler k
#   issues the warps of slots k, k + 4, ..., so a two-warp group laid out the same in every
#   block would put all its compute warps on two of the four (codegen/groupkernel.py).
# A local channel is a ring of ``cap`` slots in shared memory (Vyukov's bounded queue): words
# SEND (positions claimed by senders), RECV (by receivers), CLOSED, then ``cap`` sequence words
# and ``cap`` value words. A slot's sequence is 2p while it is free for position p and 2p + 1
# while it holds p's value (with p and p + 1 instead, a ring of one slot would read "holds 0"
# as "free for 1"). A sender claims position p with a cas_acq_rel_cta of SEND when slot
# p % cap's sequence is 2p, writes the value, and publishes it with st_release_cta(seq, 2p + 1);
# a receiver's ld_acquire_cta of the sequence pairs with that release, claims p with a cas of
# RECV when the sequence is 2p + 1, reads the value and frees the slot with
# st_release_cta(seq, 2(p + cap)), which the sender of p + cap acquires. close is
# st_release_cta(CLOSED, 1): a receiver that finds the ring empty acquires it and ends only
# when no sender has claimed a position it has not seen (SEND == RECV). The view (lch_view)
# grows at each claim, close, free of SEND's slot and publish of RECV's, and never falls: a
# claim and its publish (or free) are two moments, and a warp that polled between them and found
# its slot not ready must see the second change the view, or the instance's stuck check
# (docs/groups.md, invariant 6) took a hand-off in flight for a deadlock. Nothing waits on
# a wait list for a local channel in a group instance: its task's warp polls it again.
# A lone end takes its own SEND (RECV) by st_relaxed_cta, no cas (LCH_ bits: docs/groups.md).
# After the sequences come each slot's mbarriers, ``pub`` then ``freed`` (cap words each): in a
# poll on all lanes every lane passes the slot through them, the order the sequence words give in
# the form racecheck follows (runtime/devicegroups.py lch_send_warp, lch_recv_warp; lch_reset
# starts them with each instance, lch_retire ends them after it).
BW_PICK, BW_STOP, BW_TURN, BW_WORDS = 0, 1, 2, 3
GW_LIVE = 32  # the word after each warp's wait: the instance's warps still running a task instance
GW_WORDS = GW_LIVE + 1  # GW's words (a shared array's size must be a constant name for Numba-CUDA)
MB_WORDS = 32  # MB: each warp's mbarrier for its bulk copies (runtime/devicevec.py), a block's 32 at most
WANT_BUSY = 2  # WANT while the block runs a group instance: its spare warps ask for no other
LCH_SEND, LCH_RECV, LCH_CLOSED, LCH_WORDS = 0, 1, 2, 4  # (word 3 spare)
CMD_GROUPS = -2  # an executor's command: leave for the block's group phase
GAVE_UP = -1  # CTL's DETAIL with Exit.TIMEOUT: a loop outside any poll gave up at the deadline
