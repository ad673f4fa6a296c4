"""runtime/numbafast.py gives the same values, hash and equality as Numba-CUDA's own flags."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from numba.core.errors import TypingError
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


# A stand-in scipy whose BLAS module says it was imported (the real one costs ~0.1-0.4 s of a
# process; the suite's environment has none, so one is put on the path)
FAKE_BLAS = "import builtins\nbuiltins.FAKE_BLAS_IMPORTED = True\n"
PROBE = """
import builtins, sys
{call}
from numba.cuda.np import arraymath, linalg
print(getattr(builtins, "FAKE_BLAS_IMPORTED", False), arraymath._HAVE_BLAS, linalg.ensure_blas.__name__)
"""


def _probe(tmp_path: Path, call: str) -> list[str]:
    pkg = tmp_path / "scipy" / "linalg"
    pkg.mkdir(parents=True, exist_ok=True)
    (tmp_path / "scipy" / "__init__.py").write_text('__version__ = "1.17.1"\n')  # (Numba reads it)
    (pkg / "__init__.py").write_text("")
    (pkg / "cython_blas.py").write_text(FAKE_BLAS)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), *sys.path]))
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    code = PROBE.format(call=call)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_numba_cuda_asks_scipy_for_blas_unless_gasync_answers_first(tmp_path: Path) -> None:
    # Numba-CUDA's own import of arraymath imports scipy's BLAS where one is installed ...
    assert _probe(tmp_path, "") == ["True", "True", "ensure_blas"]
    # ... and after gasync's, it has not: no BLAS for device code, linalg's own check put back
    call = "from gasync.runtime import numbafast\nassert numbafast.arraymath_without_blas()"
    assert _probe(tmp_path, call) == ["False", "False", "ensure_blas"]


def test_an_operator_call_is_typed_once_for_the_same_argument_types() -> None:
    import operator

    from numba.core import types
    from numba.cuda.descriptor import cuda_target

    assert numbafast.memo_operator_calls() >= 1 and numbafast.memo_operator_calls() >= 1  # (once a process)
    ctx = cuda_target.typing_context
    ctx.refresh()
    add = ctx.resolve_value_type(operator.add)
    original = type(add).get_call_type.__wrapped__
    calls: list[tuple[Any, ...]] = []

    def counted(self: Any, context: Any, args: Any, kws: Any) -> Any:
        calls.append(tuple(args))
        return original(self, context, args, kws)

    memo = numbafast._memoizing(counted, {operator.add})
    pair = (types.float32, types.float32)
    first, again = memo(add, ctx, pair, {}), memo(add, ctx, list(pair), {})
    assert first is again and calls == [pair]  # typed once, the answer given again
    assert first == original(add, ctx, pair, {}) and str(first) == "(float32, float32) -> float32"
    three, four = (types.literal(3), types.int64), (types.literal(4), types.int64)  # a literal: its value's key
    assert memo(add, ctx, three, {}) is memo(add, ctx, three, {}) and calls[1:] == [three]
    assert memo(add, ctx, four, {}) == original(add, ctx, four, {}) and calls[2:] == [four]
    lt = ctx.resolve_value_type(operator.lt)  # not in the operators given: through to the original
    assert str(memo(lt, ctx, (types.int64, types.int64), {})) == "(int64, int64) -> bool"
    assert calls[3:] == [(types.int64, types.int64)]
    assert (add, ctx, pair) in numbafast._memo and (lt, ctx, (types.int64, types.int64)) not in numbafast._memo
    with pytest.raises(TypingError):  # a failure is not kept: it raises each time
        memo(add, ctx, (types.float32, types.unicode_type), {})
    with pytest.raises(TypingError):
        memo(add, ctx, (types.float32, types.unicode_type), {})
    assert calls[4:] == [(types.float32, types.unicode_type)] * 2
