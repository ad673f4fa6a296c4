#!/usr/bin/env bash
# Issue 18 on the device machine: `gasync map` over one GPU's worker, then two (dask-cuda's
# LocalCUDACluster pins each worker to its GPU), the efficiency t1 / (2 t2) and the devices each
# run named; on a machine with one GPU, two workers sharing it (what one GPU allows).
# Usage, from the repository root, with .whl/ carried (scripts/fetch_wheels.sh):
#   bash scripts/scale_check.sh OUTDIR [INPUTS] [SIZE]
# The defaults (512 images of 4096 x 4096, 32 GiB of files) are sized to run 20 s or more on one
# H200; the disk of nvidia-h200-x2 holds 128 GiB.
set -u
out=${1:-/tmp/gasync-scale}
inputs=${2:-512}
size=${3:-4096}
mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
mkdir -p /tmp/gs && ln -sfn "$PWD" /tmp/gs/gasync
export PYTHONPATH=/tmp/gs:/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=index,name,pci.bus_id --format=csv | tee "$out/gpus.csv"
timeout 560 python3 scripts/map_check.py --backend cuda --scale --inputs "$inputs" --size "$size" \
  --json "$out/scale-check.json" 2>&1 | tail -40
