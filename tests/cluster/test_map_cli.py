"""``gasync map`` as a user runs it: a folder of .npy images through samples/normalize.gasync on a
local cluster of two worker processes (simulator), and every way its options can be wrong."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from daskcluster import local_cluster

from tests.clirun import gasync

pytest.importorskip("distributed")

pytestmark = [pytest.mark.sim, pytest.mark.timeout(600)]

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "normalize.gasync"


def images(folder: Path, names: list[str], shape: tuple[int, int] = (64, 64)) -> dict[str, np.ndarray]:
    folder.mkdir(parents=True, exist_ok=True)
    made = {}
    for k, name in enumerate(names):
        made[name] = (np.random.default_rng(k).random(shape) * 3).astype(np.float32)
        np.save(folder / f"{name}.npy", made[name])
    return made


def test_map_writes_each_inputs_outputs_and_a_summary(tmp_path: Path) -> None:
    made = images(tmp_path / "data", ["a", "b", "c", "d"])
    np.save(tmp_path / "data" / "flat.npy", np.full((64, 64), 2.0, np.float32))
    np.save(tmp_path / "data" / "short.npy", np.zeros((8, 64), np.float32))
    res = gasync(
        "map", SAMPLE, "--input", "img=data/*.npy", "--output-dir", "out", "--workers", "2", "--backend", "sim",
        cwd=tmp_path, timeout=400,
    )  # fmt: skip
    assert res.returncode == 1, res.stderr  # one input failed
    for name, img in made.items():
        got = np.load(tmp_path / "out" / "out" / f"{name}.npy")
        np.testing.assert_allclose(got, (img - img.min()) / (img.max() - img.min()), rtol=0, atol=1e-7)
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "out" / "flat.npy"), np.zeros((64, 64), np.float32))
    assert not (tmp_path / "out" / "out" / "short.npy").exists()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["out", "summary.json"]
    assert [p.name for p in (tmp_path / "out" / "out").iterdir() if p.name.startswith(".")] == []  # no temporaries
    doc = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert (doc["inputs"], doc["ok"], doc["failed"], doc["devices"]) == (6, 5, 1, ["simulator"])
    runs = {r["input"]: r for r in doc["runs"]}
    assert runs["a"]["shared"] == {"lo": float(made["a"].min()), "hi": float(made["a"].max())}
    assert runs["a"]["outputs"] == {"out": str(tmp_path / "out" / "out" / "a.npy")}
    assert runs["a"]["files"] == {"img": str(tmp_path / "data" / "a.npy")}  # absolute: as the workers read them
    assert runs["short"]["ok"] is False
    assert runs["short"]["error"]["code"] == "E0301"
    assert runs["short"]["error"]["message"] == "--input img: shape [8, 64] does not match the declaration f32[64, 64]"
    # at the buffer's declaration (normalize.gasync's line 21)
    failed = f"gasync: input 'short' (img=data/short.npy) failed:\n{SAMPLE}:21:1: error[E0301]: --input img: shape"
    assert failed in res.stderr
    assert "gasync: started a LocalCluster of 2 workers (backend sim)" in res.stderr
    assert f"gasync: mapped {SAMPLE} over 6 inputs on 2 workers (LocalCluster) in " in res.stderr
    assert ": 5 ok, 1 failed; outputs and summary.json in out" in res.stderr
    assert "Traceback" not in res.stderr
    assert "│ short │" in res.stdout and "failed (E0301)" in res.stdout  # the table of runs


def test_map_pairs_globs_by_file_name_and_gives_a_plain_file_to_every_run(tmp_path: Path) -> None:
    program = tmp_path / "blend.gasync"
    program.write_text(
        "buffer a: f32[4] = input;\nbuffer b: f32[4] = input;\nbuffer w: f32[1] = input;\n"
        "buffer c: f32[4] = zeros;\n"
        "task blend { parallel for i in 0..4 { c[i] = w[0] * a[i] + b[i]; } }\n"
    )
    for stem in ("p", "q"):
        for name, base in (("a", 1.0), ("b", 10.0)):
            (tmp_path / name).mkdir(exist_ok=True)
            np.save(tmp_path / name / f"{stem}.npy", np.arange(4, dtype=np.float32) + base + (stem == "q"))
    np.save(tmp_path / "w.npy", np.array([3.0], np.float32))
    res = gasync(
        "map", program, "--input", "a=a/*.npy", "--input", "b=b/*.npy", "--input", "w=w.npy", "--output", "c",
        "--output-dir", "out", "--workers", "1", "--backend", "sim", "--json", "-q", cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    t = str(tmp_path)
    assert [(r["input"], r["files"]) for r in doc["runs"]] == [
        ("p", {"w": f"{t}/w.npy", "a": f"{t}/a/p.npy", "b": f"{t}/b/p.npy"}),
        ("q", {"w": f"{t}/w.npy", "a": f"{t}/a/q.npy", "b": f"{t}/b/q.npy"}),
    ]
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "c" / "p.npy"), 3 * (x + 1) + (x + 10))
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "c" / "q.npy"), 3 * (x + 2) + (x + 11))
    assert res.stderr == ""


USAGE = [
    (["--input", "img=nothing/*.npy"], "--input img=nothing/*.npy: the pattern matches no file"),
    (["--input", "img=none.npy"], "--input img=none.npy: no such file"),
    (["--input", "pic=data/*.npy"], "--input pic: the program has no buffer named 'pic' (it has img, out)"),
    (["--input", "out=data/*.npy"], "--input out: buffer 'out' is initialised with 'zeros', not 'input'"),
    (["--input", "img=data/*.npy", "--output", "res"],
     "--output res: the program has no buffer named 'res' (it has img, out)"),
    (["--input", "img"], "Invalid value for '--input': expected NAME=PATTERN such as x='data/*.npy', found 'img'"),
    (["--input", "img=data/*.npy", "--scheduler", "tcp://127.0.0.1:1", "--workers", "2"],
     "--workers sizes a local cluster; with --scheduler the cluster's own workers run"),
    (["--input", "img=data/*.npy", "-D", "Q=3"], "-D Q: the program has no const named 'Q' (its consts are H, W)"),
    *(
        (["--input", "img=data/*.npy", "--scheduler", address],
         "Invalid value for '--scheduler': expected HOST:PORT, optionally after tcp:// (e.g. tcp://10.0.0.5:8786),"
         f" found '{address}'")
        for address in ("notanaddress", "tcp://host:notaport", "", "tcp://host:0", "host:70000")
    ),
    (["--input", "img=data/*.npy", "--scheduler", "bogus://x"],
     "Invalid value for '--scheduler': 'bogus://x': unknown protocol 'bogus://' (Dask's are tcp://, tls://, ws://,"
     " wss://, ucx://)"),
    (["--input", "img=data/*.npy", "--workers", "100000"],
     f"Invalid value for '--workers': 100000 is more than a local cluster here may start: at most"
     f" {4 * (os.cpu_count() or 1)} (4 per core, {os.cpu_count() or 1} cores)"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "message"), USAGE, ids=lambda v: v if isinstance(v, str) else None)
def test_a_usage_error_starts_no_cluster(tmp_path: Path, args: list[str], message: str) -> None:
    images(tmp_path / "data", ["a"])
    res = gasync("map", SAMPLE, *args, "--output-dir", "out", "--backend", "sim", cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    assert res.stderr.splitlines()[0] == f"gasync: error: {message}"
    assert res.stderr.splitlines()[-1] == "try 'gasync map --help'"
    assert "started a" not in res.stderr


def test_a_missing_input_is_a_usage_error_at_its_declaration(tmp_path: Path) -> None:
    images(tmp_path / "data", ["a"])
    res = gasync("map", SAMPLE, "--output-dir", "out", "--backend", "sim", cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    line = next(k for k, text in enumerate(Path(SAMPLE).read_text().splitlines(), 1) if text.startswith("buffer img"))
    message = "buffer 'img' is declared '= input' but no --input img=PATTERN was given"
    assert res.stderr.splitlines()[0] == f"{SAMPLE}:{line}:1: error[E0301]: {message}"
    assert res.stderr.splitlines()[-1] == "try 'gasync map --help'"
    assert "started a" not in res.stderr


def test_globs_that_do_not_pair_are_a_usage_error(tmp_path: Path) -> None:
    program = tmp_path / "two.gasync"
    program.write_text("buffer a: f32[4] = input;\nbuffer b: f32[4] = input;\ntask t { a[0] = b[0]; }\n")
    for folder, stems in (("a", ["p", "q"]), ("b", ["p"])):
        (tmp_path / folder).mkdir()
        for stem in stems:
            np.save(tmp_path / folder / f"{stem}.npy", np.zeros(4, np.float32))
    res = gasync("map", program, "--input", "a=a/*.npy", "--input", "b=b/*.npy", "--output-dir", "o", cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr.splitlines()[0] == (
        "gasync: error: --input b: no file named 'q' (globs pair their files by name, and 'q' is among the other"
        " input's)"
    )


def test_a_program_error_is_reported_before_any_cluster(tmp_path: Path) -> None:
    bad = tmp_path / "bad.gasync"
    bad.write_text("buffer x: f32[4] = input;\ntask t { x[0] = y; }\n")
    np.save(tmp_path / "x.npy", np.zeros(4, np.float32))
    res = gasync("map", bad, "--input", "x=x.npy", "--output-dir", "o", cwd=tmp_path)
    assert res.returncode == 1
    assert res.stderr.startswith(f"{bad}:2:17: error[E0202]: cannot find value 'y' in this scope")
    assert "started a" not in res.stderr and not (tmp_path / "o").exists()


def test_map_joins_a_running_scheduler(tmp_path: Path) -> None:
    made = images(tmp_path / "data", ["a", "b", "c"])
    with local_cluster(2) as cluster:
        res = gasync(
            "map", SAMPLE, "--input", "img=data/*.npy", "--output-dir", str(tmp_path / "out"), "--scheduler",
            cluster.scheduler_address, "--backend", "sim", cwd=tmp_path, timeout=300,
        )  # fmt: skip
        assert res.returncode == 0, res.stderr
    assert f"on 2 workers at {cluster.scheduler_address} in " in res.stderr and "started a" not in res.stderr
    for name, img in made.items():
        got = np.load(tmp_path / "out" / "out" / f"{name}.npy")
        np.testing.assert_allclose(got, (img - img.min()) / (img.max() - img.min()), rtol=0, atol=1e-7)


def test_an_unreachable_scheduler_is_a_usage_error(tmp_path: Path) -> None:
    images(tmp_path / "data", ["a"])
    res = gasync(
        "map", SAMPLE, "--input", "img=data/*.npy", "--output-dir", "out", "--scheduler", "tcp://127.0.0.1:9",
        cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert res.returncode == 2, res.stderr
    assert res.stderr.startswith("gasync: error: --scheduler tcp://127.0.0.1:9: cannot connect: ")
    assert "Traceback" not in res.stderr


def test_backend_cuda_without_a_gpu_fails_before_any_cluster_or_folder(tmp_path: Path) -> None:
    from gasync.runtime.backends import gpu_present

    if gpu_present():
        pytest.skip("a CUDA GPU is present here")
    images(tmp_path / "data", ["a"])
    res = gasync("map", SAMPLE, "--input", "img=data/*.npy", "--output-dir", "out", "--backend", "cuda", cwd=tmp_path)
    assert res.returncode == 1
    assert res.stderr == (
        f"{SAMPLE}: error[E0302]: --backend cuda: no CUDA GPU was found on this machine (try --backend sim)\n"
    )
    assert not (tmp_path / "out").exists()
