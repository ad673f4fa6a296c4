"""``gasync check`` resolves extern fns (issue 10): a missing module, a missing name, something
that is not a CUDA device function, or a declaration its function does not match is a located
error at check, before anything runs. Here because resolving an extern imports Numba."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from clirun import gasync

pytestmark = [pytest.mark.sim, pytest.mark.timeout(120)]

SAMPLES = Path(__file__).parents[2] / "samples"
LIB = """
from numba import cuda


@cuda.jit(device=True)
def twice(a, b):
    return a * 2


@cuda.jit
def kern(x):
    pass


def plain(x):
    return x


@cuda.jit(device=True)
def first(x):
    return x[0]
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A program folder with samples/activations.py and a small library beside it."""
    shutil.copy(SAMPLES / "activations.py", tmp_path / "activations.py")
    (tmp_path / "mylib.py").write_text(LIB)
    return tmp_path


def check_one(folder: Path, decl: str) -> tuple[int, str]:
    (folder / "p.gasync").write_text(f"{decl}\ntask main {{ }}\n")
    res = gasync("check", "p.gasync", cwd=folder)
    assert "Traceback" not in res.stderr
    return res.returncode, res.stderr


def test_the_issues_wrong_signature_fails_check(folder: Path) -> None:
    code, err = check_one(folder, 'extern fn gelu(v: i64) -> bool from "activations:gelu";')
    assert code == 1
    assert err == (
        "p.gasync:1:1: error[E0308]: extern fn 'gelu' is declared to return bool, but 'gelu' returns f64 for (i64)\n"
        "   |\n"
        ' 1 | extern fn gelu(v: i64) -> bool from "activations:gelu";\n'
        "   | ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        f"  = note: 'gelu' is defined at {folder / 'activations.py'}:12\n"
    )


def test_a_missing_module_points_at_the_path(folder: Path) -> None:
    code, err = check_one(folder, 'extern fn g(v: f32) -> f32 from "nosuchmod:gelu";')
    assert code == 1
    assert err == (
        "p.gasync:1:33: error[E0306]: cannot import module 'nosuchmod' for extern fn 'g': No module named 'nosuchmod'\n"
        "   |\n"
        ' 1 | extern fn g(v: f32) -> f32 from "nosuchmod:gelu";\n'
        "   |                                 ^^^^^^^^^^^^^^^^\n"
        f"  = note: modules are looked up beside the program ({folder.resolve()}) and on the Python path\n"
    )


@pytest.mark.parametrize(
    ("decl", "message"),
    [
        ('extern fn g(v: f32) -> f32 from "activations:nosuch";', "module 'activations' has no function 'nosuch'"),
        ('extern fn g(v: f32) -> f32 from "mylib:kern";', "'mylib:kern' is not a CUDA device function"),
        ('extern fn g(v: f32) -> f32 from "mylib:plain";', "'mylib:plain' is not a CUDA device function"),
        (
            'extern fn g(v: f32) -> f32 from "mylib:twice";',
            "extern fn 'g' is declared with 1 parameter, but 'twice' takes 2",
        ),
        (
            'extern fn g(v: f32) -> f32 from "mylib:first";',
            "'first' cannot be compiled for the declared parameter types (f32): No implementation of function",
        ),
        ('extern fn g(v: f32) from "activations:gelu";', "declared to return no value, but 'gelu' returns f32"),
    ],
)
def test_each_kind_of_bad_extern_is_a_located_error(folder: Path, decl: str, message: str) -> None:
    code, err = check_one(folder, decl)
    assert code == 1
    assert err.startswith("p.gasync:1:"), err
    assert message in err.splitlines()[0]


def test_every_bad_extern_is_reported_at_once(folder: Path) -> None:
    decls = 'extern fn a(v: f32) -> f32 from "nosuchmod:a";\nextern fn b(v: f32) -> f32 from "mylib:kern";'
    code, err = check_one(folder, decls)
    assert code == 1
    assert "p.gasync:1:33: error[E0306]: cannot import module 'nosuchmod'" in err
    assert "p.gasync:2:33: error[E0307]: 'mylib:kern' is not a CUDA device function" in err
    assert "p.gasync: 2 errors" in err


def test_the_sample_passes_check_from_another_folder(tmp_path: Path) -> None:
    res = gasync("check", SAMPLES / "extern_gelu.gasync", cwd=tmp_path)
    assert res.returncode == 0, res.stderr


def test_a_right_declaration_with_other_types_passes(folder: Path) -> None:
    # gelu is generic Python: called with an i64 it computes in f64, and says so
    assert check_one(folder, 'extern fn gelu(v: i64) -> f64 from "activations:gelu";') == (0, "p.gasync: ok\n")


def test_run_stops_at_the_same_error(folder: Path) -> None:
    (folder / "p.gasync").write_text('extern fn g(v: f32) -> f32 from "nosuchmod:g";\ntask main { }\n')
    res = gasync("run", "p.gasync", "--backend", "sim", cwd=folder)
    assert res.returncode == 1
    assert "p.gasync:1:33: error[E0306]: cannot import module 'nosuchmod'" in res.stderr


def test_the_type_check_needs_no_gpu_and_no_nvvm(folder: Path) -> None:
    from gasync.runtime.typeinfer import return_type

    sys.path.insert(0, str(folder))
    try:
        import activations
        from numba import types
        from numba.cuda.cudadrv import nvvm

        def no_nvvm(*args: object, **kwargs: object) -> None:
            raise AssertionError("type inference used NVVM")

        saved = nvvm.NVVM.__new__
        nvvm.NVVM.__new__ = no_nvvm  # type: ignore[method-assign, assignment]
        try:
            assert return_type(activations.gelu.py_func, (types.float32,)) == types.float32
        finally:
            nvvm.NVVM.__new__ = saved  # type: ignore[method-assign]
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("activations", None)
