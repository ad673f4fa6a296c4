"""The contract suite: small programs and the results every backend must give.

Each :class:`Case` is a ``.gasync`` program, its inputs and ``-D`` defines,
and the expected contents of some of its buffers and shared scalars. The
expected values are computed here, independently of gasync: by hand, with
Python integers wrapped to the declared width, or with NumPy in the
declared dtype. tests/sim and tests/gpu run the same list.

Programs are kept small: under the CUDA simulator every poll and every
``parallel for`` costs milliseconds, so each case makes at most a few hundred.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
FLOAT_RTOL = 2e-6  # f32 math: NumPy's float32 kernels and a rounded f64 result may differ by an ulp


@dataclass(frozen=True)
class Case:
    name: str
    source: str
    expect: dict[str, Any]  # buffer or shared scalar name -> expected value (array or scalar)
    inputs: dict[str, np.ndarray] = field(default_factory=dict)
    defines: dict[str, Any] = field(default_factory=dict)
    signals: dict[str, bool] = field(default_factory=dict)
    rtol: float = 0.0  # for float buffers; 0 means exact
    stats: dict[str, Any] = field(default_factory=dict)  # expected entries of Result.stats
    timeout: float = 0.0  # run's --timeout on the simulator; 0 means check.SIM_TIMEOUT_S
    path: str = ""  # the program's path (an extern fn's module is found beside it); "" means "<name>"
    bug: str = ""  # a known bug in codegen/runtime: the case is expected to fail (strict xfail)
    bug_backends: tuple[str, ...] = ("sim", "cuda")  # where ``bug`` shows

    def buggy_on(self, backend: str) -> bool:
        return bool(self.bug) and backend in self.bug_backends


def wrap(value: int, bits: int, signed: bool) -> int:
    """``value`` wrapped to a two's-complement integer of ``bits`` bits."""
    value &= (1 << bits) - 1
    if signed and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def i32(v: int) -> int:
    return wrap(v, 32, True)


def u32(v: int) -> int:
    return wrap(v, 32, False)


def u64(v: int) -> int:
    return wrap(v, 64, False)


