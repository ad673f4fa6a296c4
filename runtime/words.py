"""Plain ints for device code, one per name of runtime/state.py that the device helpers and the
generated code read (a Numba kernel freezes module-level ints, not IntEnum members): state.py
names each word and documents its protocol; this module only turns those names into ints."""

from __future__ import annotations

from gasync.runtime.state import (
    ChanWord,
    Cmd,
    Ctl,
    Exit,
    Exs,
    Job,
    Ring,
    Sched,
    Stat,
    TraceCol,
    TraceKind,
)

CTL_EXIT = int(Ctl.EXIT)
CTL_DETAIL = int(Ctl.DETAIL)
CTL_DEADLINE = int(Ctl.DEADLINE)
CTL_EXECUTORS = int(Ctl.EXECUTORS)
CTL_INFLIGHT = int(Ctl.INFLIGHT)
CTL_DONE = int(Ctl.DONE)
CTL_TRACE_N = int(Ctl.TRACE_N)
CTL_CLOSED_SENDS = int(Ctl.CLOSED_SENDS)
CTL_JOB_EPOCH = int(Ctl.JOB_EPOCH)
CTL_FAULTS = int(Ctl.FAULTS)
CTL_FAULT_SITE = int(Ctl.FAULT_SITE)
CTL_FAULT_INDEX = int(Ctl.FAULT_INDEX)
CTL_FAULT_DIM = int(Ctl.FAULT_DIM)
EXIT_OK = int(Exit.OK)
EXIT_TIMEOUT = int(Exit.TIMEOUT)
EXIT_DEADLOCK = int(Exit.DEADLOCK)
EXIT_QUEUE_FULL = int(Exit.QUEUE_FULL)
EXIT_WAITLIST_FULL = int(Exit.WAITLIST_FULL)
EXIT_SLEEPERS_FULL = int(Exit.SLEEPERS_FULL)
EXIT_JOBS_FULL = int(Exit.JOBS_FULL)
EXIT_BOUNDS = int(Exit.BOUNDS)
IDLE = int(Sched.IDLE)
QUEUED = int(Sched.QUEUED)
RUNNING = int(Sched.RUNNING)
NOTIFIED = int(Sched.NOTIFIED)
DONE = int(Sched.DONE)
FRESH = int(Sched.FRESH)
HEAD = int(Ring.HEAD)
TAIL = int(Ring.TAIL)
CH_REGISTERED = int(ChanWord.REGISTERED)
CH_CREDIT = int(ChanWord.CREDIT)
CH_CHECKED = int(ChanWord.CHECKED)
EXS_LO = int(Exs.LO)
EXS_HI = int(Exs.HI)
EXS_POLLS = int(Exs.POLLS)
EXS_IDLE = int(Exs.IDLE)
EXS_START = int(Exs.START)
EXS_RESUME = int(Exs.RESUME)
EXS_DONE = int(Exs.DONE)
EXS_BACKOFF = int(Exs.BACKOFF)
EXS_FRESH = int(Exs.FRESH)
EXS_EPOCH = int(Exs.EPOCH)
EXS_SPIN = int(Exs.SPIN)
EXS_WANT = int(Exs.WANT)  # a block's word, in its first warp's row (state.py, groups)
CMD_COMMAND = int(Cmd.COMMAND)
CMD_JOB = int(Cmd.JOB)
STAT_POLLS = int(Stat.POLLS)
STAT_IDLE = int(Stat.IDLE)
STAT_ELAPSED_NS = int(Stat.ELAPSED_NS)
STAT_SPUN = int(Stat.SPUN)
STAT_SMID = int(Stat.SMID)
STAT_END_NS = int(Stat.END_NS)
JOB_LOOP = int(Job.LOOP)
JOB_LO = int(Job.LO)
JOB_HI = int(Job.HI)
JOB_CHUNK = int(Job.CHUNK)
JOB_CHUNKS = int(Job.CHUNKS)
JOB_NEXT = int(Job.NEXT)
JOB_DONE = int(Job.DONE)
JOB_PARENT = int(Job.PARENT)
JOB_SLOT = int(Job.SLOT)
TRACE_POLL = int(TraceKind.POLL)
TRACE_WAKE = int(TraceKind.WAKE)
TR_KIND = int(TraceCol.KIND)
TR_EXECUTOR = int(TraceCol.EXECUTOR)
TR_INST = int(TraceCol.INST)
TR_A = int(TraceCol.A)
TR_B = int(TraceCol.B)
TR_T0 = int(TraceCol.T0)
TR_T1 = int(TraceCol.T1)
TR_C = int(TraceCol.C)
TR_QUEUE = int(TraceCol.QUEUE)
TR_INFLIGHT = int(TraceCol.INFLIGHT)
TR_CHANNELS = int(TraceCol.CHANNELS)
