"""The warp's lanes meet: ``warp_sync``, ``lanes_ordered``, ``warp_command``, ``shfl_down``, ``first``,
``first2``, ``vote_all`` (re-exported by runtime/devicelib.py, which generated code calls them through as ``dl``).

Lanes 1..31 wait at warp_sync while lane 0 schedules; when lane 0 arrives, all
32 run the command it left in CMD[w, 1] together (a parallel loop, a bulk
chunk, or EXIT). On the GPU that is __syncwarp, where waiting lanes take no
issue slots; the simulator has no __syncwarp, so its version is a barrier of
the warp's 32 Python threads.
"""

from __future__ import annotations

from numba import config, cuda

from gasync.runtime.order import INLINE
from gasync.runtime.words import CMD_COMMAND

SIM = bool(config.ENABLE_CUDASIM)


if SIM:
    import threading

    from gasync.runtime import simblock

    _barriers: dict[tuple[int, int], threading.Barrier] = {}
    _barriers_lock = threading.Lock()

    _rows: dict[tuple[int, int], list[object]] = {}
    _firsts: dict[tuple[int, int], list[object]] = {}
    _votes: dict[tuple[int, int], list[bool]] = {}

    def forget_warps(abort: bool = False) -> None:
        """Drop the barriers of earlier runs (a warm simulator worker runs many); with
        ``abort``, break them instead, and keep them broken until the next run: a thread of
        the block failed (runtime/simblock.py), so every lane that waits, or comes to wait,
        at one raises."""
        with _barriers_lock:
            if abort:
                for barrier in _barriers.values():
                    barrier.abort()
                return
            _barriers.clear()
            _rows.clear()
            _firsts.clear()
            _votes.clear()

    def shfl_down(cmd, w, lane, value, off):  # type: ignore[no-untyped-def]
        """Lane ``lane + off``'s ``value`` (its own past lane 31), as ``shfl.sync.down``: the
        simulator has no shuffles, so the warp's 32 threads meet at a row of its own."""
        key = (id(cmd), int(w))
        with _barriers_lock:
            row = _rows.setdefault(key, [None] * 32)
        row[lane] = value
        warp_sync(cmd, w)
        got = row[lane + off] if lane + off < 32 else value
        warp_sync(cmd, w)  # every lane has read before any writes the next round
        return got

    def warp_sync(cmd, w):  # type: ignore[no-untyped-def]
        key = (id(cmd), int(w))
        with _barriers_lock:
            simblock.check()  # (under the lock: no barrier is made after an abort)
            barrier = _barriers.setdefault(key, threading.Barrier(32))
        barrier.wait(timeout=3600)

    def lanes_ordered(cmd, w):  # type: ignore[no-untyped-def]
        """The lanes' memory ordered among them: a meeting of the warp's threads here."""
        warp_sync(cmd, w)

    def first(cmd, w, lane, value):  # type: ignore[no-untyped-def]
        """The lanes meet (warp_sync) and each gets lane 0's ``value`` (``shfl.sync`` from lane
        0), through one of two slots of the warp's own, taken in turn: lane 0 writes a slot
        again only after every lane has passed the next meeting, so after it has read."""
        key = (id(cmd), int(w))
        with _barriers_lock:
            slots = _firsts.setdefault(key, [None, None, *([0] * 32)])
        turn = slots[2 + lane]
        slots[2 + lane] = 1 - turn
        if lane == 0:
            slots[turn] = value
        warp_sync(cmd, w)
        return slots[turn]

    def first2(cmd, w, lane, a, b):  # type: ignore[no-untyped-def]
        """``first`` of two values at one meeting."""
        return first(cmd, w, lane, (a, b))

    def vote_all(cmd, w, lane, pred):  # type: ignore[no-untyped-def]
        """Whether ``pred`` holds in every lane, the same answer in each (``vote.sync.all``): the
        warp's 32 threads meet at a row of its own, as in shfl_down."""
        key = (id(cmd), int(w))
        with _barriers_lock:
            row = _votes.setdefault(key, [False] * 32)
        row[lane] = bool(pred)
        warp_sync(cmd, w)
        got = all(row)
        warp_sync(cmd, w)  # every lane has read before any writes the next vote
        return got

    def warp_command(cmd, w, value):  # type: ignore[no-untyped-def]
        """The lanes meet (warp_sync) and each gets lane 0's ``value``, the command lane 0 left
        in ``cmd[w, CMD_COMMAND]`` before it came (the simulator's lanes read it there)."""
        warp_sync(cmd, w)
        return cmd[w, CMD_COMMAND]

else:

    def forget_warps(abort: bool = False) -> None:
        return None

    @INLINE
    def shfl_down(cmd, w, lane, value, off):  # type: ignore[no-untyped-def]
        return cuda.shfl_down_sync(0xFFFFFFFF, value, off)

    @INLINE
    def first(cmd, w, lane, value):  # type: ignore[no-untyped-def]
        """warp_sync, then lane 0's ``value`` in every lane by shuffle (lane 0's writes before it,
        an acquire it made among them, ordered before what every lane does after it)."""
        warp_sync(cmd, w)
        return cuda.shfl_sync(0xFFFFFFFF, value, 0)

    @INLINE
    def first2(cmd, w, lane, a, b):  # type: ignore[no-untyped-def]
        """``first`` of two values at one meeting: two shuffles after it."""
        warp_sync(cmd, w)
        return cuda.shfl_sync(0xFFFFFFFF, a, 0), cuda.shfl_sync(0xFFFFFFFF, b, 0)

    @INLINE
    def vote_all(cmd, w, lane, pred):  # type: ignore[no-untyped-def]
        """Whether ``pred`` holds in every lane, the same answer in each (``vote.sync.all``)."""
        return cuda.all_sync(0xFFFFFFFF, pred)

    @INLINE
    def warp_sync(cmd, w):  # type: ignore[no-untyped-def]
        """The warp's 32 lanes meet, their memory ordered (``syncwarp``), and go on as one: a
        full-warp vote after it. ``syncwarp`` alone left a warp that lane 0's poll had split
        still split in two, lane 0 and lanes 1-31 each running the parallel loop that follows on
        its own, every loop instruction issued twice (scripts/converge_probe.py measured 1 and 31
        lanes together, then 32 with the vote: bench/NOTES.md)."""
        cuda.syncwarp()
        cuda.all_sync(0xFFFFFFFF, True)

    @INLINE
    def lanes_ordered(cmd, w):  # type: ignore[no-untyped-def]
        """Each lane's shared-memory accesses before it ordered before every lane's after it
        (``syncwarp`` alone, no vote: for lanes that run together already, where a word every
        lane stored is read back, which racecheck counts as another lane's store)."""
        cuda.syncwarp()

    @INLINE
    def warp_command(cmd, w, value):  # type: ignore[no-untyped-def]
        """warp_sync, then lane 0's ``value`` in every lane by shuffle: the command it also left
        in ``cmd[w, CMD_COMMAND]``, without each lane reading that word back from memory after
        the meeting (lane 0's store and the lanes' loads, a round trip each k-stage)."""
        return first(cmd, w, 0, value)