def tdiv(a: int, b: int) -> int:
    """Integer division truncating toward zero (Rust, C, CUDA)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def trem(a: int, b: int) -> int:
    return a - b * tdiv(a, b)


def sum_in_order(values: list[float]) -> float:
    """The f64 sum of ``values`` added left to right, as a sequential loop adds them."""
    s = 0.0
    for v in values:
        s += v
    return s


def rng_floats(seed: int, shape: Any, dtype: Any) -> np.ndarray:
    return np.random.default_rng(seed).random(shape).astype(dtype)


def rng_ints(seed: int, shape: Any, dtype: Any) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 1 << 16, shape).astype(dtype)


CASES: list[Case] = []


def case(name: str, source: str, expect: dict[str, Any], **kw: Any) -> None:
    CASES.append(Case(name, source, expect, **kw))


# --- the simplest program, consts and -D -----------------------------------------------------------------------

case(
    "async_double",
    """
    buffer out: i32[1] = zeros;
    async fn async_double(x: i32) -> i32 { return x * 2; }
    task main { out[0] = async_double(21).await; }
    """,
    {"out": [42]},
)

case(
    "const_define",
    """
    const K: i32 = 5;
    const N: i64 = 4;
    const BIG: i64 = 1 << 40;
    buffer out: i32[N] = zeros;
    buffer big: i64[1] = zeros;
    task main {
        for i in 0..N { out[i] = K * (i as i32) + 1; }
        big[0] = BIG + 3;
    }
    """,
    {"out": [1, 8, 15, 22, 29, 36], "big": [(1 << 40) + 3]},
    defines={"K": 7, "N": 6},
)

# --- integer arithmetic: wrapping, truncating division, shifts, bit operations ----------------------------------

A32 = np.array([2147483647, -2147483648, 100000, -7, 7, 65536], np.int32)
case(
    "wrap_i32",
    """
    buffer a: i32[6] = input;
    buffer out: i32[6] = zeros;
    task main {
        out[0] = a[0] + 1;
        out[1] = a[1] - 1;
        out[2] = a[2] * a[2];
        out[3] = -a[1];
        out[4] = a[5] * a[5];
        out[5] = a[0] * a[3] + a[1];
    }
    """,
    {
        "out": [
            i32(2147483647 + 1),
            i32(-2147483648 - 1),
            i32(100000 * 100000),
            i32(2147483648),
            i32(65536 * 65536),
            i32(2147483647 * -7 - 2147483648),
        ]
    },
    inputs={"a": A32},
)

case(
    "wrap_u32_u64",
    """
    buffer a: u32[2] = input;
    buffer b: u64[2] = input;
    buffer o32: u32[4] = zeros;
    buffer o64: u64[4] = zeros;
    task main {
        o32[0] = a[0] - 1;
        o32[1] = a[1] * 3;
        o32[2] = a[1] + a[1];
        o32[3] = ~a[0];
        o64[0] = b[0] - 1;
        o64[1] = b[1] * b[1];
        o64[2] = b[1] + 18446744073709551615;
        o64[3] = (a[1] as u64) * 5;
    }
    """,
    {
        "o32": [u32(-1), u32(4000000000 * 3), u32(8000000000), u32(~0)],
        "o64": [u64(-1), u64(0xDEADBEEFCAFEF00D**2), u64(0xDEADBEEFCAFEF00D - 1), 20000000000],
    },
    inputs={
        "a": np.array([0, 4000000000], np.uint32),
        "b": np.array([0, 0xDEADBEEFCAFEF00D], np.uint64),
    },
)

DIVS = [(-7, 2), (7, -2), (-7, -2), (7, 2), (-1, 3), (-9, 3)]
case(
    "div_mod_truncate",
    """
    buffer n: i32[6] = input;
    buffer d: i32[6] = input;
    buffer q: i32[6] = zeros;
    buffer r: i32[6] = zeros;
    buffer q64: i64[6] = zeros;
    buffer r64: i64[6] = zeros;
    task main {
        for i in 0..6 {
            q[i] = n[i] / d[i];
            r[i] = n[i] % d[i];
            q64[i] = (n[i] as i64 - 4294967296) / (d[i] as i64);
            r64[i] = (n[i] as i64 - 4294967296) % (d[i] as i64);
        }
    }
    """,
    {
        "q": [tdiv(a, b) for a, b in DIVS],
        "r": [trem(a, b) for a, b in DIVS],
        "q64": [tdiv(a - 4294967296, b) for a, b in DIVS],
        "r64": [trem(a - 4294967296, b) for a, b in DIVS],
    },
    inputs={"n": np.array([a for a, _ in DIVS], np.int32), "d": np.array([b for _, b in DIVS], np.int32)},
)

case(
    "shifts_and_bits",
    """
    buffer a: i32[2] = input;
    buffer b: u32[1] = input;
    buffer si: i32[6] = zeros;
    buffer su: u32[3] = zeros;
    buffer s64: u64[2] = zeros;
    task main {
        let one: i32 = a[1];
        si[0] = a[0] >> 2;
        si[1] = one << 31;
        si[2] = (a[0] & 0xff) | 0x100;
        si[3] = a[0] ^ -1;
        si[4] = ~a[0];
        si[5] = (one << 4) >> 1;
        su[0] = b[0] >> 31;
        su[1] = b[0] << 1;
        su[2] = (b[0] >> 4) & 0xf0f;
        s64[0] = (one as u64) << 63;
        s64[1] = ((one as u64) << 63) >> 3;
    }
    """,
    {
        "si": [-16 >> 2, i32(1 << 31), (-16 & 0xFF) | 0x100, -16 ^ -1, ~-16, 8],
        "su": [1, u32(0x80000001 << 1), (0x80000001 >> 4) & 0xF0F],
        "s64": [1 << 63, 1 << 60],
    },
    inputs={"a": np.array([-16, 1], np.int32), "b": np.array([0x80000001], np.uint32)},
)

# --- casts and float math --------------------------------------------------------------------------------------

case(
    "cast_float_to_int_saturates",
    """
    buffer f: f64[4] = input;
    buffer ti: i32[4] = zeros;
    buffer tu: u32[4] = zeros;
    task main {
        for k in 0..4 {
            ti[k] = f[k] as i32;
            tu[k] = f[k] as u32;
        }
    }
    """,
    # Rust's `as` (docs/language.md, "Casts follow Rust's as"): out-of-range values saturate, NaN gives 0.
    {"ti": [2147483647, -2147483648, 0, 7], "tu": [4294967295, 0, 0, 7]},
    inputs={"f": np.array([1e10, -1e10, np.nan, 7.9], np.float64)},
)

F64 = np.array([2.7, -2.7, 0.5, -0.5, 123456.99, -1e9], np.float64)
case(
    "casts",
    """
    buffer f: f64[6] = input;
    buffer n: i32[1] = input;
    buffer ti: i32[6] = zeros;
    buffer tu: u32[2] = zeros;
    buffer t64: i64[2] = zeros;
    buffer tf: f32[3] = zeros;
    task main {
        for k in 0..6 { ti[k] = f[k] as i32; }
        tu[0] = n[0] as u32;
        tu[1] = (n[0] as i64 + 4294967296 + 5) as u32;
        t64[0] = n[0] as i64;
        t64[1] = (n[0] as u32) as i64;
        tf[0] = n[0] as f32;
        tf[1] = f[4] as f32;
        tf[2] = (16777217 as i32) as f32;
    }
    """,
    {
        "ti": [2, -2, 0, 0, 123456, -1000000000],
        "tu": [u32(-1), 4],
        "t64": [-1, 4294967295],
        "tf": np.array([-1.0, 123456.99, 16777217], np.float32),
    },
    inputs={"f": F64, "n": np.array([-1], np.int32)},
)

X32 = rng_floats(11, 32, np.float32) * np.float32(4.0) + np.float32(0.25)
case(
    "f32_math",
    """
    buffer x: f32[32] = input;
    buffer y: f32[10, 32] = zeros;
    task main {
        parallel for i in 0..32 {
            let v = x[i];
            y[0, i] = sqrt(v);
            y[1, i] = exp(v);
            y[2, i] = log(v);
            y[3, i] = sin(v);
            y[4, i] = cos(v);
            y[5, i] = pow(v, 1.5);
            y[6, i] = floor(v * 3.0) + ceil(v * 3.0);
            y[7, i] = abs(1.5 - v);
            y[8, i] = min(v, 2.0) + max(v, 3.0);
            y[9, i] = v * v / (v + 1.0) - 0.125;
        }
    }
    """,
    {
        "y": np.stack(
            [
                np.sqrt(X32),
                np.exp(X32),
                np.log(X32),
                np.sin(X32),
                np.cos(X32),
                np.power(X32, np.float32(1.5)),
                np.floor(X32 * np.float32(3)) + np.ceil(X32 * np.float32(3)),
                np.abs(np.float32(1.5) - X32),
                np.minimum(X32, np.float32(2)) + np.maximum(X32, np.float32(3)),
                X32 * X32 / (X32 + np.float32(1)) - np.float32(0.125),
            ]
        ).astype(np.float32)
    },
    inputs={"x": X32},
    rtol=FLOAT_RTOL,
)

X64 = rng_floats(12, 8, np.float64) * 10.0 - 5.0
case(
    "f64_math_and_float_remainder",
    """
    buffer x: f64[8] = input;
    buffer y: f64[4, 8] = zeros;
    task main {
        for i in 0..8 {
            let v = x[i];
            y[0, i] = v * 0.1 + 1e-3;
            y[1, i] = v % 1.5;
            y[2, i] = sqrt(abs(v)) / 3.0;
            y[3, i] = exp(v) - log(abs(v) + 1.0);
        }
    }
    """,
    {
        "y": np.stack(
            [X64 * 0.1 + 1e-3, np.fmod(X64, 1.5), np.sqrt(np.abs(X64)) / 3.0, np.exp(X64) - np.log(np.abs(X64) + 1.0)]
        )
    },
    inputs={"x": X64},
    rtol=1e-13,
)

# --- functions, awaits and control flow ------------------------------------------------------------------------

case(
    "nested_async_suspending",
    """
    buffer out: i32[4] = zeros;
    async fn leaf(x: i32) -> i32 {
        yield_now().await;
        return x + 1;
    }
    async fn mid(x: i32) -> i32 {
        let a = leaf(x).await;
        yield_now().await;
        let b = leaf(a * 2).await;
        return a * 100 + b;
    }
    async fn top(x: i32) -> i32 {
        let m = mid(x).await;
        let n = mid(m % 7).await;
        return m + n;
    }
    async fn quick(x: i32) -> i32 { return x - 1; }
    async fn writer(k: i32) {
        yield_now().await;
        out[3] = k;
    }
    task main {
        out[0] = mid(5).await;
        out[1] = top(1).await;
        out[2] = quick(quick(10).await).await;
        writer(77).await;
    }
    """,
    # mid(x) = (x + 1) * 100 + 2 * (x + 1) + 1; top(1): mid(1) = 205, then mid(205 % 7 = 2) = 307.
    {"out": [613, 205 + 307, 8, 77]},
)

case(
    "plain_fn_calls",
    """
    buffer out: f32[3] = zeros;
    buffer n: i32[3] = zeros;
    fn clamp01(v: f32) -> f32 { return min(max(v, 0.0), 1.0); }
    fn first_multiple(k: i32, limit: i32) -> i32 {
        let i = 1;
        while i < limit {
            if i % k == 0 { return i; }
            i += 1;
        }
        return -1;
    }
    fn sq(x: i32) -> i32 { x * x }
    async fn via_async(k: i32) -> i32 { return first_multiple(k, 100) + sq(k); }
    task main {
        out[0] = clamp01(-3.0);
        out[1] = clamp01(0.25);
        out[2] = clamp01(7.0);
        n[0] = first_multiple(7, 100);
        n[1] = first_multiple(700, 100);
        n[2] = via_async(9).await;
    }
    """,
    {"out": np.array([0.0, 0.25, 1.0], np.float32), "n": [7, -1, 90]},
)

case(
    "plain_fn_in_parallel_for",
    """
    buffer out: f32[40] = zeros;
    fn scale(v: f32, k: f32) -> f32 { return v * k + 1.0; }
    task main {
        let k: f32 = 0.5;
        parallel for i in 0..40 { out[i] = scale(i as f32, k); }
    }
    """,
    {"out": np.arange(40, dtype=np.float32) * np.float32(0.5) + np.float32(1)},
)

case(
    "loops_with_awaits",
    """
    buffer out: i32[6] = zeros;
    async fn step(x: i32) -> i32 {
        yield_now().await;
        return x + 3;
    }
    task main {
        let s = 0;
        let i = 0;
        while i < 5 {
            yield_now().await;
            s += i;
            i += 1;
        }
        out[0] = s;
        let t = 0;
        for k in 0..8 {
            if k % 2 == 1 { continue; }
            t = step(t).await + k;
            if k == 6 { break; }
        }
        out[1] = t;
        let n = 0;
        loop {
            n = step(n).await;
            if n > 10 { break; }
            yield_now().await;
        }
        out[2] = n;
        let c = 0;
        for a in 0..3 {
            for b in 0..4 {
                if b == a { continue; }
                yield_now().await;
                c += a * 10 + b;
            }
        }
        out[3] = c;
        let w = 100;
        while true {
            w -= step(0).await;
            if w < 50 { break; }
        }
        out[4] = w;
        out[5] = i;
    }
    """,
    # for k in 0, 2, 4, 6: t = t + 3 + k -> 3, 8, 15, 24; loop: n = 3, 6, 9, 12; while: w = 100 - 3 * 17.
    {"out": [10, 24, 12, sum(a * 10 + b for a in range(3) for b in range(4) if b != a), 49, 5]},
)


def _compound_expected() -> list[int]:
    out = []
    x = 105
    out.append(x)
    x -= 10
    out.append(x)
    x *= 3
    out.append(x)
    x = tdiv(x, -4)
    out.append(x)
    x = trem(x, 13)
    out.append(x)
    x &= 0x7F
    out.append(x)
    x |= 0x100
    out.append(x)
    x ^= 0x5
    out.append(x)
    x <<= 2
    out.append(x)
    out.append((7 + (x >> 3)) * 2)
    return out


case(
    "if_else_chain_and_compound_assign",
    """
    buffer v: i32[5] = input;
    buffer cls: i32[5] = zeros;
    buffer acc: i32[10] = zeros;
    buffer f: f32[2] = fill(1.5);
    task main {
        for i in 0..5 {
            if v[i] < 0 { cls[i] = -1; }
            else if v[i] == 0 { cls[i] = 0; }
            else if v[i] < 10 && !(v[i] == 5) { cls[i] = 1; }
            else { cls[i] = 2; }
        }
        let x = 100;
        x += 5; acc[0] = x;
        x -= 10; acc[1] = x;
        x *= 3; acc[2] = x;
        x /= -4; acc[3] = x;
        x %= 13; acc[4] = x;
        x &= 0x7f; acc[5] = x;
        x |= 0x100; acc[6] = x;
        x ^= 0x5; acc[7] = x;
        x <<= 2; acc[8] = x;
        acc[9] = 7;
        acc[9] += x >> 3;
        acc[9] *= 2;
        f[0] += 2.25;
        f[1] *= -2.0;
    }
    """,
    {
        "cls": [-1, 0, 1, 2, 2],
        "acc": _compound_expected(),
        "f": np.array([3.75, -3.0], np.float32),
    },
    inputs={"v": np.array([-4, 0, 3, 5, 12], np.int32)},
)


case(
    "for_runtime_bounds",
    """
    buffer a: i32[2] = input;
    buffer out: i32[4] = zeros;
    task main {
        let lo = a[0];
        let hi = a[1];
        let s = 0;
        for k in lo..hi {
            hi = 0;
            s += k;
        }
        out[0] = s;
        out[1] = hi;
        let n = 0;
        for k in a[1]..a[0] { n += 1; }
        out[2] = n;
        let m: i64 = 0;
        for k in (lo as i64) - 3..(lo as i64) { m += k; }
        out[3] = m as i32;
    }
    """,
    # the bounds are evaluated once, before the first iteration; an empty range runs no iteration
    {"out": [sum(range(-2, 5)), 0, 0, -5 - 4 - 3]},
    inputs={"a": np.array([-2, 5], np.int32)},
)

case(
    "early_return_from_async_loop",
    """
    buffer out: i32[2] = zeros;
    async fn find(limit: i32) -> i32 {
        let k = 0;
        loop {
            yield_now().await;
            if k * k > limit { return k; }
            k += 1;
        }
    }
    task main {
        out[0] = find(50).await;
        out[1] = find(0).await;
    }
    """,
    {"out": [8, 1]},
)

# --- tasks: arrays, after chains and diamonds, shared scalars, signals ----------------------------------------

case(
    "task_array_disjoint_slices",
    """
    const W: i64 = 4;
    const PER: i64 = 6;
    buffer out: i32[W * PER] = zeros;
    buffer who: i64[W] = zeros;
    task worker for w in 0..W {
        for k in 0..PER {
            out[w * PER + k] = (w * 100 + k) as i32;
            if k == 2 { yield_now().await; }
        }
        who[w] = w + 1000;
    }
    """,
    {"out": [w * 100 + k for w in range(4) for k in range(6)], "who": [1000, 1001, 1002, 1003]},
)

case(
    "after_chain_and_diamond",
    """
    buffer a: i32[4] = zeros;
    buffer log: i32[5] = zeros;
    shared order: i32 = 0;
    task top {
        yield_now().await;
        a[0] = 3;
        log[0] = order.fetch_add(1);
    }
    task left after top {
        yield_now().await;
        a[1] = a[0] * 10;
        let o = order.fetch_add(1);
        if o >= 1 && o <= 3 { log[1] = 1; }
    }
    task right for r in 0..2 after top {
        if r == 1 { a[2] = a[0] + 4; }
        log[2] = order.fetch_add(1) * 0 + 1;
    }
    task bottom after left, right {
        a[3] = a[1] + a[2] + a[0];
        log[3] = order.fetch_add(1);
    }
    task last after bottom {
        log[4] = a[3] * 2;
    }
    """,
    {"a": [3, 30, 7, 40], "log": [0, 1, 1, 4, 80], "order": 5},
)

case(
    # a task after a task array of no instances starts at once, and counts as running: it was
    # left out of the executor's count of instances in flight, so an idle executor called its
    # parallel loop's or bulk for's wait a deadlock (with nothing unfinished to report)
    "after_an_empty_task_array",
    """
    const W: i64 = 0;
    buffer x: f32[4] = iota;
    buffer out: f32[3] = zeros;
    task none for k in 0..W { x[0] = 100.0; }
    task main after none {
        let s: f32 = parallel for i in 0..4 reduce sum { x[i] };
        let m: f32 = bulk for i in 0..4 reduce max { x[i] };
        out[0] = s;
        out[1] = m;
    }
    task last after main { out[2] = out[0] + out[1]; }
    """,
    {"out": [6.0, 3.0, 9.0]},
)

case(
    # the same after a group over an empty range (docs/language.md, decision 61)
    "after_an_empty_group",
    """
    const W: i64 = 0;
    buffer x: f32[4] = iota;
    buffer out: f32[1] = zeros;
    group gg for g in 0..W { task t { x[1] = 100.0; } }
    task main after gg {
        let s: f32 = bulk for i in 0..4 reduce sum { x[i] };
        out[0] = s;
    }
    """,
    {"out": [6.0]},
)

case(
    "shared_atomics_many_instances",
    """
    shared total: u64 = 0;
    shared top: i32 = -100;
    shared low: i64 = 1000;
    shared down: u32 = 100;
    shared flag: i32 = 0;
    shared winners: u32 = 0;
    shared untouched: i32 = 0;
    shared f: f64 = 0.5;
    task w for i in 0..8 {
        total.fetch_add((i as u64) + 1);
        yield_now().await;
        total.fetch_add(10);
        top.fetch_max((i * 7) % 5);
        low.fetch_min((i as i64) * 3 - 4);
        down.fetch_sub(2);
        if flag.cas(0, i + 1) == 0 { winners.fetch_add(1); }
        f.fetch_max(i as f64 * 0.25);
    }
    task after_all after w {
        let t = total;
        total.store(t * 2 + total.load());
        flag.store(min(flag.load(), 1) * 100 + top);
        if untouched.cas(5, 6) == 0 { untouched.store(untouched - 2); }
    }
    """,
    {"total": 3 * (36 + 80), "top": 4, "low": -4, "down": 84, "f": 1.75, "winners": 1, "flag": 104, "untouched": -2},
)

case(
    "parallel_for_captured_locals",
    """
    buffer out: i32[80] = zeros;
    buffer hist: u32[4] = zeros;
    buffer sums: f64[1] = zeros;
    buffer fout: f32[40] = zeros;
    task main {
        let s = 3;
        let off = 10;
        let scale: f32 = 0.5;
        parallel for i in 0..80 {
            let t = i * s;
            out[i] = t + off;
            atomic_add(hist[i % 4], 1);
            atomic_add(sums[0], i as f64 * 0.5);
        }
        yield_now().await;
        parallel for i in 5..45 {
            fout[i - 5] = (i as f32) * scale + 1.0;
        }
    }
    """,
    {
        "out": [i * 3 + 10 for i in range(80)],
        "hist": [20, 20, 20, 20],
        "sums": [sum(range(80)) * 0.5],
        "fout": np.arange(5, 45, dtype=np.float32) * np.float32(0.5) + np.float32(1),
    },
)

case(
    "parallel_for_atomics_from_task_array",
    """
    buffer hist: i32[8] = zeros;
    buffer mx: i32[1] = zeros;
    buffer mn: i32[1] = fill(1000);
    shared hits: u64 = 0;
    task t for p in 0..3 {
        parallel for i in p * 20..(p + 1) * 20 {
            atomic_add(hist[i % 8], i);
            atomic_max(mx[0], i * 3);
            atomic_min(mn[0], i + 7);
            hits.fetch_add(1);
        }
    }
    """,
    {
        "hist": [sum(i for i in range(60) if i % 8 == b) for b in range(8)],
        "mx": [59 * 3],
        "mn": [7],
        "hits": 60,
    },
)

# every kind of update that codegen/combined.py combines, in a bulk and then a parallel loop
COMBINED_BODY = """\
            if x[i] % 3 == 0 { cnt.fetch_add(1); }
            band.fetch_and(!(1 << (x[i] % 4)));
            bor.fetch_or(1 << ((x[i] % 5) as i32));
            lo.fetch_min(x[i] as f64 - 3.5);
            down.fetch_sub(x[i]);
            atomic_add(st[0], 2);
            atomic_max(st[1], x[i]);
            atomic_min(st[2], x[i] - 10);
            atomic_or(st[3], x[i] & 48);
            atomic_add(sk[k], 1);
            atomic_sub(sk[k - 1], 1);
            atomic_add(fs[0], x[i] as f32);
            atomic_max(fs[1], (x[i] as f32) * 0.5);
