"""The arithmetic of the generated code where Python's and the GPU's differ from the
language's (docs/language.md): Rust's truncating integer division and remainder (0 for a
zero divisor), saturating float-to-int ``as``, NaN-ignoring min and max, u64 ranges counted in int64 words. devicelib.py
re-exports these for the generated code (``dl.idiv`` ...)."""

from __future__ import annotations

from numba import float64, int64, uint64

from gasync.runtime.order import INLINE


@INLINE
def idiv(a, b):  # type: ignore[no-untyped-def]
    """Integer division truncating toward zero (Rust's), 0 for a zero divisor."""
    if b == 0:
        return a - a
    q = a // b
    if q < 0 and q * b != a:
        q += 1
    return q


@INLINE
def irem(a, b):  # type: ignore[no-untyped-def]
    if b == 0:
        return a - a
    return a - b * idiv(a, b)


@INLINE
def f2i(x, lo, hi):  # type: ignore[no-untyped-def]
    """Rust's float-to-signed-int ``as``: NaN is 0, out-of-range values saturate.

    The comparisons are against the limits as float64 (2^63 for i64, exactly),
    so anything at or above ``hi`` as a float gives ``hi``.
    """
    if x != x:
        return int64(0)
    if x >= float64(hi):
        return int64(hi)
    if x <= float64(lo):
        return int64(lo)
    return int64(x)


@INLINE
def f2u(x, hi):  # type: ignore[no-untyped-def]
    """Rust's float-to-unsigned-int ``as``: NaN and negatives are 0, too large gives ``hi``."""
    if x != x or x <= 0.0:
        return uint64(0)
    if x >= float64(hi):
        return uint64(hi)
    return uint64(x)


@INLINE
def fmin(a, b):  # type: ignore[no-untyped-def]
    """The smaller, a NaN being no candidate (Rust's f64::min, CUDA's fmin). Two selects, no
    branch: a NaN ``a`` fails the test and gives ``b``; a NaN ``b`` gives ``a`` (a loop's
    loads may then be scheduled past it: codegen/maps.py)."""
    r = a if a <= b else b
    return a if b != b else r


@INLINE
def fmax(a, b):  # type: ignore[no-untyped-def]
    """The larger, a NaN being no candidate (Rust's f64::max, CUDA's fmax); two selects, as
    ``fmin``."""
    r = a if a >= b else b
    return a if b != b else r


@INLINE
def fdiv(a, b):  # type: ignore[no-untyped-def]
    return a / b


@INLINE
def u64_span(a, b):  # type: ignore[no-untyped-def]
    """The iterations of the u64 range ``a..b`` as an int64 (2^63 - 1 at most: a loop that
    long never ends anyway)."""
    if b <= a:
        return int64(0)
    d = b - a
    if d > uint64(0x7FFFFFFFFFFFFFFF):
        return int64(0x7FFFFFFFFFFFFFFF)
    return int64(d)


TURNS_BELOW = (1 << 63) - (1 << 20)  # a parallel loop's stop word under which k + n * LANES cannot wrap


SHORT_SPAN = 1 << 32  # a parallel loop's range words up to which its lanes take several iterations a turn


@INLINE
def short_span(k, hi):  # type: ignore[no-untyped-def]
    """Whether the words ``k..hi`` of a parallel loop whose range may be too long to end are
    few enough for the loops that take several iterations a turn, which look at no deadline."""
    return k >= hi or uint64(hi - k) <= uint64(SHORT_SPAN)


@INLINE
def lane_start(lo, hi, lane):  # type: ignore[no-untyped-def]
    """A lane's first word of the range ``lo..hi``: ``lo + lane``, or ``hi`` where the lane has
    no iteration (there ``lo + lane`` might wrap past int64's top and look less than ``hi``)."""
    if lo < hi and uint64(hi - lo) > uint64(lane):
        return lo + lane
    return hi


@INLINE
def u64_word(x):  # type: ignore[no-untyped-def]
    """A u64 range bound as the int64 word a parallel or bulk loop counts in: ``x - 2^63``,
    which keeps the unsigned order as signed words (``big..1`` stays empty, ``2^63 - 8..2^63
    + 8`` has 16 iterations); ``word_u64`` gives the value back."""
    return int64(x ^ uint64(0x8000000000000000))


@INLINE
def word_u64(k):  # type: ignore[no-untyped-def]
    """The u64 loop value of word ``k`` (``u64_word``'s inverse)."""
    return uint64(k) ^ uint64(0x8000000000000000)
