"""runtime/numbafast.py gives the same values, hash and equality as Numba-CUDA's own flags."""

from __future__ import annotations

from typing import Any

from numba.cuda.core.targetconfig import TargetConfig
from numba.cuda.flags import Flags

from gasync.runtime import numbafast


def original_values(f: Any) -> dict[str, Any]:
    return {k: getattr(f, k) for k in f.options}  # what TargetConfig.values did, property by property


def flags(**set_: Any) -> Flags:
    f = Flags()
    for k, v in set_.items():
        setattr(f, k, v)
    return f


def test_the_patch_computes_what_the_originals_did() -> None:
    assert numbafast.install() and numbafast.install()  # (once per process; a second call is a no-op)
    cases = [
        flags(),
        flags(debuginfo=True),
        flags(debuginfo=False),  # set explicitly to its default: equal to the empty one
        flags(forceinline=True, boundscheck=True),
        flags(error_model="numpy"),
    ]
    for a in cases:
        assert a.values() == original_values(a)
        assert hash(a) == hash(tuple(sorted(original_values(a))))
        for b in cases:
            assert (a == b) == (original_values(a) == original_values(b)), (a, b)
    assert cases[0] == cases[2] and cases[0] != cases[1] and cases[0] == Flags(cases[0])
    assert (cases[0] == object()) is False and isinstance(cases[0], TargetConfig)
