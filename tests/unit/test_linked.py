"""gasync's own device helpers kept as LLVM IR between processes (runtime/linked.py).

A kernel compiled with its helpers' entries read from the store has the same PTX as one whose
helpers Numba compiled in the process (the entries' own symbols and Numba's unused environment
pointers aside); the store survives damage; a changed constant makes other entries. Each compile
runs in a fresh process (a helper's lowering is registered once a process). PTX needs NVVM
(tests/ptxtools.py skips without it)."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest
from ptxtools import compile_in_process, skip_without_toolchain

from gasync.runtime import cache, linked

ROOT = Path(__file__).resolve().parents[2]


def _ptx(program: str, store: Path, on: bool) -> tuple[str, dict[str, int]]:
    env = dict(os.environ, GASYNC_LINKED="1" if on else "0", GASYNC_LINKED_DIR=str(store))
    got = compile_in_process("print(ptx)\nprint(linked.STATS, file=sys.stderr)", str(ROOT / program), env)
    return got.stdout, ast.literal_eval(got.stderr.strip().splitlines()[-1])


def _normal(ptx: str) -> str:
    """The PTX without what may differ: symbols' names, Numba's unused environment pointers."""
    lines = [ln for ln in ptx.splitlines() if not ln.startswith("//") and not ln.startswith(".common .global")]
    text = "\n".join(lines)
    return re.sub(r"\$L__BB[0-9_]+", "BB", re.sub(r"_ZN[A-Za-z0-9_]+|gxp?_[0-9a-f_]+", "K", text))


# join_select: helpers called with a default argument left out (chan_try_recv's ``later``)
@pytest.mark.parametrize(
    "program", ["samples/stencil2d.gasync", "bench/programs/b2_group.gasync", "samples/join_select.gasync"]
)
def test_a_kernel_is_the_same_with_its_helpers_read_from_the_store(program: str, tmp_path: Path) -> None:
    skip_without_toolchain()
    alone, by_numba = _ptx(program, tmp_path / "unused", on=False)
    cold, compiled = _ptx(program, tmp_path / "store", on=True)  # every helper compiled, and written
    kept = len(cache.helper_entries(tmp_path / "store"))
    warm, read = _ptx(program, tmp_path / "store", on=True)  # every helper read
    assert by_numba["read"] == by_numba["compiled"] == 0 and by_numba["numba"] > 10
    assert compiled["read"] == 0 and compiled["compiled"] == kept > 10
    # only the helpers generated code calls are typed: those they call come with their entries
    assert read["compiled"] == 0 and 0 < read["read"] <= compiled["compiled"]
    assert read["numba"] == compiled["numba"] == 0  # no helper defines a variable of its own
    assert len(cache.helper_entries(tmp_path / "store")) == kept
    assert ".extern .func" not in warm  # each entry defined where it is called (and inlined)
    assert _normal(alone) == _normal(cold) == _normal(warm)


def test_a_damaged_entry_counts_as_absent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GASYNC_LINKED_DIR", str(tmp_path))
    if linked.SIM:
        pytest.skip("the simulator keeps no entries")
    entry = linked.Entry("gx_x", None, ("; a module",), (), True)
    linked._write("ab" * 20, entry)
    assert linked._read("ab" * 20) == entry
    (tmp_path / f"{'ab' * 20}{cache.HELPER_SUFFIX}").write_bytes(b"not a pickle")
    assert linked._read("ab" * 20) is None
    assert linked._read("cd" * 20) is None
    assert cache.clear_helpers(tmp_path) == (1, len(b"not a pickle"))
    assert cache.helper_entries(tmp_path) == []


def test_a_changed_constant_makes_another_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    if linked.SIM:
        pytest.skip("the simulator keeps no entries")
    from numba import types

    from gasync.runtime import devicegroups, devicelib

    skip_without_toolchain()  # (and the device the digest names: tests/ptxtools.py's sm_90)
    args = (types.int64[::1], types.int64)
    before = devicelib.ld.digest(args)
    assert devicelib.ld.digest(args) == before
    assert devicelib.ld.digest((types.int32[::1], types.int64)) != before
    monkeypatch.setattr(devicegroups, "LCH_TRY_NAP_NS", devicegroups.LCH_TRY_NAP_NS + 1)
    assert devicelib.ld.digest(args) != before


def test_a_helper_that_defines_a_variable_is_not_kept() -> None:
    assert linked._VARIABLE.search('@"s" = internal addrspace(3) global [8 x i64] undef')
    assert linked._VARIABLE.search('@"g" = addrspace(1) global i64 0')
    assert not linked._VARIABLE.search('@"e" = common global i8* null')
    assert not linked._VARIABLE.search('@"c" = internal unnamed_addr constant [4 x i8] c"abc\\00"')
