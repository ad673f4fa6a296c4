"""Numba's warnings concern code gasync generated: `gasync run` silences them (unless --debug)."""

from __future__ import annotations

import warnings

import pytest

from gasync.cli.progress import silence_numba_warnings

pytestmark = pytest.mark.sim


def test_every_numba_warning_class_is_silenced() -> None:
    from numba.core import errors as core_errors
    from numba.cuda.core import errors as cuda_errors

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        silence_numba_warnings()
        warnings.warn(core_errors.NumbaPerformanceWarning("grid size 1"), stacklevel=1)
        warnings.warn(cuda_errors.NumbaPerformanceWarning("host array"), stacklevel=1)
        warnings.warn(core_errors.NumbaDeprecationWarning("old"), stacklevel=1)
        warnings.warn(UserWarning("not numba's"), stacklevel=1)
    assert [str(w.message) for w in caught] == ["not numba's"]
