"""The words of the device state's arrays, by name: CTL's, the run queue's, a channel's, an
executor's, a command's, the stats', a bulk job's and a trace row's columns, with the sizes
that follow from them. runtime/state.py's docstring gives what each word means and its
protocol (the one place the state is described) and re-exports these names; this module holds
only the indices, so that they can be read apart from the arrays they index.
"""

from __future__ import annotations

from enum import IntEnum

LINE = 16  # int64 words per 128-byte line


class Ctl(IntEnum):
    """Words of CTL (see the module's docstring for each one's protocol)."""

    EXIT = 0
    DETAIL = 1
    DEADLINE = 2
    EXECUTORS = 3
    INFLIGHT = 1 * LINE
    DONE = 2 * LINE
    TRACE_N = 3 * LINE
    CLOSED_SENDS = 3 * LINE + 1
    JOB_EPOCH = 4 * LINE  # bulk jobs posted so far
    FAULTS = 5 * LINE  # out-of-bounds accesses
    FAULT_SITE = 5 * LINE + 1  # the first one's: check site,
    FAULT_INDEX = 5 * LINE + 2  # index,
    FAULT_DIM = 5 * LINE + 3  # and dimension


CTL_WORDS = 6 * LINE


class Exit(IntEnum):
    """CTL[EXIT]: why the executors stopped."""

    RUNNING = 0
    OK = 1
    TIMEOUT = 2
    DEADLOCK = 4
    QUEUE_FULL = 5  # the run queue had no free slot for a woken instance
    WAITLIST_FULL = 6  # a wait list had no free slot for a waiter
    SLEEPERS_FULL = 7  # the sleepers' ring had no free slot
    JOBS_FULL = 8  # every bulk job slot was taken when a bulk for was posted
    BOUNDS = 9  # a buffer index out of bounds (CTL's FAULT_* words say which)


class Sched(IntEnum):
    """ST[inst]: an instance's scheduling state."""

    IDLE = 0
    QUEUED = 1
    RUNNING = 2
    NOTIFIED = 3
    DONE = 4
    FRESH = 5  # never polled: the executor that claims it polls it first; a wake leaves it so


class Ring(IntEnum):
    """Columns of a ring's ticket words (QHT, SHT, and each row of WHT and CHHT)."""

    HEAD = 0
    TAIL = LINE


RING_WORDS = 2 * LINE


class ChanWord(IntEnum):
    """Columns of a channel's CHHT row: its Ring tickets, and words kept beside each."""

    HEAD = int(Ring.HEAD)
    REGISTERED = int(Ring.HEAD) + 1  # CTW words written by ticket holders, not yet taken out (Tickets)
    TAIL = int(Ring.TAIL)
    CREDIT = int(Ring.TAIL) + 1  # a crediting sender's own: the tickets below it have free slots (Credits)
    CHECKED = int(Ring.TAIL) + 2  # a deferring sender's own: tickets below it were looked at for holders


class Exs(IntEnum):
    """EXS[w]: an executor's variables, kept while its lanes run a command."""

    LO = 0  # its claimed range of fresh instances: lo..hi
    HI = 1
    POLLS = 2
    IDLE = 3  # idle turns
    START = 4  # device time of its first look (0: not started)
    RESUME = 5  # an instance to poll again once its parallel loop has run (-1: none)
    DONE = 6  # instances finished and not yet added to CTL[DONE]
    BACKOFF = 7  # the idle pause, ns
    FRESH = 8  # 0 once every task's instances have been claimed
    EPOCH = 9  # the last JOBEPOCH it scanned the job slots for
    SPIN = 10  # 1 while the poll it runs may wait for a channel in place (nothing else to run)
    WANT = 11  # in a block's first warp's row: a group instance may start (runtime/state.py, groups)


EXS_WORDS = len(Exs)
EXS_INITIAL = {Exs.RESUME: -1, Exs.BACKOFF: 32, Exs.FRESH: 1, Exs.EPOCH: -1}  # the other words start at 0


class Cmd(IntEnum):
    """CMD[w]: what lane 0 hands the warp's 32 lanes."""

    COMMAND = 0  # a parallel loop's id, a bulk loop's id, or CMD_EXIT
    JOB = 1  # the bulk job whose chunk the lanes ran (-1: none)


CMD_WORDS = len(Cmd)
CMD_EXIT = -1


class Stat(IntEnum):
    """STATS[w]: an executor's counters, read by the host."""

    POLLS = 0
    IDLE = 1
    ELAPSED_NS = 2  # its first look to its exit
    SPUN = 3  # awaits that waited in place for their channel instead of suspending
    SMID = 4  # the SM it runs on (%smid; 0 on the simulator)
    END_NS = 5  # the clock at its exit (dl.now_ns: %globaltimer); less ELAPSED_NS, its first look


STAT_WORDS = 8


class Job(IntEnum):
    """JOB[j]: a posted bulk for."""

    LOOP = 0  # the loop's id (its par_<id> function)
    LO = 1
    HI = 2
    CHUNK = 3  # elements per chunk
    CHUNKS = 4
    NEXT = 5  # the next chunk to hand out (fetch-add)
    DONE = 6  # chunks finished (fetch-add)
    PARENT = 7  # the instance to wake when the last chunk is done
    SLOT = 8  # its JOBSLOTS entry, freed by the last chunk


JOB_WORDS = len(Job)


class TraceKind(IntEnum):
    """TRACE[k, KIND]: what the event is (runtime/trace.py says what each column then holds)."""

    POLL = 1
    WAKE = 2


class TraceCol(IntEnum):
    """Columns of a TRACE row (``(kind, executor, inst, a, b, t0, t1, c)``, then a POLL's counters)."""

    KIND = 0
    EXECUTOR = 1
    INST = 2
    A = 3
    B = 4
    T0 = 5
    T1 = 6
    C = 7
    QUEUE = 8  # a POLL's: the run queue's length as it ended
    INFLIGHT = 9  # a POLL's: CTL[INFLIGHT] as it ended
    CHANNELS = 10  # a POLL's: from here, the occupancy of each channel its task uses, as it ended


EVENT_WORDS = int(TraceCol.QUEUE)  # the columns every event has (RawTrace.events)
TRACE_WORDS = int(TraceCol.CHANNELS)  # a row's words before the channels' (a program adds its widest task's)
