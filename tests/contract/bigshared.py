"""Programs whose groups need more shared memory than a block's static arrays may hold (48 KiB),
with the values each must compute: their locals are views of the block's dynamic shared
memory (codegen/groups.py, ``dynamic_shared``). Few elements of 8 bytes each, so that the
simulator runs them quickly.

``ONE_GROUP``: 96 KiB of f64 stages, a bool, an i32 buffer and a local channel, in three
instances; each instance counts in its locals from the zeros its block's reset left, so an
instance that saw the last one's locals counts past 1. ``TWO_GROUPS``: two groups of 60 KiB
each, whose locals share the block's dynamic shared memory from byte 0 (a block runs one
instance at a time); the second reads its locals before writing them, and must see zeros
where the first left non-zero f64s.
"""

from __future__ import annotations

from typing import Any

import numpy as np

N = 6144  # 2 x N f64: 96 KiB
ONE_GROUP = """\
const N: i64 = 6144;
buffer y: f64[3 * N] = zeros;
buffer z: i32[6] = zeros;
group pipe for g in 0..3 {
    local buffer stage: f64[2, N];
    local buffer seen: bool[3];
    local buffer cnt: i32[5];
    local channel full: i32[2];
    task loader {
        parallel for i in 0..N { stage[0, i] = (i as f64) + (g as f64) * 0.5; stage[1, i] = 2.0 * (i as f64); }
        if !seen[1] { cnt[2] = cnt[2] + 1; }
        seen[1] = true;
        cnt[4] = cnt[4] + 7;
        full.send(1).await;
        full.close();
    }
    task compute {
        for await s in full {
            parallel for i in 0..N { y[(g as i64) * N + i] = stage[0, i] + stage[s, i]; }
            if seen[1] { z[2 * g] = cnt[2]; }
            z[2 * g + 1] = cnt[4] + s;
        }
    }
}
"""


def one_group_expect(n: int = N) -> dict[str, Any]:
    """ONE_GROUP's values, or those of ``sized(n)``'s."""
    i = np.arange(n, dtype=np.float64)
    y = np.concatenate([(i + g * 0.5) + 2.0 * i for g in range(3)])
    return {"y": y, "z": np.array([1, 8] * 3, dtype=np.int32)}


M = 7680  # 60 KiB of f64 (group a), and of i64 (group b)
TWO_GROUPS = f"""\
const M: i64 = {M};
buffer ya: f64[M] = zeros;
buffer yb: i64[2 * M] = zeros;
group a {{
    local buffer fa: f64[M];
    task t {{
        parallel for i in 0..M {{ fa[i] = 3.0 + (i as f64); }}
        parallel for i in 0..M {{ ya[i] = fa[i] * 2.0; }}
    }}
}}
group b after a {{
    local buffer fb: i64[M];
    task t2 {{
        parallel for i in 0..M {{ yb[i] = fb[i]; }}
        parallel for i in 0..M {{ fb[i] = i * 5; }}
        parallel for i in 0..M {{ yb[M + i] = fb[i] + 1; }}
    }}
}}
"""


def sized(n: int) -> str:
    """ONE_GROUP with stages of ``n`` f64s each."""
    return ONE_GROUP.replace(f"const N: i64 = {N};", f"const N: i64 = {n};")


def two_groups_expect() -> dict[str, Any]:
    i = np.arange(M)
    return {"ya": (3.0 + i) * 2.0, "yb": np.concatenate([np.zeros(M, np.int64), i * 5 + 1])}


PROGRAMS = {"one_group": (ONE_GROUP, one_group_expect), "two_groups": (TWO_GROUPS, two_groups_expect)}


def check(name: str, buffers: dict[str, Any], expect: dict[str, Any] | None = None) -> None:
    """``buffers`` (a run's Result.buffers) hold what program ``name`` must compute (or ``expect``)."""
    for buf, want in (expect or PROGRAMS[name][1]()).items():
        got = np.asarray(buffers[buf])
        assert got.dtype == want.dtype or got.dtype.kind == want.dtype.kind, (buf, got.dtype)
        np.testing.assert_array_equal(got, want, err_msg=f"{name}: buffer {buf}")