"""

case(
    "combined_atomics_in_parallel_and_bulk_loops",  # codegen/combined.py: one atomic per warp or chunk
    f"""
    const N: i64 = 1000;
    buffer x: i64[N] = iota;
    buffer st: i64[4] = fill(5);
    buffer sk: i64[2] = zeros;
    buffer fs: f32[2] = zeros;
    shared cnt: u32 = 0;
    shared band: i64 = -1;
    shared bor: i32 = 0;
    shared lo: f64 = 1000.0;
    shared down: i64 = 0;
    task main {{
        let k: i64 = 1;
        bulk for i in 0..N {{
{COMBINED_BODY}        }}
        parallel for i in 0..N {{
{COMBINED_BODY}        }}
        bulk for i in 5..5 {{ cnt.fetch_add(100); atomic_add(st[0], 100); }}
        parallel for i in 0..0 {{ cnt.fetch_add(100); atomic_add(st[0], 100); }}
    }}
    """,
    {
        "cnt": 2 * 334,
        "band": -16,
        "bor": 31,
        "lo": -3.5,
        "down": -2 * sum(range(1000)),
        "st": [5 + 2 * 2000, 999, -10, 5 | 48],
        "sk": [-2000, 2000],
        "fs": np.array([2 * sum(range(1000)), 499.5], dtype=np.float32),  # whole numbers: exact in any order
    },
)

case(
    "signals_set_and_is_set",
    """
    buffer out: i32[2] = zeros;
    signal ready;
    signal never;
    task a {
        yield_now().await;
        ready.set();
    }
    task b after a {
        if ready.is_set() { out[0] = 1; }
        if never.is_set() { out[1] = 1; } else { out[1] = 2; }
    }
    """,
    {"out": [1, 2]},
    signals={"ready": True, "never": False},
)

# --- buffers: 2-D, initialisers, inputs ----------------------------------------------------------------------


def _buffers_2d() -> dict[str, np.ndarray]:
    m = np.arange(32, dtype=np.int32).reshape(4, 8)
    out = m * 2 + np.arange(4, dtype=np.int32)[:, None]
    out[1, 2] += 1000
    out[3, 7] = -out[0, 1]
    return {"m": m, "out": out, "t": m.T.copy()}


case(
    "buffers_2d",
    """
    const R: i64 = 4;
    const C: i64 = 8;
    buffer m: i32[R, C] = iota;
    buffer out: i32[R, C] = zeros;
    buffer t: i32[C, R] = zeros;
    task rows for r in 0..R {
        for c in 0..C {
            out[r, c] = m[r, c] * 2 + r as i32;
            t[c, r] = m[r, c];
        }
    }
    task bump after rows {
        out[1, 2] += 1000;
        out[R - 1, C - 1] = -out[0, 1];
    }
    """,
    _buffers_2d(),
)


RF = rng_floats(3, 16, np.float32)
RD = rng_floats(4, (2, 3), np.float64)
RI = rng_ints(5, 16, np.int32)
RU = rng_ints(6, 8, np.uint64)


def _initialiser_sums() -> list[float]:
    s = 0.0
    for v in RF:
        s += float(v)
    return [s, float(RD[1, 2]) + 2.5 + 5.0, 3.0 * 2.5, -9.0]


case(
    "initialisers",
    """
    buffer io: f32[6] = iota;
    buffer iu: u32[2, 3] = iota;
    buffer fl: f64[3] = fill(2.5);
    buffer fi: i64[3] = fill(-9);
    buffer rf: f32[16] = random(3);
    buffer rd: f64[2, 3] = random(4);
    buffer ri: i32[16] = random(5);
    buffer ru: u64[8] = random(6);
    buffer sums: f64[4] = zeros;
    buffer isum: i64[2] = zeros;
    task main {
        let s: f64 = 0.0;
        for i in 0..16 { s += rf[i] as f64; }
        sums[0] = s;
        sums[1] = rd[1, 2] + fl[0] + io[5] as f64;
        sums[2] = (iu[1, 0] as f64) * fl[2];
        sums[3] = fi[1] as f64;
        let k: i64 = 0;
        for i in 0..16 { k += ri[i] as i64; }
        isum[0] = k;
        let u: u64 = 0;
        for i in 0..8 { u += ru[i]; }
        isum[1] = u as i64;
    }
    """,
    {
        "io": np.arange(6, dtype=np.float32),
        "iu": np.arange(6, dtype=np.uint32).reshape(2, 3),
        "fl": np.full(3, 2.5),
        "fi": np.full(3, -9, np.int64),
        "rf": RF,
        "rd": RD,
        "ri": RI,
        "ru": RU,
        "sums": _initialiser_sums(),
        "isum": [int(RI.astype(np.int64).sum()), int(RU.sum())],
    },
)


IN2 = np.arange(12, dtype=np.float32).reshape(3, 4) * np.float32(0.5) - np.float32(1)
case(
    "input_buffers",
    """
    buffer x: f32[3, 4] = input;
    buffer k: i64[2] = input;
    buffer flags: bool[3] = input;
    buffer y: f32[3, 4] = zeros;
    buffer z: i64[3] = zeros;
    task main {
        parallel for c in 0..4 {
            for r in 0..3 { y[r, c] = x[r, c] * 2.0 + 1.0; }
        }
        for r in 0..3 {
            if flags[r] { z[r] = k[0] * (r as i64); } else { z[r] = k[1]; }
        }
    }
    """,
    {"y": IN2 * np.float32(2) + np.float32(1), "z": [0, -5, 6000000000]},
    inputs={
        "x": IN2,
        "k": np.array([3000000000, -5], np.int64),
        "flags": np.array([True, False, True]),
    },
)


# --- async: join, select, async blocks, channels, signals, sleep, bulk for, extern fn -------------------------------

case(
    "join_tuples_mixed_futures",
    """
    buffer out: i64[6] = zeros;
    buffer fl: f64[1] = zeros;
    async fn slow(x: i32) -> i32 {
        yield_now().await;
        yield_now().await;
        return x * 10;
    }
    async fn quick(x: i32) -> i32 { return x + 100; }
    async fn pair(x: i32) -> i32 {
        let (a, b) = join(slow(x), quick(x)).await;
        return a - b;
    }
    task main {
        let k: i32 = 4;
        let (a, b, c) = join(slow(1), async { yield_now().await; k * 3 }, quick(2)).await;
        out[0] = a as i64;
        out[1] = b as i64;
        out[2] = c as i64;
        let (d, _) = join(pair(7), slow(9)).await;
        out[3] = d as i64;
        let (e, f) = join(quick(-5), quick(5)).await;
        out[4] = (e * f) as i64;
        let (g, h) = join(async { 2.5 as f64 }, slow(3)).await;
        fl[0] = g * (h as f64);
        out[5] = k as i64;
    }
    """,
    # slow(x) = 10x, quick(x) = x + 100; pair(7) = 70 - 107; quick(-5) * quick(5) = 95 * 105.
    {"out": [10, 12, 102, -37, 9975, 4], "fl": [75.0]},
)

case(
    "select_first_or_second_arm_wins",
    """
    buffer out: i32[5] = zeros;
    signal go;
    signal never;
    channel c: i32[2];
    async fn slow(x: i32) -> i32 {
        yield_now().await;
        return x + 1;
    }
    task main {
        go.set();
        select {
            _ = go.wait() => { out[0] = 1; }
            _ = sleep(2_000_000_000) => { out[0] = 2; }
        }
        c.send(5).await;
        select {
            _ = never.wait() => { out[1] = -1; }
            v = c.recv() => { out[1] = v; }
        }
        select {
            v = slow(40) => { out[2] = v; }
            _ = never.wait() => { out[2] = -1; }
        }
        select {
            _ = never.wait() => { out[3] = -1; }
            _ = sleep(1_000) => { out[3] = 3; }
        }
        c.send(9).await;
        select {
            v = c.recv() => { out[4] = v * 2; }
            _ = never.wait() => { out[4] = -1; }
        }
    }
    """,
    {"out": [1, 5, 41, 3, 18]},
    signals={"go": True, "never": False},
)

SEL_N = 12
case(
    "select_loser_recv_ready_loses_no_value",
    """
    const N: i32 = 12;
    buffer counts: i32[N] = zeros;
    buffer out: i32[1] = zeros;
    channel ch: i32[16];
    signal stop;
    shared total: i64 = 0;
    shared n: i32 = 0;
    task producer {
        for k in 0..N { ch.send(k).await; }
        stop.set();
        ch.close();
    }
    task consumer after producer {
        // stop is set and values are pending: both arms are ready at every select
        let rounds = 0;
        for r in 0..4 {
            select {
                _ = stop.wait() => { rounds += 1; }
                v = ch.recv() => {
                    rounds += 1;
                    counts[v] += 1;
                    total.fetch_add(v as i64);
                    n.fetch_add(1);
                }
            }
        }
        out[0] = rounds;
        for await v in ch {
            counts[v] += 1;
            total.fetch_add(v as i64);
            n.fetch_add(1);
        }
    }
    """,
    {"counts": [1] * SEL_N, "total": sum(range(SEL_N)), "n": SEL_N, "out": [4]},
    signals={"stop": True},
)

case(
    "select_recv_pending_then_stop_loses_no_value",
    """
    const N: i32 = 16;
    buffer counts: i32[N] = zeros;
    channel ch: i32[2];
    signal stop;
    shared total: i64 = 0;
    shared n: i32 = 0;
    task producer {
        for k in 0..N {
            ch.send(k).await;
            if k == 5 { stop.set(); }
            yield_now().await;
        }
        ch.close();
    }
    task consumer {
        // the recv arm waits on an empty channel when stop wins: a value sent then must not be lost
        loop {
            select {
                v = ch.recv() => {
                    counts[v] += 1;
                    total.fetch_add(v as i64);
                    n.fetch_add(1);
                }
                _ = stop.wait() => { break; }
            }
        }
        for await v in ch {
            counts[v] += 1;
            total.fetch_add(v as i64);
            n.fetch_add(1);
        }
    }
    """,
    {"counts": [1] * 16, "total": sum(range(16)), "n": 16},
    signals={"stop": True},
)

case(
    "async_blocks_capture_and_assign_locals",
    """
    buffer out: i32[6] = zeros;
    async fn inc(x: i32) -> i32 {
        yield_now().await;
        return x + 1;
    }
    async fn scaled(x: i32, k: i32) -> i32 {
        let y = async { x * k + inc(k).await }.await;
        return y;
    }
    task main {
        let x = 5;
        let y = 0;
        let z = async {
            x += 10;
            y = inc(x).await;
            x * 2
        }.await;
        out[0] = x;
        out[1] = y;
        out[2] = z;
        let s = 0;
        for k in 0..4 {
            s = async {
                let t = s;
                yield_now().await;
                t + k
            }.await;
        }
        out[3] = s;
        let (p, q) = join(async { x + 1 }, inc(y)).await;
        out[4] = p * 100 + q;
        out[5] = scaled(6, 7).await;
    }
    """,
    # x = 15, y = inc(15) = 16, z = 30; s = 0 + 1 + 2 + 3; p = 16, q = 17; scaled(6, 7) = 42 + 8.
    {"out": [15, 16, 30, 6, 1617, 50]},
)

case(
    "join_of_non_suspending_async_blocks",
    """
    buffer out: i32[1] = zeros;
    task main {
        let x = 5;
        let y = 3;
        let (p, q) = join(async { x + 1 }, async { y * 2 }).await;
        out[0] = p * 100 + q;
    }
    """,
    {"out": [606]},
)

BP_N = 10
BACKPRESSURE = """
    const N: i32 = 10;
    channel c: TY[CAP];
    signal go;
    shared sent: i32 = 0;
    buffer snap: i32[1] = zeros;
    buffer got: TY[N] = zeros;
    buffer cnt: i32[1] = zeros;
    task producer {
        for k in 0..N {
            c.send((k as TY) * SCALE).await;
            sent.fetch_add(1);
        }
        c.close();
    }
    task watcher {
        // nobody receives before go: the producer completes exactly CAP sends, then waits
        while sent.load() < CAP { yield_now().await; }
        for k in 0..20 { yield_now().await; }
        snap[0] = sent.load();
        go.set();
    }
    task consumer {
        go.wait().await;
        let i = 0;
        for await v in c {
            got[i] = v;
            i += 1;
        }
        cnt[0] = i;
    }
