#!/usr/bin/env bash
# scripts/channel_probe.py on a copy of the tree with some lines changed by sed: one step of a
# change, or a line taken out to see what it costs (bench/NOTES.md), beside the others in one
# device call. Usage on the device machine, from the repository root, after gpu_check.sh's
# wheels are installed in /tmp/site:
#   bash scripts/probe_stage.sh OUTDIR NAME "PROBE ARGS" [FILE SED-EXPRESSION]...
# e.g. bash scripts/probe_stage.sh $OUT nap "--compute 64,515" codegen/services.py 's/256)/1024)/'
# Each expression must change its file. Writes OUTDIR/probe-NAME.json.
set -u
out=$1; name=$2; args=$3; shift 3
dir=/tmp/stage-$name
rm -rf "$dir" && mkdir -p "$dir" "$out" /tmp/gs
tar --exclude=./.whl --exclude=./.git --exclude=./build -cf - . | tar -xf - -C "$dir"
while [ $# -ge 2 ]; do
  before=$(md5sum < "$dir/$1")
  sed -i "$2" "$dir/$1"
  [ "$before" != "$(md5sum < "$dir/$1")" ] || { echo "stage $name: '$2' did not change $1"; exit 2; }
  shift 2
done
ln -sfn "$dir" /tmp/gs/gasync
echo "== probe stage $name"
# shellcheck disable=SC2086  # the probe's arguments, split
PYTHONPATH=/tmp/gs:/tmp/site timeout 200 python3 "$dir/scripts/channel_probe.py" $args --json "$out/probe-$name.json" 2>&1 | grep -v -i warn
