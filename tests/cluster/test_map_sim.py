"""Program.map and map_blocks on a local Dask cluster of two worker processes, on the simulator.

Every value is checked against NumPy or a single ``run`` of the same program in this
process: the cluster must give what one process gives, also when a worker dies mid-run
or one input's run fails.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest
from daskcluster import image, local_client

import gasync
from gasync.runtime.errors import InputError

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

pytestmark = [pytest.mark.sim, pytest.mark.timeout(600)]

SAMPLES = Path(__file__).parents[2] / "samples"
RUN = {"backend": "sim", "timeout": 120.0}


def normalized(img: np.ndarray) -> np.ndarray:
    return (img - img.min()) / (img.max() - img.min())


@pytest.fixture(scope="module")
def client():
    with local_client(2) as c:
        yield c


def test_map_gives_what_single_runs_give(client) -> None:
    prog = gasync.compile(SAMPLES / "normalize.gasync")
    images = [image(seed) for seed in range(5)]
    results = client.gather(prog.map(client, [{"img": a} for a in images], **RUN))
    assert len(results) == len(images)
    for img, got in zip(images, results, strict=True):
        want = prog.run(inputs={"img": img}, **RUN)
        assert got.shared == want.shared == {"lo": img.min(), "hi": img.max()}
        np.testing.assert_array_equal(got.buffers["out"], want.buffers["out"])
        np.testing.assert_allclose(got.buffers["out"], normalized(img), rtol=0, atol=1e-7)
        assert got.stats["backend"] == "sim" and got.stats["device"] == "simulator"
    workers = set(client.scheduler_info()["workers"])
    assert {r.stats["worker"] for r in results} <= workers


def test_each_worker_compiles_the_program_once(client) -> None:
    text = (SAMPLES / "normalize.gasync").read_text() + f"\n// {time.time_ns()}\n"  # a recipe no worker has seen
    prog = gasync.compile_source(text, "fresh.gasync", defines={"H": 16, "W": 16})
    from gasync.cluster import compiled

    before = client.run(compiled.cache_info)  # each worker's cache of compiled programs: (hits, misses, ...)
    results = client.gather(prog.map(client, [{"img": image(s, (16, 16))} for s in range(6)], **RUN))
    after = client.run(compiled.cache_info)
    ran: dict[str, int] = {}
    for r in results:
        ran[r.stats["worker"]] = ran.get(r.stats["worker"], 0) + 1
    for worker, runs in ran.items():
        hits, misses = (after[worker][k] - before[worker][k] for k in (0, 1))
        assert (misses, hits) == (1, runs - 1), worker  # compiled at its first run, reused after


def test_a_program_compiled_with_defines_runs_with_them_on_the_workers(client) -> None:
    prog = gasync.compile(SAMPLES / "normalize.gasync", defines={"H": 8, "W": 40})
    img = image(7, (8, 40))
    (got,) = client.gather(prog.map(client, [{"img": img}], **RUN))
    np.testing.assert_allclose(got.buffers["out"], normalized(img), rtol=0, atol=1e-7)


OUT_OF_BOUNDS = """\
buffer idx: i64[4] = input;
buffer hits: i32[8] = zeros;

