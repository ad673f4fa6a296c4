"""The rows of docs/performance.md's results table, and what each benchmark measures.

Each :class:`Line` names the rows of a results file (bench/run.py) that give its
figures, how they compare, and its goal; report.py renders them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from summary import GRAPH_WHILE, PERSISTENT, THROUGHPUT

TRACE_DEFAULT = "262,144"  # RunOptions.trace_capacity's default, as the T1 cases name it


@dataclass(frozen=True)
class Line:
    """One line of the results table: which rows of the JSON give its figures, and its goal."""

    bench: str
    label: str
    gasync: str  # case prefix of the gasync row
    baselines: tuple[str, ...] = ()  # case prefixes of the rows compared with: the best one is shown
    ratio: str = ""  # case prefix of a ratio row
    speedup: bool = False  # ratio = baseline / gasync (times per item: "Nx faster")
    vs_limit: bool = False  # ratio = gasync / baseline, the hand-written limit (times per item: "Nx the limit")
    throughput: bool = False  # ratio = gasync / the best baseline (GB/s: higher is better)
    goal: str = ""
    met: Callable[[float, float | None], bool] | None = None  # (gasync value, ratio) -> met?
    missing: str = "was not run"  # the finding when gasync's row is absent and the benchmark did not fail


WHAT = {
    "B1": "Tiny tasks: N one-line tasks `out[i] = i` (`programs/b1_tasks.gasync`); kernel time / N, "
    "vs replaying a CUDA graph of one-thread kernel nodes (per node).",
    "B2": "Cross-warp hand-off: two tasks ping-pong a value over two one-slot channels "
    "(`programs/b2_pingpong.gasync`); kernel time / (2 x round trips). Its limits, hand-written in the same "
    "process (`pingpong.py`): one word ping-ponged by lane 0 of two blocks on different SMs (checked by "
    "`%smid`) through global memory, and of two warps of one block through shared memory, polling with "
    "an atomic CAS or with a load that stays in the loop. gasync runs it twice: in one block of four warps "
    "(same SM), and as two blocks of one warp each (`warps_per_block=1`), labelled cross SM only where the "
    "run's `stats['sms']` shows two SMs; CUDA graph replay per node is listed for context.",
    "B2b": "Await cost: one task awaits a chain of 16 async fns, plain device functions or suspending "
    "state machines; (t(K=16) - t(K=0)) / (reps x 16). No external baseline.",
    "B3": "A data-dependent loop: x = 0.5 x + 0.5 target over 4096 f64, then the residual max |x - target|, "
    "repeated while it is >= TOL (exactly 997 steps at full size), in one gasync kernel four ways "
    "(`programs/b3_converge*.gasync`): `parallel for` (one warp) or `bulk for` (warps across the GPU), with the "
    "residual gathered by `fetch_max` on a shared f64 or given by the loop itself (`reduce max`). In us per "
    "step, each beside its hand-written peers of the same process (`converge.py`): the whole loop inside one "
    "persistent block of 1024 threads (a shared-memory max, `syncthreads` between steps: the floor), host loops "
    "of one launch + a copy of the residual to pinned memory + a test per step (Numba; CuPy), and one launch of "
    "a CUDA graph whose device-side WHILE node runs the step and a test that ends it "
    "(`cudaGraphSetConditional`), as two kernels or one. Every run's steps, x and residual are checked. The "
    "headline: the best gasync variant's time per step / the persistent kernel's (lower is better).",
    "B4": "Warp specialisation: one loader task sends tile numbers over a channel of capacity 8 (the spec's; "
    "64 for context) to compute tasks that compute y = 2x + 1 per tile of 65,536 (`programs/b4_loader.gasync`, "
    "2^26 f32), vs the best hand-written Numba kernel of the same work in the run (grid-stride, or one "
    "contiguous range per warp with 4 loads in flight per lane). Ratio of throughputs (8 bytes per element).",
    "B5": "One task's `bulk for` y = 2x + 1 over 2^28 f32 (`programs/b5_bulk.gasync`), vs the best "
    "hand-written kernel (grid-stride or per-warp contiguous). Ratio of throughputs.",
    "B5a": "The same stage as 4096 tasks, each a `parallel for` over one chunk (`programs/b5a_stage.gasync`), "
    "vs the best hand-written kernel (grid-stride, per-warp contiguous or one thread per element). "
    "Ratio of throughputs.",
    "B6": "Compile time of `samples/stencil2d.gasync` in a fresh process: cold (fresh cache; gasync's helpers "
    "kept by an earlier run, runtime/linked.py), cached, and first (the helper store empty too).",
    "T1": "Tracing overhead: B1 at N = 64K and 1M generated with `trace=True` vs without; ns per task both ways. "
    f"The device trace buffer holds {TRACE_DEFAULT} events by default, so at 1M most are dropped; a second "
    "1M run gives the buffer room for all.",
}


def _le(limit: float) -> Callable[[float, float | None], bool]:
    return lambda v, _r: v <= limit


def _lt(limit: float) -> Callable[[float, float | None], bool]:
    return lambda v, _r: v < limit


def _ratio_ge(limit: float) -> Callable[[float, float | None], bool]:
    return lambda _v, r: r is not None and r >= limit


def _ratio_le(limit: float) -> Callable[[float, float | None], bool]:
    return lambda _v, r: r is not None and r <= limit


def _ratio_lt(limit: float) -> Callable[[float, float | None], bool]:
    return lambda _v, r: r is not None and r < limit


M, K = "1,048,576", "65,536"
GRAPH = ("CUDA graph replay per node",)
B3_VARIANTS = ("parallel for + fetch_max", "bulk for + fetch_max", "parallel for reduce max", "bulk for reduce max")
HAND_WRITTEN = THROUGHPUT  # every hand-written y = 2x + 1 kernel: the best of a run is the baseline
LINES = [
    Line("B1", "queue executor, N=1M", f"gasync queue, N={M}", GRAPH, speedup=True, goal="<= 1 ns/task", met=_le(1.0)),
    Line("B1", "spin executor, N=1M", f"gasync spin, N={M}", GRAPH, speedup=True, goal="<= 1 ns/task", met=_le(1.0)),
    Line(
        "B2",
        "hand-off, cross SM",
        "gasync ping-pong hand-off, cross SM",
        ("hand-written ping-pong, cross SM",),
        vs_limit=True,
        goal="<= 0.3 us",
        met=_le(0.3),
        missing="has no gasync figure yet (its two tasks run in one block; see suite2.CROSS_SM_RUN)",
    ),
    Line(
        "B2",
        "hand-off, same SM",
        "gasync ping-pong hand-off, same SM",
        ("hand-written ping-pong, same SM",),
        vs_limit=True,
        goal="< 0.3 us",
        met=_lt(0.3),
    ),
    Line("B2b", "await, plain fns", "await chain of plain fns", goal="<= 20 ns", met=_le(20.0)),
    Line("B2b", "await, state machines", "await chain of state machines", goal="<= 20 ns", met=_le(20.0)),
    *[Line("B3", variant, f"gasync {variant}", (PERSISTENT,), vs_limit=True) for variant in B3_VARIANTS],
    Line(
        "B3",
        "best gasync / persistent kernel",
        "gasync best",
        (PERSISTENT,),
        f"gasync best / {PERSISTENT}",
        goal="<= 2.0",
        met=_ratio_le(2.0),
    ),
    Line(
        "B3",
        "best gasync / CuPy host loop",
        "gasync best",
        ("CuPy host loop",),
        "gasync best / CuPy host loop",
        goal="< 1",
        met=_ratio_lt(1.0),
    ),
    Line(
        "B3",
        "best gasync / graph WHILE loop",
        "gasync best",
        (GRAPH_WHILE,),
        f"gasync best / {GRAPH_WHILE}",
        goal="< 1",
        met=_ratio_lt(1.0),
    ),
    Line("B3", "best gasync / numba host loop", "gasync best", ("numba host loop",), "gasync best / numba host loop"),
    Line(
        "B4",
        "loader + compute, capacity 8",
        "gasync loader + compute, capacity 8,",
        HAND_WRITTEN,
        throughput=True,
        goal=">= 0.85",
        met=_ratio_ge(0.85),
    ),
    Line("B4", "loader + compute, capacity 64", "gasync loader + compute, capacity 64,", HAND_WRITTEN, throughput=True),
    Line("B5", "bulk for", "gasync bulk for", HAND_WRITTEN, throughput=True, goal=">= 0.95", met=_ratio_ge(0.95)),
    Line("B5a", "task array", "gasync task array", HAND_WRITTEN, throughput=True, goal=">= 0.9", met=_ratio_ge(0.9)),
    Line("B6", "cold compile_s", "stencil2d cold: compile_s"),
    Line("B6", "cached compile_s", "stencil2d cached: compile_s"),
    Line("B6", "first compile_s", "stencil2d first: compile_s"),
    Line("T1", "trace on vs off, N=64K", f"trace on, N={K},", (f"trace off, N={K}",), f"trace on / off, N={K},"),
    Line(
        "T1",
        f"trace on vs off, N=1M, capacity {TRACE_DEFAULT}",
        f"trace on, N={M}, capacity {TRACE_DEFAULT}",
        (f"trace off, N={M}",),
        f"trace on / off, N={M}, capacity {TRACE_DEFAULT}",
    ),
    Line(
        "T1",
        "trace on vs off, N=1M, room for all events",
        f"trace on, N={M}, capacity 2,",
        (f"trace off, N={M}",),
        f"trace on / off, N={M}, capacity 2,",
    ),
]
