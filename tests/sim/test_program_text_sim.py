"""A program's text on the simulator (codegen/names.py): a file named with quotes, backslashes,
line ends or any letters runs as itself and runs nothing of its name, and so does source text
quoted beside the code; identifiers named after the generated module's own names run with the
right values (tests/codegen/test_names.py compiles every such name; a subset runs here)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from clirun import gasync as cli
from names_programs import CATEGORIES, category_program

import gasync
from gasync.codegen import jam

pytestmark = [pytest.mark.sim, pytest.mark.timeout(300)]

PROGRAM = """\
buffer out: i32[2] = zeros;
async fn twice(x: i32) -> i32 { yield_now().await; return x * 2; }
task main { out[0] = twice(21).await; out[1] = 7; }
"""

# what each name would run, were it pasted into the module as it is: a file PWNED in the cwd
FILE_NAMES = {
    "triple double quotes": 'x""";open("PWNED", "w");"""y.gasync',
    "triple single quotes": "x''';open('PWNED', 'w');'''y.gasync",
    "a backslash-u": "a\\ub.gasync",
    "a newline": "x\nopen('PWNED', 'w')\ny.gasync",
    "a quote": 'x";open("PWNED", "w");"y.gasync',
    "non-ASCII letters": "caf\u00e9_\u03b1\u03b2\u03b3_\u65e5\u672c\u8a9e.gasync",
}


@pytest.mark.parametrize("name", FILE_NAMES.values(), ids=FILE_NAMES.keys())
def test_a_file_of_any_name_runs_and_its_name_runs_nothing(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / name
    path.write_text(PROGRAM)
    program = gasync.compile(path)
    assert program.run(backend="sim", timeout=60).buffers["out"].tolist() == [42, 7]
    assert not (tmp_path / "PWNED").exists()


def test_the_cli_runs_a_file_named_to_break_out_of_the_docstring(tmp_path: Path) -> None:
    name = FILE_NAMES["triple double quotes"]
    (tmp_path / name).write_text(PROGRAM)
    res = cli("run", name, "--backend", "sim", "--timeout", "60s", "--json", cwd=tmp_path, timeout=120)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["buffers"]["out"] == [42, 7]
    assert not (tmp_path / "PWNED").exists()


def test_source_text_beside_the_code_stays_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    notes = [
        '// """;open("PWNED", "w");"""',
        "// ''';open('PWNED', 'w');'''",
        '/* \\u \\N{x} \\ " */',
        "// caf\u00e9 \u65e5\u672c \U0001f600 \u2028 \x0c \x85",
        "/* a\rcarriage return */",
    ]
    source = "buffer out: i32[2] = zeros;\n" + "".join(
        f"task t{k} {{ {note}\n    out[{k % 2}] += {k + 1}; {note}\n}}\n" for k, note in enumerate(notes)
    )
    program = gasync.compile_source(source, "notes.gasync")
    assert program.run(backend="sim", timeout=60).buffers["out"].tolist() == [1 + 3 + 5, 2 + 4]
    assert not (tmp_path / "PWNED").exists()


# names that met the generator's own, or each other's, before codegen/names.py
SUBSET = (
    "instance", "dispatch", "executor", "claim", "complete", "service", "task_of", "run_parallel",
    "group_claim", "want", "wanted", "grouped_pipe", "G", "w", "inst", "lane", "k", "hi", "lbl",
    "dl", "cuda", "int64", "math", "State", "L", "FI", "first", "poll_main", "v_x", "x_j0",
)  # fmt: skip


@pytest.mark.parametrize("category", CATEGORIES)
def test_identifiers_named_after_the_modules_own_names_run(category: str) -> None:
    source, want = category_program(category, SUBSET)
    out = gasync.compile_source(source, f"{category}.gasync").run(backend="sim", timeout=120).buffers["zq_out"]
    assert {k: int(v) for k, v in enumerate(out)} == want


def test_a_task_beside_a_group_of_the_name_it_had() -> None:
    source = """\
buffer y: i32[4] = zeros;
group pipe for g in 0..2 { task t { y[g] = 1; } }
task grouped_pipe { y[2] = 5; }
task instance after grouped_pipe { y[3] = 9; }
"""
    out = gasync.compile_source(source, "pipe.gasync").run(backend="sim", timeout=120).buffers["y"]
    assert out.tolist() == [1, 1, 5, 9]


def test_a_captured_local_named_like_a_jammed_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    """``sum_j0`` beside the jammed copies of ``sum`` (once both v_sum_j0)."""
    monkeypatch.setattr(jam, "JAM", 4)
    source = """\
const R: i64 = 200;
const K: i64 = 24;
buffer m: f32[R, K] = random(1);
buffer v: f32[K] = random(2);
buffer y: f32[R] = zeros;
task main {
    let sum_j0: f32 = 0.25;
    let j0_v_sum: f32 = 0.125;
    parallel for r in 0..R {
        let base: f32 = 0.5;
        let sum: f32 = base;
        for k in 0..K { sum = sum + m[r, k] * v[k]; }
        y[r] = sum * 2.0 + sum_j0 + j0_v_sum;
    }
}
"""
    program = gasync.compile_source(source, "jam.gasync")
    assert "codegen/jam.py" in program.generated.source
    out = program.run(backend="sim", timeout=200).buffers
    m, v = out["m"], out["v"]
    f = np.float32
    want = np.zeros(m.shape[0], f)
    for r in range(m.shape[0]):
        s = f(0.5)
        for k in range(m.shape[1]):
            s = f(s + f(m[r, k] * v[k]))
        want[r] = f(f(f(s * f(2.0)) + f(0.25)) + f(0.125))
    np.testing.assert_array_equal(out["y"], want)