"""


def backpressure(cap: int, ty: str, scale: int, **kw: Any) -> None:
    source = BACKPRESSURE.replace("CAP", str(cap)).replace("TY", ty).replace("SCALE", str(scale))
    expect = {"snap": [cap], "got": [k * scale for k in range(BP_N)], "cnt": [BP_N], "sent": BP_N}
    case(f"channel_capacity_{cap}_backpressure_and_close", source, expect, **kw)


backpressure(3, "i64", 1_000_000_000)
backpressure(1, "i32", 2)

MPMC_P, MPMC_PER = 4, 25
case(
    "channel_many_producers_many_consumers",
    """
    const P: i32 = 4;
    const PER: i32 = 25;
    channel q: i32[4];
    buffer counts: i32[100] = zeros;
    buffer per: i32[3] = zeros;
    shared total: i64 = 0;
    shared got: i32 = 0;
    task producer for p in 0..P {
        for k in 0..PER { q.send(p * PER + k).await; }
    }
    task closer after producer { q.close(); }
    task consumer for c in 0..3 {
        let mine = 0;
        for await v in q {
            atomic_add(counts[v], 1);
            total.fetch_add(v as i64);
            got.fetch_add(1);
            mine += 1;
        }
        per[c] = mine;
    }
    task check after consumer {
        per[0] = per[0] + per[1] + per[2];
        per[1] = 0;
        per[2] = 0;
    }
    """,
    {
        "counts": [1] * (MPMC_P * MPMC_PER),
        "total": sum(range(MPMC_P * MPMC_PER)),
        "got": MPMC_P * MPMC_PER,
        "per": [MPMC_P * MPMC_PER, 0, 0],
    },
)

case(
    "signals_wait_woken_by_a_task",
    """
    buffer out: i32[5] = zeros;
    signal ready;
    signal done;
    shared stage: i32 = 0;
    task waiter for i in 0..3 {
        ready.wait().await;
        out[i] = stage.load() + i;
    }
    task setter {
        for k in 0..10 { yield_now().await; }
        stage.store(10);
        ready.set();
        done.wait().await;
        out[3] = stage.load();
    }
    task last after waiter {
        if ready.is_set() { out[4] = 1; }
        stage.store(77);
        done.set();
        done.wait().await;
    }
    """,
    {"out": [10, 11, 12, 77, 1], "stage": 77},
    signals={"ready": True, "done": True},
)

case(
    "sleep_then_write",
    """
    buffer out: i64[4] = zeros;
    shared order: i32 = 0;
    async fn nap(ns: u64, v: i64) -> i64 {
        sleep(ns).await;
        return v * 2;
    }
    task sleeper {
        sleep(200_000).await;
        out[0] = 1;
        let s: i64 = 0;
        for k in 0..3 {
            sleep(10_000).await;
            s += k as i64;
        }
        out[1] = s + nap(5_000, 20).await;
        order.fetch_add(1);
    }
    task other {
        sleep(0).await;
        out[2] = 2;
        out[3] = nap(1, 4).await;
        order.fetch_add(1);
    }
    """,
    {"out": [1, 43, 2, 8], "order": 2},
)

case(
    # a sleep suspends at least once: a loop of selects against a sleep that is due when the
    # select comes to it, or of sleeps of 0, lets the other tasks of its executor run (it
    # completed in place, and on one executor the sender and the setter never ran again)
    "loops_against_due_sleeps_let_the_others_run",
    """
    shared flag: i32 = 0;
    buffer out: i32[3] = zeros;
    channel c: i32[2];
    task producer { for k in 0..5 { c.send(k).await; } c.close(); }
    task consumer {
        let n: i32 = 0;
        let s: i32 = 0;
        while n < 5 {
            select {
                v = c.recv() => { n += 1; s += v; }
                _ = sleep(0) => { }
            }
        }
        out[0] = s;
        while flag.load() == 0 { sleep(0).await; }
        out[1] = flag.load();
        let t = sleep(0);
        out[2] = 1;
        t.await;
    }
    task setter after producer { flag.store(7); }
    """,
    {"out": [10, 7, 1]},
)

case(
    "many_receivers_wait_then_each_send_wakes_one",
    """
    shared total: i64 = 0;
    shared count: i64 = 0;
    channel work: i64[2];
    task loader {
        sleep(2_000_000).await;
        for t in 0..40 { work.send(t as i64).await; }
        work.close();
    }
    task worker for w in 0..12 {
        for await t in work {
            count.fetch_add(1);
            total.fetch_add(t);
        }
    }
    """,
    {"total": sum(range(40)), "count": 40},
)

# --- flagged values, credits and deferred looks (runtime/state.py, Flagged words) -------------------------------
# Senders that order nothing before their sends: relaxed, tagged value halves. Every bit of a value
# must come through, negative and past 32 bits too.

M64 = 1537228672809129301
case(
    "flagged_values_keep_every_bit_with_credits",
    """
    const N: i64 = 16;
    channel c: i64[4];
    buffer out: i64[N] = zeros;
    task s {
        let n = N;  // (a bound not known at compile time: the ring, not a counted channel)
        for t in 0..n { c.send((t - 8) * 1537228672809129301).await; }
        c.close();
    }
    task r {
        let k: i64 = 0;
        for await v in c { out[k] = v; k += 1; }
    }
    """,
    {"out": [wrap((t - 8) * M64, 64, True) for t in range(16)]},
)

case(
    "flagged_values_to_a_crowd_of_ticket_holders_with_deferred_looks",
    """
    const N: i64 = 40;
    channel c: i64[4];
    buffer out: i64[N] = zeros;
    task s {
        let n = N;  // (a bound not known at compile time: the ring, not a counted channel)
        for t in 0..n { c.send(t * 6700417 - (1 << 40)).await; }
        c.close();
    }
    task r for w in 0..6 {
        for await v in c { out[(v + (1 << 40)) / 6700417] = v; }
    }
    """,
    {"out": [t * 6700417 - (1 << 40) for t in range(40)]},
)

case(
    "rows_of_sends_with_captured_locals_to_five_ticket_holders",
    # rows of sends (codegen/sendloops.py, _send_run) from the loop's variable (an i32 from 3) and
    # locals the loop does not change (an f64 among them), three times over, rows cut by the
    # credit (8 of 16); five ticket holders, whose tickets run ahead of the deferred looks
    # (state.ticket_words: a table of the instances alone let one holder's word be overwritten)
    """
    const N: i32 = 100;
    channel c: i64[16];
    buffer out: i64[300] = zeros;
    task s {
        let k: i64 = 7;
        let f: f64 = 2.5;
        for r in 0..3 {
            let base: i64 = (r as i64) * 1000;
            for t in 3..N + 3 { c.send(base + (t as i64) * k + (f as i64)).await; }
        }
        c.close();
    }
    task q for w in 0..5 {
        for await v in c { out[(v / 1000) * 100 + ((v % 1000) - 2) / 7 - 3] = v; }
    }
    """,
    {"out": [1000 * r + 7 * (j + 3) + 2 for r in range(3) for j in range(100)]},
)

case(
    "flagged_ping_pong_with_quiet_frees",
    """
    channel ping: i64[1];
    channel pong: i64[1];
    buffer out: i64[1] = zeros;
    task a {
        let acc: i64 = 0;
        for k in 0..20 {
            ping.send(-(k as i64) * 4294967311).await;
            let v = pong.recv().await;
            acc = acc + v;
        }
        out[0] = acc;
    }
    task b {
        for k in 0..20 { let v = ping.recv().await; pong.send(v - 1).await; }
    }
    """,
    {"out": [sum(-k * 4294967311 - 1 for k in range(20))]},
)

case(
    "crediting_sender_that_closes_drops_its_later_sends",
    """
    channel c: i64[4];
    buffer out: i64[2] = zeros;
    task s { c.send(1).await; c.send(2).await; c.close(); c.send(3).await; }
    task r {
        let n: i64 = 0;
        let t: i64 = 0;
        for await v in c { n += 1; t += v; }
        out[0] = n;
        out[1] = t;
    }
    """,
    {"out": [2, 3]},
    stats={"closed_sends": 1},
)

case(
    "select_receivers_pass_on_wakes_they_did_not_use",
    """
    shared total: i64 = 0;
    shared taken: i64 = 0;
    channel a: i64[2];
    channel b: i64[2];
    task pa { sleep(1_000_000).await; for t in 0..20 { a.send(t as i64).await; } }
    task pb { sleep(1_000_000).await; for t in 0..20 { b.send(100 + t as i64).await; } }
    task rx for w in 0..8 {
        for k in 0..5 {
            select {
                v = a.recv() => { total.fetch_add(v); }
                v = b.recv() => { total.fetch_add(v); }
            }
            taken.fetch_add(1);
        }
    }
    """,
    {"total": sum(range(20)) + sum(range(100, 120)), "taken": 40},
)

case(
    "join_of_two_receives_of_one_channel",
    """
    shared total: i64 = 0;
    channel c: i64[1];
    task tx { sleep(500_000).await; for t in 0..16 { c.send(t as i64).await; } }
    task rx for w in 0..4 {
        for k in 0..2 {
            let (x, y) = join(c.recv(), c.recv()).await;
            total.fetch_add(x + y);
        }
    }
    """,
    {"total": 120},
)

case(
    "parallel_and_bulk_maps_unrolled_with_a_remainder",
    """
    const N: i64 = 1000;
    buffer x: f32[N] = iota;
    buffer y: f32[N] = zeros;
    buffer z: i64[N] = zeros;
    buffer u: i32[N] = zeros;
    buffer acc: i32[N] = zeros;
    task t {
        let s: f32 = 3.0;
        parallel for i in 1..N {
            let a = x[i] * s;
            y[i] = a + 1.0;
            z[i] = (i as i64) * 2;
        }
        bulk for i in 3..N { u[i] = (x[i] as i32) - 1; }
        parallel for i in 0..N { acc[i] += 1; }
        parallel for i in 0..N { acc[i] += 1; }
    }
    """,
    {
        "y": [0.0] + [3.0 * i + 1.0 for i in range(1, 1000)],
        "z": [0] + [2 * i for i in range(1, 1000)],
        "u": [0, 0, 0] + [i - 1 for i in range(3, 1000)],
        "acc": [2] * 1000,
    },
)

BULK_N = 3000
case(
    "bulk_for_then_read_results",
    """
    const N: i64 = 3000;
    buffer y: i64[N] = zeros;
    buffer z: f32[N] = zeros;
    buffer h: i32[8] = zeros;
    buffer tot: i64[2] = zeros;
    async fn halves(k: f32) {
        bulk for i in 0..N { z[i] = (i as f32) * k; }
    }
    task main {
        let m: i64 = 3;
        bulk for i in 0..N {
            y[i] = (i as i64) * m + 1;
            atomic_add(h[i % 8], 1);
        }
        parallel for i in 0..N { atomic_add(tot[0], y[i]); }
        halves(0.5).await;
    }
    task reader after main {
        parallel for i in 0..N { atomic_add(tot[1], (z[i] * 2.0) as i64); }
    }
    """,
    {
        "y": [3 * i + 1 for i in range(BULK_N)],
        "z": np.arange(BULK_N, dtype=np.float32) * np.float32(0.5),
        "h": [len(range(b, BULK_N, 8)) for b in range(8)],
        "tot": [sum(3 * i + 1 for i in range(BULK_N)), sum(range(BULK_N))],
    },
)

CF_N = 8
case(
    "channel_of_f64",
    """
    channel cf: f64[2];
    buffer got: f64[8] = zeros;
    buffer sum: f64[1] = zeros;
    task producer {
        for k in 0..8 { cf.send((k as f64) * 0.1 + 1.0e-12).await; }
        cf.close();
    }
    task consumer {
        let s: f64 = 0.0;
        let i = 0;
        for await v in cf {
            got[i] = v;
            s += v;
            i += 1;
        }
        sum[0] = s;
    }
    """,
    {
        "got": [k * 0.1 + 1.0e-12 for k in range(CF_N)],
        "sum": [sum_in_order([k * 0.1 + 1.0e-12 for k in range(CF_N)])],
    },
)

# counted channels (codegen/counted.py): a sender whose values are arithmetic of its loop's variable;
# the receivers compute each from a ticket, and the sender waits until they took capacity short of all
case(
    "counted_channel_values_by_ticket_to_five_receivers",
    """
    const N: i64 = 64;
    channel ready: i64[4];
    buffer out: i64[N] = zeros;
    task loader {
        for t in 3..N + 3 { ready.send(t * 2 - 6).await; }
        ready.close();
    }
    task compute for w in 0..5 {
        for await v in ready { out[v / 2] = v + 1; }
    }
    """,
    {"out": [2 * k + 1 for k in range(64)]},
)

case(
    "counted_channel_of_i32_from_a_negative_start_into_an_async_fn",
    # an i32 channel whose values are a cast of an i64 loop variable from -5; the receives are in
    # an async fn's for await; each receiver counts what it took into a shared scalar
    """
    channel c: i32[2];
    buffer out: i32[32] = zeros;
    shared taken: i64 = 0;
    async fn drain() -> i64 {
        let k: i64 = 0;
        for await v in c { out[(v as i64 + 7) / 3 + 5] = v; k += 1; }
        return k;
    }
    task s {
        for t in -5..27 { c.send((t * 3 - 7) as i32).await; }
        c.close();
    }
    task r for w in 0..3 { let k = drain().await; taken.fetch_add(k); }
    """,
    {"out": [3 * t - 7 for t in range(-5, 27)], "taken": 32},
)

case(
    "counted_channel_with_an_empty_range_ends_every_receiver",
    """
    channel c: u32[8];
    buffer out: i32[4] = zeros;
    task s {
        for t in 5..5 { c.send(t as u32).await; }
        c.close();
    }
    task r for w in 0..4 {
        let k: i32 = 1;
        for await v in c { k = 100; }
        out[w] = k;
    }
    """,
    {"out": [1, 1, 1, 1]},
)

case(
    "join_of_two_bulk_fors",
    # found by the differential test (tests/differential), hand-shrunk: each future's bulk loop adds its
    # value to every element, so both loops must run (the generated code runs only the last one's)
    """
    buffer acc: i64[8] = zeros;
    async fn fill(v: i64) {
        bulk for j in 0..8 { atomic_add(acc[j], v); }
    }
    task main { join(fill(1), fill(10)).await; }
    """,
    {"acc": [11] * 8},
)

case(
    "join_arguments_are_evaluated_when_the_futures_are_made",
    # found next to the differential test: `id(x)` makes its future (evaluating x) before the join
    # polls anything, as it does when the join suspends; a join that never suspends was inlined
    # and evaluated child after child, so the block's assignment was seen (out[0] == 5)
    """
    buffer out: i32[2] = zeros;
    async fn id(v: i32) -> i32 { return v; }
    task main {
        let x: i32 = 1;
        let (_, b) = join(async { x = 5; }, id(x)).await;
        out[0] = b;
        out[1] = x;
    }
    """,
    {"out": [1, 5]},
)

case(
    "send_on_closed_channel_drops",
    """
    channel c: i32[4];
    buffer out: i32[3] = zeros;
    task main {
        c.send(1).await;
        c.close();
        c.send(2).await;
        c.send(3).await;
        out[0] = c.recv().await;
        let n = 0;
        for await v in c { n += 1; }
        out[1] = n;
        out[2] = 9;
    }
    """,
    {"out": [1, 0, 9]},
    stats={"closed_sends": 2},
)

GELU_X = np.array([-2.0, -1.0, 0.5, 1.0, 2.0, 3.0], np.float32)


def _gelu(x: np.ndarray) -> np.ndarray:
    """The tanh approximation of samples/activations.py, in float32 with an f64 tanh."""
    inner = np.float32(0.7978845608) * (x + np.float32(0.044715) * x * x * x)
    return np.float32(0.5) * x * (np.float32(1) + np.tanh(inner.astype(np.float64)).astype(np.float32))


case(
    "extern_fn_from_samples",
    """
    buffer x: f32[6] = input;
    buffer y: f32[6] = zeros;
    buffer w: f32[1] = zeros;
    extern fn gelu(v: f32) -> f32 from "activations:gelu";
    async fn head(v: f32) -> f32 {
        yield_now().await;
        return gelu(v) * 2.0;
    }
    task main {
        parallel for i in 0..6 { y[i] = gelu(x[i]); }
        w[0] = head(x[3]).await;
    }
    """,
    {"y": _gelu(GELU_X), "w": _gelu(GELU_X[3:4]) * np.float32(2)},
    inputs={"x": GELU_X},
    rtol=1e-5,
    # activations.py sits in samples/: the module is importable from a program there
    path=str(SAMPLES / "extern_fn_contract_case.gasync"),
)


# --- joins and selects of every kind of future (issue 10) -----------------------------------------------------

case(
    "join_of_two_bulk_loops",
    """
    buffer a: i32[8] = zeros;
    buffer b: i32[8] = zeros;
    async fn fa() { bulk for i in 0..8 { a[i] = 1; } }
    async fn fb() { bulk for i in 0..8 { b[i] = 2; } }
    task main { join(fa(), fb()).await; }
    """,
    {"a": [1] * 8, "b": [2] * 8},
)

case(
    "a_joined_future_that_finished_is_not_run_again_when_a_later_one_forks",
    """
    buffer out: i32[64] = zeros;
    shared cnt: i64 = 0;
    async fn h() { cnt.fetch_add(100); }
    async fn f(lo: i64) { parallel for i in lo..lo + 32 { out[i] = 1; } cnt.fetch_add(1); }
    task main { join(h(), f(0), f(32)).await; }
    """,
    {"out": [1] * 64, "cnt": 102},
)

case(
    # a set of a signal in a parallel or bulk loop's body (it had no instance to wake for)
    "a_signal_set_in_a_loop_body_wakes_its_waiter",
    """
    signal fired;
    signal bulked;
    buffer o: i32[2] = zeros;
    task setter {
        parallel for i in 0..8 { if i == 5 { fired.set(); } }
        bulk for i in 0..40 { if i == 33 { bulked.set(); } }
    }
    task waiter { fired.wait().await; bulked.wait().await; o[0] = 1; }
    """,
    {"o": [1, 0]},
    signals={"fired": True, "bulked": True},
)

case(
    # float corners of the builtins: min and max skip a NaN whatever its place (Rust's
    # f64::min); a float % by 0 or of an infinity is NaN (IEEE fmod); a stored -0.0 loads as -0.0
    "float_builtins_at_nan_zero_and_infinity",
    """
    buffer z: f64[1] = zeros;
    buffer o: f64[8] = zeros;
    shared s: f64 = 0.0;
    task main {
        let nan: f64 = sqrt(-1.0 - z[0]);
        o[0] = min(nan, 1.0); o[1] = min(1.0, nan); o[2] = max(nan, 2.0); o[3] = max(2.0, nan);
        let inf: f64 = 1.0 / z[0];
        o[4] = 1.0 % z[0]; o[5] = inf % 2.0; o[6] = 7.5 % 2.0;
        s.store(-0.0);
        let a: f64 = s.load();
        o[7] = 1.0 / s.load() + 1.0 / a;
    }
    """,
    {"o": [1.0, 1.0, 2.0, 2.0, np.nan, np.nan, 1.5, -np.inf], "s": -0.0},
)

case(
    # a sleep too long for the device clock never ends (it wrapped round and ended at once)
    "a_sleep_longer_than_the_clock_never_ends",
    """
    channel c: i32[1];
    buffer out: i32[2] = zeros;
    task p { sleep(2_000_000).await; c.send(5).await; }
    task main {
        select {
            _ = sleep(18446744073709551615) => { out[0] = -1; }
            v = c.recv() => { out[0] = v; }
        }
    }
    """,
    {"out": [5, 0]},
)

case(
    # a close wakes the channel's lone receiver before its first poll: the wake used to queue
    # it while an executor claimed it fresh, and two executors polled it at once (the second
    # read its reduction's value before the first's loop had left it: 0 for +inf)
    "a_wake_before_the_first_poll_does_not_poll_an_instance_twice",
    """
    buffer acc: i64[4] = zeros;
    buffer x: i32[8] = zeros;
    async fn first() -> i32 {
        select {
            v = async { x[0] } => {
                let m: f32 = parallel for j in 0..0 reduce min { x[j] as f32 };
                acc[0] = m as i64;
            }
            _ = yield_now() => { }
        }
        return 0;
    }
    channel ch: i32[1];
    task sender {
        let (_, _) = join(async { x[0] }, sleep(0)).await;
        ch.send(1).await;
        ch.close();
    }
    task receiver {
        let v = first().await;
        for await got in ch { acc[1] = got as i64; }
        acc[2] = 7;
    }
    """,
    {"acc": [9223372036854775807, 1, 7, 0]},
)

case(
    # a block that never suspends is written in place, in its parent block's poll: the names
    # it reads (the task's loop variable) are that poll's to restore
    "a_block_in_place_inside_a_block_reads_the_loop_variable",
    """
    buffer out: i64[3] = zeros;
    task main {
        for k in 0..3 {
            let (a, _) = join(async {
                let v: i64 = async { (k as i64) * 10 + 1 }.await;
                v
            }, sleep(100)).await;
            out[k] = a;
        }
    }
    """,
    {"out": [1, 11, 21]},
)

case(
    # each block's loop state is its own: its parent restored and spilled every local around
    # each block's poll, writing back a count and a bound it had never restored (found by the
    # differential test: 1 for 35)
    "joined_async_blocks_keep_their_own_loop_state_across_polls",
    """
    buffer out: i64[3] = zeros;
    channel pc: i32[1];
    task main {
        let base: i64 = 100;
        let (h, n) = join(async {
            let h2: i64 = 0;
            for k in 0..3 { let v: i32 = pc.recv().await; h2 = h2 * 31 + (v as i64); }
            h2 + base
        }, async {
            let sent: i64 = 0;
            for k in 0..3 { pc.send(k * 3 + 1).await; sent += 1; }
            sent
        }).await;
        out[0] = h; out[1] = n; out[2] = base;
    }
    """,
    {"out": [((1 * 31) + 4) * 31 + 7 + 100, 3, 100]},
)

case(
    "reductions_of_joined_futures_each_get_their_own_value",
    """
    buffer x: i32[90] = iota;
    buffer o: i64[4] = zeros;
    buffer fo: f64[2] = zeros;
    async fn psum(k: i32) -> i64 {
        let s: i64 = parallel for i in 0..90 reduce sum { (x[i] * k) as i64 };
        yield_now().await;
        let t: i64 = parallel for i in 0..90 reduce max { (x[i] % k) as i64 };
        return s + t;
    }
    async fn fmax(k: f64) -> f64 {
        let m: f64 = parallel for i in 0..90 reduce max { (x[i] as f64) * k };
        yield_now().await;
        let n: f64 = parallel for i in 0..90 reduce min { (x[i] as f64) + k };
        return m + n;
    }
    task main {
        let (a, b) = join(psum(2), psum(7)).await;
        o[0] = a; o[1] = b;
        let (c, d) = join(fmax(0.5), fmax(2.0)).await;
        fo[0] = c; fo[1] = d;
        select {
            v = psum(5) => { o[2] = v; }
            v = psum(3) => { o[3] = v; }
        }
    }
    """,
    # psum(k) = k * 4005 + max(i % k), fmax(k) = 89 k + k; a select's first ready arm wins
    # (psum(5): it is polled first)
    {"o": [8011, 28041, 20029, 0], "fo": [45.0, 180.0]},
)

JB_N = 300
case(
    "joins_of_bulk_loops_nested_and_on_halves",
    """
    buffer a: i32[300] = zeros;
    buffer b: i32[300] = zeros;
    buffer c: i32[300] = zeros;
    buffer h: i64[600] = zeros;
    async fn fa() { bulk for i in 0..300 { a[i] = 1; } }
    async fn fb() { bulk for i in 0..300 { b[i] = 2; } }
    async fn fc() { bulk for i in 0..300 { c[i] = 3; } }
    async fn half(lo: i64, hi: i64, v: i64) { bulk for i in lo..hi { h[i] = v * i; } }
    task three { join(fa(), join(fb(), fc())).await; }
    task halves { join(half(0, 300, 5), half(300, 600, 7)).await; }
    """,
    {
        "a": [1] * JB_N,
        "b": [2] * JB_N,
        "c": [3] * JB_N,
        "h": [5 * i if i < JB_N else 7 * i for i in range(2 * JB_N)],
    },
)

FUTURE_KINDS = {  # kind -> (the future, what it adds to its task's slot of `out`)
    "susp": ("fs({k}, 10)", 10),
    "plain": ("fp({k}, 20)", 20),
    "yield": ("yield_now()", 0),
    "sleep": ("sleep(1000)", 0),
    "send": ("c.send(5)", 0),
    "recv": ("d.recv()", 0),
    "wait": ("go.wait()", 0),
    "join": ("join(fs({k}, 30), yield_now())", 30),
    "block": ("async {{ fs({k}, 40).await; }}", 40),
}


def _kinds_program() -> tuple[str, list[int]]:
    """Per kind of future, a task that joins it inside a join, and one that joins it in a select arm."""
    head = f"""
    buffer out: i64[{2 * len(FUTURE_KINDS)}] = zeros;
    buffer got: i32[2] = zeros;
    signal go;
    signal never;
    channel c: i32[4];
    channel d: i32[4];
    async fn fs(slot: i64, x: i64) -> i64 {{ yield_now().await; atomic_add(out[slot], x); return x; }}
    async fn fp(slot: i64, x: i64) -> i64 {{ atomic_add(out[slot], x); return x; }}
    task setter {{ go.set(); }}
    task feed {{ d.send(7).await; d.send(8).await; }}
    task drain after nested_send, arm_send {{ got[0] = c.recv().await + c.recv().await; }}
    task rest after nested_recv, arm_recv {{ got[1] = 1; }}
    """
    lines, want = [head], []
    for k, (kind, (fut, adds)) in enumerate(FUTURE_KINDS.items()):
        a, b = 2 * k, 2 * k + 1
        lines.append(f"task nested_{kind} {{ join(fs({a}, 1), join({fut.format(k=a)}, fs({a}, 2))).await; ")
        lines.append(f"    out[{a}] += 100; }}")
        lines.append(f"task arm_{kind} {{ select {{ _ = never.wait() => {{ out[{b}] += 1000; }}")
        lines.append(f"    _ = join({fut.format(k=b)}, fs({b}, 2)) => {{ out[{b}] += 100; }} }} }}")
        want += [103 + adds, 102 + adds]
    return "\n".join(lines) + "\n", want


KINDS_SOURCE, KINDS_OUT = _kinds_program()
case(
    "every_future_kind_in_a_nested_join_and_a_select_arm",
    KINDS_SOURCE,
    # both sends arrived, and each receive took one value
    {"out": KINDS_OUT, "got": [10, 1]},
)

# A select whose losing arm had posted a bulk job: which arm wins depends on timing, so
# tests/sim/test_join_sim.py and tests/gpu check what holds either way.
LOSING_BULK_ARM = """
buffer a: i32[2048] = zeros;
buffer b: i32[2048] = zeros;
buffer out: i32[2] = zeros;
signal go;
async fn fa() { bulk for i in 0..2048 { a[i] = a[i] + 1; } }
async fn fb() { bulk for i in 0..2048 { b[i] = b[i] + 2; } }
task setter { go.set(); }
task main {
    for k in 0..3 {
        select {
            _ = fa() => { out[0] += 1; }
            _ = go.wait() => { out[1] += 1; }
        }
        fb().await;
    }
}
"""


case(
    "reductions_of_every_kind_in_parallel_and_bulk_loops",
    # the spec's v1 reductions: each operator on a type it takes, in a parallel for (shuffles in
    # one warp) and a bulk for (chunks combined with atomics), an empty range (the identity),
    # a reduction in an async fn and one as a compound assignment's value
    """
    const N: i64 = 1000;
    buffer x: i64[N] = iota;
    buffer f: f64[N] = iota;
    buffer u: u64[N] = fill(9223372036854775808);
    buffer ri: i64[8] = zeros;
    buffer rf: f64[4] = zeros;
    buffer ru: u64[2] = zeros;
    buffer rb: i32[2] = zeros;
    async fn total(n: i64) -> i64 {
        let s: i64 = bulk for i in 0..n reduce sum { x[i] * 2 };
        return s;
    }
    task main {
        ri[0] = parallel for i in 0..N reduce sum { x[i] };
        ri[1] = bulk for i in 0..N reduce max { x[i] % 37 };
        ri[2] = parallel for i in 3..3 reduce min { x[i] };
        ri[3] = bulk for i in 0..N reduce or { x[i] & 512 };
        ri[4] = parallel for i in 1..N reduce and { x[i] | 1 };
        ri[5] = total(N).await;
        ri[6] = 5;
        ri[6] += bulk for i in 0..10 reduce sum { let h: i64 = 0; if x[i] > 4 { h = 1; } h };
        rf[0] = bulk for i in 0..N reduce sum { f[i] * 0.5 };
        rf[1] = parallel for i in 0..N reduce min { 10.0 - f[i] };
        rf[2] = bulk for i in 0..N reduce max { f[i] };
        ru[0] = bulk for i in 0..N reduce max { u[i] + (i as u64) };
        ru[1] = parallel for i in 0..N reduce min { u[i] + (i as u64) };
        let any: bool = bulk for i in 0..N reduce or { x[i] == 999 };
        let all: bool = parallel for i in 0..N reduce and { x[i] < 999 };
        if any { rb[0] = 1; }
        if all { rb[1] = 1; }
    }
    """,
    {
        "ri": [499500, 36, 9223372036854775807, 512, 1, 999000, 10, 0],
        "rf": [249750.0, -989.0, 999.0, 0.0],
        "ru": [9223372036854775808 + 999, 9223372036854775808],
        "rb": [1, 0],
    },
)


case(
    # a NaN is no candidate of a float min or max: every value NaN gives NaN, some give the
    # others' extreme, none (an empty range) the identity; in parallel and bulk loops alike
    "float_min_and_max_are_nan_only_when_every_value_is",
    """
    buffer x: f32[40] = iota;
    buffer o: f32[8] = zeros;
    task main {
        o[0] = parallel for i in 0..40 reduce max { sqrt(-1.0 - x[i]) };
        o[1] = bulk for i in 0..40 reduce min { sqrt(-1.0 - x[i]) };
        o[2] = parallel for i in 0..40 reduce min { sqrt(x[i] - 20.0) };
        o[3] = bulk for i in 0..40 reduce max { sqrt(20.0 - x[i]) };
        o[4] = parallel for i in 5..5 reduce max { x[i] };
        o[5] = bulk for i in 7..3 reduce min { x[i] };
        o[6] = parallel for i in 0..1 reduce max { sqrt(-1.0 - x[i]) };
        o[7] = bulk for i in 0..1 reduce max { x[i] - 1.0 };
    }
    """,
    {"o": [np.nan, np.nan, 0.0, np.sqrt(np.float32(20)), -np.inf, np.inf, np.nan, -1.0]},
)

case(
    # a literal tail takes the reduction's type from its context, as any literal (Rust's rule)
    "a_reductions_literal_tail_takes_its_type_from_the_context",
    """
    buffer out: i64[3] = zeros;
    task main {
        let s: i64 = parallel for i in 0..4 reduce sum { 3000000000 };
        out[0] = s;
        out[1] = bulk for i in 0..4 reduce max { 3000000000 };
        out[2] += parallel for i in 0..4 reduce sum { 5 };
    }
    """,
    {"out": [12000000000, 3000000000, 20]},
)


# --- groups (v1): tasks that share one SM, local buffers and channels ------------------------------------------

case(
    "group_staged_pipeline",
    """
    const TILE: i64 = 32;
    buffer x: f32[2 * 3 * TILE] = iota;
    buffer y: f32[2 * 3 * TILE] = zeros;
    group pipe for g in 0..2 {
        local buffer stage: f32[2, TILE];
        local buffer tile_of: i64[2];
        local channel full: i32[2];
        local channel free: i32[2];
        task loader {
            for s in 0..2 { free.send(s).await; }
            for k in 0..3 {
                let s = free.recv().await;
                let t: i64 = (g as i64) * 3 + (k as i64);
                tile_of[s] = t;
                parallel for i in 0..TILE { stage[s, i] = x[t * TILE + i]; }
                full.send(s).await;
            }
            full.close();
        }
        task compute for c in 0..2 {
            for await s in full {
                let t = tile_of[s];
                parallel for i in 0..TILE { y[t * TILE + i] = 2.0 * stage[s, i] + 1.0; }
                free.send(s).await;
            }
        }
    }
    """,
    {"y": 2 * np.arange(192, dtype=np.float32) + 1},
)

case(
    # each instance sums into a local accumulator: it must start at zero in every instance
    # (one block runs them in turn on the simulator), and the group's and the task's
    # variables are both seen; a float local channel carries the partial sums
    "group_locals_fresh_per_instance",
    """
    buffer x: f64[4, 8] = iota;
    buffer out: f64[4] = zeros;
    shared seen: i64 = 0;
    group rows for r in 0..4 {
        local buffer acc: f64[1];
        local channel parts: f64[4];
        task part for h in 0..2 {
            let s: f64 = parallel for j in 0..4 reduce sum { x[r, h * 4 + j] };
            parts.send(s).await;
        }
        task total {
            for k in 0..2 {
                let v = parts.recv().await;
                acc[0] = acc[0] + v;
            }
            out[r] = acc[0];
            seen.fetch_add(1);
        }
    }
    """,
    {"out": [float(sum(range(8 * r, 8 * r + 8))) for r in range(4)], "seen": 4},
)

case(
    # a local receive whose value is dropped (its generated code had an `if` with no body)
    "a_local_receive_may_drop_its_value",
    """
    buffer out: i32[2] = zeros;
    group g {
        local channel q: i32[2];
        task a { q.recv().await; out[0] = 1; select { _ = q.recv() => { out[1] = 2; } } }
        task b { q.send(5).await; q.send(6).await; }
    }
    """,
    {"out": [1, 2]},
)

case(
    # a ring of one slot: "holds position 0's value" must not read as "free for position 1"
    "a_local_channel_of_one_slot_carries_every_value",
    """
    buffer out: i32[6] = zeros;
    group g for k in 0..2 {
        local channel c: i32[1];
        task tx { for v in 1..4 { c.send(v).await; } c.close(); }
        task rx { for await v in c { out[k * 3 + v - 1] = v * 10 + k; } }
    }
    """,
    {"out": [10, 20, 30, 11, 21, 31]},
)

case(
    # ungrouped tasks before and after a group, and a global channel out of it
    "group_mixed_with_tasks",
    """
    buffer base: i64[3] = zeros;
    buffer out: i64[3] = zeros;
    shared total: i64 = 0;
    channel done: i64[8];
    task init { parallel for i in 0..3 { base[i] = (i as i64) * 10; } }
    group work for g in 0..3 after init {
        local channel hand: i64[1];
        task produce { hand.send(base[g] + 1).await; }
        task consume { let v = hand.recv().await; out[g] = v; done.send(v).await; }
    }
    task collect { for k in 0..3 { let v = done.recv().await; total.fetch_add(v); } }
    task report after work, collect { total.fetch_add(1000); }
    """,
    {"out": [1, 11, 21], "total": 1033},
)

case(
    # futures kept in locals and awaited later (lazy, as the spec's "nothing runs until it is
    # awaited"): arguments evaluated where the future is made, each used once, in branches too
    "futures_kept_in_locals_run_where_they_are_awaited",
    """
    buffer out: i64[7] = zeros;
    channel c: i64[4];
    signal go;
    shared runs: i32 = 0;
    async fn twice(x: i32) -> i32 { runs.fetch_add(1); return x * 2; }
    async fn add(a: i64, b: i64) -> i64 { return a + b; }
    task main {
        let f = twice(21);
        out[6] = runs.load() as i64;          // made, not run: 0
        out[0] = f.await as i64;
        let k = 5;
        let s = add(3000000000, k as i64);     // its arguments are taken here
        let k = 100;
        let g = async { k * 2 };
        let (a, b) = join(twice(1), g).await;
        out[1] = (a as i64) * 1000 + (b as i64);
        let r = c.recv();
        c.send(9).await;
        let w = go.wait();
        go.set();
        w.await;
        out[2] = s.await - 3000000000 + r.await;
        let j = join(twice(4), async { 1 });
        let (p, q) = j.await;
        out[3] = (p + q) as i64;
        for i in 0..3 {
            let t = twice(i);
            if i == 1 { out[4] += t.await as i64; } else { out[4] += 100 * (t.await as i64); }
        }
        let x = twice(50);
        select { v = x => { out[5] = v as i64; } }
        c.close();
    }
    """,
    {"out": [42, 2200, 14, 9, 402, 100, 0], "runs": 7},
)

case(
    # a literal's type from a later use (decision 59): lets, a for's range, a let of such a local
    "a_literal_takes_its_type_from_a_later_use",
    """
    buffer a: i64[5] = zeros;
    buffer d: f64[2] = zeros;
    channel ready: i64[2];
    shared s: u64 = 0;
    fn f(x: i64) -> i64 { return x * 1000000000; }
    task main {
        let n = 5;
        a[0] = n;
        for k in 0..2 { a[k + 1] = k - 1; }
        let m = 7;
        let q = m;
        a[3] = f(q);
        let v = 0.1;
        d[0] = v;
        for k in 0..4 { s.fetch_add(k); }
        let big = 3000000000;                 // past i32: i64, as its use needs
        let more = big * 2;
        a[4] = more;
    }
    task tx { for t in 0..2 { ready.send(t + 4000000000).await; } }
    task rx { let u = 3; let w = ready.recv().await + ready.recv().await; d[1] = ((w - u) as f64) * 0.5; }
    """,
    {"a": [5, -1, 0, 7000000000, 6000000000], "d": [0.1, (8000000001 - 3) * 0.5], "s": 6},
)

case(
    # a kept join's calls and a kept send take their arguments where they are made; kept
    # sleeps in a select; an argument local beside a buffer of its name; a literal local
    # retyped from a comparison's other side and from inside an async block (decisions 57, 59)
    "kept_futures_take_their_arguments_where_they_are_made",
    """
    buffer f_arg0: i32[1] = zeros;
    buffer out: i64[6] = zeros;
    channel ch: i64[1];
    signal stop;
    async fn double(x: i32) -> i32 { return x * 2; }
    task p {
        let k: i64 = 2;
        let s = ch.send(1 << k);
        k = 5;
        s.await;
        ch.close();
    }
    task c { for await v in ch { out[0] = v; } }
    task main {
        let a = 1;
        let j = join(double(a), double(a + 1));
        a = 50;
        let (r, q) = j.await;
        out[1] = (r * 10 + q) as i64;
        let t = sleep(1_000);
        select { _ = stop.wait() => { out[2] = 1; } _ = t => { out[2] = 2; } }
        let f = double(21);
        out[3] = f.await as i64;
        let big: i64 = 5;
        for m in 0..4 { if m + 1 < big { out[4] += 1; } }
        let n = 7;
        let b = async { out[5] = n; 0 };
        let z = b.await;
    }
    """,
    {"out": [4, 24, 2, 42, 4, 7]},
)

case(
    # u64 ranges past 2^63: a for counts from its start, and a parallel or bulk range empty as
    # unsigned numbers stays empty (its int64 words would have read big..1 as two steps)
    "u64_ranges_past_two_to_the_63",
    """
    buffer c: u64[4] = zeros;
    task main {
        let big: u64 = 18446744073709551615;
        let hi: u64 = 1;
        let n: u64 = 0;
        for i in 3..big { if i > 5 { break; } n += i; }
        c[0] = n;
        c[1] = parallel for i in big..hi reduce sum { 1 };
        c[2] = bulk for i in big..hi reduce sum { 1 };
        for i in big - 2..big { c[3] = i; }
    }
    """,
    {"c": [12, 0, 0, 18446744073709551614]},
)

case(
    # parallel and bulk ranges across 2^63 and up to the top of u64 and i64: the lanes count
    # in words that keep the unsigned order, and no lane's word wraps past int64's top
    "parallel_ranges_across_two_to_the_63_and_at_the_top",
    """
    buffer c: u64[6] = zeros;
    buffer d: i64[4] = zeros;
    task main {
        let mid: u64 = 9223372036854775800;
        let top: u64 = 18446744073709551000;
        c[0] = parallel for i in mid..mid + 16 reduce sum { i - mid };
        c[1] = bulk for i in mid..mid + 40 reduce max { i };
        c[2] = parallel for i in top..18446744073709551615 reduce sum { 1 };
        c[3] = bulk for i in top..18446744073709551615 reduce max { i };
        c[4] = bulk for i in top..18446744073709551615 reduce min { i };
        c[5] = parallel for i in mid + 16..mid reduce sum { 1 };
        let a: i64 = 9223372036854775000;
        let b: i64 = 9223372036854775807;
        d[0] = bulk for j in a..b reduce sum { 1 };
        d[1] = parallel for j in a..b reduce max { j };
        d[2] = parallel for j in b - 3..b reduce sum { j - a };
        parallel for j in a..b { if j == b - 1 { d[3] = j; } }
    }
    """,
    {
        "c": [120, 9223372036854775839, 615, 18446744073709551614, 18446744073709551000, 0],
        "d": [807, 9223372036854775806, 804 + 805 + 806, 9223372036854775806],
    },
)

case(
    # a select over two sleeps wakes at the earlier, whichever arm registered it: the later
    # registration once replaced the deadline, and this run waited 60 s (past its --timeout)
    "select_over_two_sleeps_wakes_at_the_earlier",
    """
    buffer out: i64[2] = zeros;
    async fn slow(x: i64) -> i64 { sleep(2_000_000).await; return x * 10; }
    task main {
        select {
            _ = sleep(1_000_000) => { out[0] = 5; }
            _ = sleep(60_000_000_000) => { out[0] = 99; }
        }
        select {
            v = slow(7) => { out[1] = v; }
            _ = sleep(60_000_000_000) => { out[1] = -1; }
        }
    }
    """,
    {"out": [5, 70]},
    timeout=20.0,
)

case(
    # atomic_and/atomic_or at an index the compiler cannot prove (so checked at run time):
    # the checked path once lacked these two operators
    "checked_atomic_and_or",
    """
    buffer h: i32[4] = zeros;
    buffer m: u64[2] = fill(18446744073709551615);
    buffer idx: i64[1] = zeros;
    task main {
        let c: i64 = idx[0];
        parallel for i in 0..4 { atomic_or(h[c], 1 << (i as i32)); }
        parallel for i in 0..2 {
            let old = atomic_and(m[c + i], 255 << ((i as u64) * 8));
            h[c + 1 + i] = (old >> 60) as i32;
        }
    }
    """,
    {"h": [15, 15, 15, 0], "m": [255, 65280]},
)

case(
    # task and group instance variables over u64 ranges past 2^63 (their start is no int64)
    "instance_variables_past_two_to_the_63",
    """
    const A: u64 = 18446744073709551610;
    const B: u64 = 9223372036854775806;
    buffer u: u64[4] = zeros;
    buffer v: u64[4] = zeros;
    task x for j in A..(A + 3) { u[j - A] = j; }
    group g for q in B..(B + 4) { task t { v[q - B] = q; } }
    """,
    {
        "u": [18446744073709551610, 18446744073709551611, 18446744073709551612, 0],
        "v": [9223372036854775806, 9223372036854775807, 9223372036854775808, 9223372036854775809],
    },
)

case(
    # floor and ceil keep the sign of a zero result, as the GPU's (IEEE) do
    "floor_and_ceil_keep_a_negative_zero",
    """
    buffer x: f64[3] = input;
    buffer o: f64[4] = zeros;
    buffer s: i32[4] = zeros;
    task main {
        o[0] = ceil(x[0]); o[1] = floor(x[1]); o[2] = ceil(x[1]); o[3] = floor(x[2]);
        for k in 0..4 { if 1.0 / o[k] < 0.0 { s[k] = 1; } }
    }
    """,
    {"o": [-0.0, -0.0, -0.0, 0.0], "s": [1, 1, 1, 0]},
    inputs={"x": np.array([-0.5, -0.0, 0.0])},
)

case(
    # an async block's value typed by literals takes its type from its use (decision 59), and
    # the other operand is still read after the block ran
    "an_async_blocks_literal_value_takes_its_type_from_its_use",
    """
    buffer out: i64[4] = zeros;
    task main {
        out[1] = 7;
        out[0] = async { let g = 10; out[1] = 100; g * 2 }.await + out[1];
        let x: i64 = async { let h = 3000000000; h + 1 }.await;
        out[2] = x;
        out[3] = out[1] - async { 5 }.await;
    }
    """,
    {"out": [120, 100, 3000000001, 95]},
)
