"""Program.map and map_blocks on a real GPU (issue 17): the runs name the GPU, CuPy chunks give
CuPy chunks without a copy through the host, and buffers asked for on the device stay on the
worker's GPU until a task there uses them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from daskcluster import image, local_client

import gasync

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

pytestmark = [pytest.mark.gpu, pytest.mark.timeout(300)]

SAMPLES = Path(__file__).parents[2] / "samples"


@pytest.fixture(scope="module")
def client():
    with local_client(1) as c:
        yield c


def test_map_on_the_gpu_names_the_device(client) -> None:
    prog = gasync.compile(SAMPLES / "normalize.gasync", defines={"H": 512, "W": 512})
    images = [image(seed, (512, 512)) for seed in range(4)]
    results = client.gather(prog.map(client, [{"img": a} for a in images], backend="cuda"))
    for img, r in zip(images, results, strict=True):
        assert r.shared == {"lo": img.min(), "hi": img.max()}
        np.testing.assert_allclose(r.buffers["out"], (img - img.min()) / (img.max() - img.min()), rtol=0, atol=1e-6)
        assert r.stats["backend"] == "cuda" and "(PCI " in r.stats["device"]


def test_device_outputs_stay_on_the_workers_gpu(client) -> None:
    prog = gasync.compile(SAMPLES / "normalize.gasync")
    (fut,) = prog.map(client, [{"img": image(3)}], backend="cuda", outputs="device")

    def where(result: gasync.Result) -> tuple[bool, bool]:
        out = result.buffers["out"]
        return isinstance(out, np.ndarray), hasattr(out, "__cuda_array_interface__")

    assert client.submit(where, fut).result() == (False, True)


def test_map_blocks_of_cupy_chunks_gives_cupy_chunks() -> None:
    cupy = pytest.importorskip("cupy")
    from gasync.cluster import map_blocks

    hdr = (np.random.default_rng(4).random((100, 70)) * 8).astype(np.float32)
    x = da.from_array(cupy.asarray(hdr), chunks=(64, 48), asarray=False)
    ldr = map_blocks(SAMPLES / "tonemap.gasync", x, input="hdr", output="ldr", backend="cuda")
    assert type(ldr._meta).__module__.startswith("cupy")
    got = ldr.compute(scheduler="sync")
    assert isinstance(got, cupy.ndarray)
    want = (hdr / (np.float32(1) + hdr)) ** (np.float32(1) / np.float32(2.2))
    np.testing.assert_allclose(cupy.asnumpy(got), want, rtol=1e-6)
