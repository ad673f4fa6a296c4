"""What the tiers' Dask tests share (tests/cluster, tests/gpu): a local cluster of worker
processes as the tests start it, and their input images."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np


def local_cluster(workers: int) -> Any:
    """A LocalCluster of ``workers`` processes of one thread each, without a dashboard and with
    its logs quiet (a test says what failed)."""
    import distributed

    return distributed.LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=50
    )


@contextmanager
def local_client(workers: int) -> Iterator[Any]:
    """A client of a fresh ``local_cluster``, both closed after."""
    import distributed

    with local_cluster(workers) as cluster, distributed.Client(cluster) as client:
        yield client


def image(seed: int, shape: tuple[int, int] = (64, 64)) -> np.ndarray:
    """An f32 image with values in [-1, 4), for samples/normalize.gasync."""
    return (np.random.default_rng(seed).random(shape) * 5 - 1).astype(np.float32)
