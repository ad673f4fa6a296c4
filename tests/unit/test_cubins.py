"""Kept kernels (runtime/cubins.py): what is written beside a module, what a later run finds, and
what it refuses; with stand-ins for Numba's compiled kernel and the CUDA context (no GPU here:
tests/gpu/test_cubins_gpu.py runs the path itself)."""

from __future__ import annotations

import ctypes
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from numba.cuda import types
from numba.cuda.cudadrv.driver import ObjectCode

from gasync.runtime import cache, cubins, kernelargs

H200 = SimpleNamespace(name=b"NVIDIA H200", compute_capability=(9, 0), MULTIPROCESSOR_COUNT=132)
SIG = (types.int64, types.float32)
MODULE = "gasync_0123456789abcdef0123_0123456789ab"


def compiled(setup: tuple[Any, ...] = ()) -> Any:
    """A stand-in for ``dispatcher.overloads[sig]``: what cubins.save reads of it."""
    lib = SimpleNamespace(_setup_functions=list(setup), _teardown_functions=[], _entry_name="_Z13gasync_kernel",
                          get_cubin=lambda: ObjectCode.from_cubin(b"\x7fELF the machine code"))  # fmt: skip
    return SimpleNamespace(_codelibrary=lib, debug=False, extensions=[], cooperative=False, regs_per_thread=40)


class Context:
    """The CUDA context's module loading, recorded."""

    def __init__(self) -> None:
        self.loaded: list[tuple[bytes, str]] = []

    def create_module_image(self, image: Any) -> Any:
        assert image.code_type == "cubin"  # cuda.core's ObjectCode, as Numba's get_cubin() gives it
        return SimpleNamespace(get_function=lambda name: self.loaded.append((image.code, name)) or ("function", name))


def cuda_with(ctx: Context) -> Any:
    return SimpleNamespace(current_context=lambda: ctx)


@pytest.fixture
def module(tmp_path: Path) -> Path:
    path = tmp_path / f"{MODULE}.py"
    path.write_text("# a generated module\n")
    return path


def test_a_kept_kernel_is_found_by_a_later_run_with_its_grid(module: Path) -> None:
    assert cubins.save(module, "gasync_kernel", SIG, compiled(), H200, 128, 0, 264)
    ctx = Context()
    kept = cubins.load(cuda_with(ctx), module, "gasync_kernel", SIG)
    assert kept is not None and kept.function == ("function", "_Z13gasync_kernel") and not kept.cooperative
    assert ctx.loaded == [(b"\x7fELF the machine code", "_Z13gasync_kernel")]
    assert kept.grid(H200, 128, 0) == (264, 40)
    asked = cubins.Asked(kept, H200)
    assert asked.max_cooperative_grid_blocks(128, 0) == 264 and asked.regs_per_thread == 40
    with pytest.raises(LookupError):  # a block size the compiled kernel was never asked about
        asked.max_cooperative_grid_blocks(256, 0)
    other = SimpleNamespace(name="NVIDIA H100 80GB HBM3", compute_capability=(9, 0), MULTIPROCESSOR_COUNT=132)
    assert kept.grid(other, 128, 0) is None  # another device: its own grid
    # a second grid is added to the same record, the first kept
    assert cubins.save(module, "gasync_kernel", SIG, compiled(), H200, 256, 1024, 132)
    again = cubins.load(cuda_with(Context()), module, "gasync_kernel", SIG)
    assert again is not None and again.grid(H200, 128, 0) == (264, 40) and again.grid(H200, 256, 1024) == (132, 40)


def test_another_signature_kernel_or_version_is_a_miss(module: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cubins.save(module, "gasync_kernel", SIG, compiled(), H200, 128, 0, 264)
    cuda = cuda_with(Context())
    assert cubins.load(cuda, module, "gasync_kernel", (types.int64, types.float64)) is None
    assert cubins.load(cuda, module, "gasync_spin_kernel", SIG) is None
    monkeypatch.setattr(cubins, "versions", lambda: {"gasync": "9.9", "numba-cuda": "0.30.4"})
    assert cubins.load(cuda, module, "gasync_kernel", SIG) is None  # made by another gasync or Numba


def test_a_damaged_record_or_a_refused_cubin_is_a_miss(module: Path) -> None:
    assert cubins.save(module, "gasync_kernel", SIG, compiled(), H200, 128, 0, 264)
    cubin, meta = cubins.paths(module, "gasync_kernel", SIG)
    refusing = SimpleNamespace(current_context=lambda: SimpleNamespace(create_module_image=_refuse))
    assert cubins.load(refusing, module, "gasync_kernel", SIG) is None  # the driver's error: compile instead
    meta.write_text('{"format": 1, "sig": ')  # cut short
    assert cubins.load(cuda_with(Context()), module, "gasync_kernel", SIG) is None
    meta.unlink()
    assert cubins.load(cuda_with(Context()), module, "gasync_kernel", SIG) is None
    assert cubin.exists()


def _refuse(image: Any) -> Any:
    raise RuntimeError("CUDA_ERROR_NO_BINARY_FOR_GPU")


def test_a_kernel_with_setup_functions_is_not_kept(module: Path) -> None:
    assert not cubins.save(module, "gasync_kernel", SIG, compiled(setup=(print,)), H200, 128, 0, 264)
    assert not any(p.exists() for p in cubins.paths(module, "gasync_kernel", SIG))


def test_the_cache_counts_and_clears_kept_kernels_with_their_module(module: Path) -> None:
    assert cubins.save(module, "gasync_kernel", SIG, compiled(), H200, 128, 0, 264)
    kept = set(cubins.paths(module, "gasync_kernel", SIG))
    (entry,) = cache.entries(module.parent)
    assert entry.module == module and kept <= set(entry.files)
    cache.clear(module.parent)
    assert not module.exists() and not any(p.exists() for p in kept)


def test_a_kept_kernels_parameters_are_numbas_own_marshalling() -> None:
    kern = kernelargs.stand_in(cubins.Kept(("function", "e"), False, {}))
    params: list[Any] = []
    kern._prepare_args(types.int64, 7, 0, [], params)
    kern._prepare_args(types.float32, 0.5, 0, [], params)
    assert [type(p) for p in params] == [ctypes.c_int64, ctypes.c_float] and [p.value for p in params] == [7, 0.5]
    assert kern._codelibrary.get_cufunc() == ("function", "e") and kern.kept
