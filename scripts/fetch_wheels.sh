#!/usr/bin/env bash
# The wheels the device machine needs and its image lacks (it has no network): fetched here into
# .whl/ (git-ignored), carried with each device call, installed there by scripts/gpu_check.sh.
#   numpy 2.4: numba-cuda 0.30.4 fails with the image's numpy 2.5 (../shared/docs/gpu-notes.md)
#   lark, graphviz, and typer, click, rich at the versions the tests read: gasync's own
#   dependencies; pytest-xdist, execnet, pytest-timeout: the GPU suite over processes, bounded
#   dask, distributed, dask-cuda and their pure dependencies: `gasync map` (issue 17)
# Left out, as the image has them (or only dask-cuda's unused extras need them): numba, llvmlite,
# cuda-core, pandas, bokeh, pillow. The carry limit is 64 MiB: the script prints the total.
set -eu
dest=${1:-.whl}
mkdir -p "$dest"
get() {
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 -d "$dest" "$@"
}
get 'numpy==2.4.6' lark graphviz pytest-xdist execnet pytest-timeout \
  'typer>=0.25.1,<0.26' 'click>=8.4,<8.5' 'rich>=15,<16' shellingham
get 'dask-cuda==26.10.0' 'rapids-dask-dependency==26.10.0' 'dask==2026.7.1' 'distributed==2026.7.1' \
  cloudpickle fsspec partd locket toolz zict tblib msgpack sortedcontainers tornado psutil pyyaml jinja2 \
  markupsafe nvidia-ml-py pynvml lazy-importer importlib_metadata zipp
du -sh "$dest"
