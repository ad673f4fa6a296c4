#!/usr/bin/env bash
# Commits measured side by side in one device call (bench/NOTES.md's method: a change's prediction
# against its own measurement, beside the code before it, on the same card): each TREE is a copy of
# the repository at one commit (`git archive COMMIT | tar -x -C build/tree-NAME` here, carried),
# benchmarked with its own `gasync` on the path, and B2 in a group probed in each.
# Usage on the device machine, from the repository root, after gpu_check.sh's wheels are installed
# in /tmp/site:  bash scripts/commits_bench.sh OUTDIR ONLY TREE...
# e.g. bash scripts/commits_bench.sh $OUT B2,B7,B8 build/tree-base build/tree-view
# Each tree's results file is copied to OUTDIR/NAME-ONLY.json (NAME: the tree's folder); ONLY "-"
# probes B2 in a group alone.
set -u
out=$1; only=$2; shift 2
mkdir -p "$out"
for tree in "$@"; do
  name=$(basename "$tree")
  root=$(mktemp -d) && ln -sfn "$(cd "$tree" && pwd)" "$root/gasync"
  echo "== $name: B2 in a group (3 runs of 10,000 round trips), then $only"
  (cd "$tree" && export PYTHONPATH="$root:/tmp/site" GASYNC_COMMIT="$name" && rm -f bench/results/summary.json \
    && timeout 100 python3 scripts/handoff_probe.py --group --reps 10000 --runs 3 2>&1 | grep -v -i warn | tail -3 \
    && [ "$only" != - ] && timeout 240 python3 bench/run.py --reps 3 --only "$only" 2>&1 | grep -E "ratio|us/hand-off|GB/s|GFLOP|compile_s|wrote" \
      | grep -v unchecked | grep -v '^|' | cut -c1-160)
  f=$(ls -t "$tree"/bench/results/*.json 2>/dev/null | grep -v -e compile-time -e summary.json | head -1)
  [ "$only" != - ] && [ -n "$f" ] && cp "$f" "$out/$name-${only//,/-}.json"
done