task scatter {
    parallel for i in 0..4 {
        hits[idx[i]] = 1;
    }
}
"""


def test_one_inputs_error_comes_back_located_and_the_others_finish(client) -> None:
    prog = gasync.compile_source(OUT_OF_BOUNDS, "scatter.gasync")
    good = [np.array([0, 2, 4, 6]), np.array([1, 3, 5, 7])]
    futures = prog.map(client, [{"idx": good[0]}, {"idx": np.array([0, 1, 9, 2])}, {"idx": good[1]}], **RUN)
    err = futures[1].exception()
    assert isinstance(err, gasync.GasyncError) and err.code == "E0312"
    assert (err.path, err.line, err.column) == ("scatter.gasync", 6, 14)
    assert str(err) == (
        "scatter.gasync:6:14: error[E0312]: index out of bounds in task scatter: the length of 'hits' is 8"
        " but the index is 9"
    )
    with pytest.raises(gasync.GasyncError) as raised:
        futures[1].result()
    assert raised.value.code == "E0312"
    for k, fut in ((0, futures[0]), (2, futures[2])):
        want = np.zeros(8, np.int32)
        want[good[k // 2]] = 1
        np.testing.assert_array_equal(fut.result().buffers["hits"], want)


def test_an_input_of_the_wrong_shape_fails_its_own_future(client) -> None:
    prog = gasync.compile(SAMPLES / "normalize.gasync")
    bad, ok = prog.map(client, [{"img": image(1, (10, 64))}, {"img": image(2)}], **RUN)
    err = bad.exception()
    assert isinstance(err, InputError)
    assert str(err) == (
        f"{SAMPLES / 'normalize.gasync'}:21:1: error[E0301]: inputs['img']: shape [10, 64] does not match"
        " the declaration f32[64, 64]"
    )
    assert ok.result().shared["hi"] == image(2).max()


def test_an_input_may_be_a_future_of_data_already_on_the_cluster(client) -> None:
    prog = gasync.compile(SAMPLES / "normalize.gasync")
    img = image(11)
    (scattered,) = client.scatter([img])
    (got,) = client.gather(prog.map(client, [{"img": scattered}], **RUN))
    assert got.shared == {"lo": img.min(), "hi": img.max()}


def test_a_misspelt_run_option_fails_before_anything_is_submitted(client) -> None:
    prog = gasync.compile(SAMPLES / "normalize.gasync")
    with pytest.raises(TypeError, match="unknown run option 'backed'"):
        prog.map(client, [{"img": image(0)}], backed="sim")


def test_a_worker_killed_mid_run_loses_nothing(client) -> None:
    """SIGKILL the worker process that is running a task: Dask runs its tasks again elsewhere,
    and every input's future still gives that input's result, once."""
    prog = gasync.compile(SAMPLES / "normalize.gasync")
    images = [image(100 + seed) for seed in range(6)]
    pids = client.run(os.getpid)
    futures = prog.map(client, [{"img": a} for a in images], **RUN)
    victim = None
    deadline = time.monotonic() + 60
    while victim is None and time.monotonic() < deadline:
        busy = [w for w, keys in client.processing().items() if keys]
        if busy and not any(f.done() for f in futures):
            victim = busy[0]
        time.sleep(0.05)
    assert victim is not None, "no task started within a minute"
    time.sleep(0.3)  # inside the run (each takes ~0.5 s here): the simulator is executing it
    running = client.processing()[victim]
    os.kill(pids[victim], signal.SIGKILL)
    assert running  # it was running a task when it died
    results = client.gather(futures)
    for img, got in zip(images, results, strict=True):
        assert got.shared == {"lo": img.min(), "hi": img.max()}
        np.testing.assert_allclose(got.buffers["out"], normalized(img), rtol=0, atol=1e-7)
    assert victim not in client.scheduler_info()["workers"]  # it did die
    client.wait_for_workers(2, timeout=120)  # the nanny started another: the module's other tests keep two


def tonemapped(hdr: np.ndarray) -> np.ndarray:
    return (hdr / (np.float32(1) + hdr)) ** (np.float32(1) / np.float32(2.2))


def test_map_blocks_equals_the_program_over_the_whole_array(client) -> None:
    from gasync.cluster import map_blocks

    hdr = (np.random.default_rng(4).random((50, 70)) * 8).astype(np.float32)
    ldr = map_blocks(SAMPLES / "tonemap.gasync", da.from_array(hdr, chunks=(32, 48)), input="hdr", output="ldr", **RUN)
    assert ldr.chunks == ((32, 18), (48, 22)) and ldr.dtype == np.float32
    assert ldr.name.startswith("gasync-tonemap-")
    got = ldr.compute()  # on the cluster: the client is the default scheduler
    whole = gasync.compile(SAMPLES / "tonemap.gasync", defines={"H": 50, "W": 70}).run(inputs={"hdr": hdr}, **RUN)
    np.testing.assert_array_equal(got, whole.buffers["ldr"])
    np.testing.assert_allclose(got, tonemapped(hdr), rtol=1e-6)
