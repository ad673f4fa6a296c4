#!/usr/bin/env bash
# One step of a change measured alone, in the same device call as the others (bench/NOTES.md's
# method: each change's prediction against its own measurement): a copy of the tree with later
# steps undone by sed, benchmarked there.
# Usage on the device machine, from the repository root, after gpu_check.sh's wheels are installed
# (PYTHONPATH holding /tmp/site only: with /tmp/gs on it too, `import gasync` finds the tree, not
# the stage's copy, and the stage measures the tree; run 44 did):
#   bash scripts/bench_stage.sh OUTDIR NAME ONLY [FILE SED-EXPRESSION]...
# e.g. bash scripts/bench_stage.sh $OUT unroll4 B4,B5 codegen/maps.py 's/^UNROLL = 8/UNROLL = 4/'
# Each expression must change its file (else the stage would measure the tree as it is: it stops).
# The stage's results file is copied to OUTDIR/NAME.json.
set -u
out=$1; name=$2; only=$3; shift 3
dir=/tmp/stage-$name
rm -rf "$dir" && mkdir -p "$dir" "$out"
tar --exclude=./.whl --exclude=./.git --exclude=./build -cf - . | tar -xf - -C "$dir"
while [ $# -ge 2 ]; do
  before=$(md5sum "$dir/$1")
  sed -i "$2" "$dir/$1"
  [ "$before" != "$(md5sum "$dir/$1")" ] || { echo "stage $name: '$2' did not change $1"; exit 2; }
  shift 2
done
echo "== stage $name ($only)"
cd "$dir" && rm -f bench/results/summary.json
stamp=$(mktemp)  # a stage that wrote nothing must not pick up an older results file
timeout 200 python3 bench/run.py --reps 3 --only "$only" 2>&1 | grep -v "arn" | grep "^   \|^==\|FAIL\|wrote"
f=$(ls -t bench/results/*.json 2>/dev/null | grep -v -e compile-time -e summary.json | head -1)
if [ -n "$f" ] && [ "$f" -nt "$stamp" ]; then cp "$f" "$out/$name.json"; else echo "stage $name wrote no results"; fi
