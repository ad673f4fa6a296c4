#!/usr/bin/env bash
# One GPU session's checks, in few calls (the device machine starts bare and slowly):
# the GPU contract suite, every sample through the CLI, a traced run, the differential
# test against the reference interpreter, then the benchmarks.
# Usage on the device machine, from the repository root (COMMIT: `git rev-parse HEAD` here,
# before the call: the device's copy of the tree has stale git metadata):
#   GASYNC_COMMIT=COMMIT bash scripts/gpu_check.sh OUTDIR [first|suite|checks|tier|match|executors|samples|differential|profile|runprofiles|launch|handoff|b2ab|b2slack|next|endcheck|ended|b4parts|b4probes|b4shape|b6memo|b7halves|b7shapes|warppoll|lchmbar|localwait|b2group|commits|atomloads|racelines|bulk|ncub7|probe|sanitize|groups|traces|ncu|ncub2|cubins|map|bench|all]
# A device command may last at most 10 minutes: `checks` (= tier, match, executors, samples)
# took about that long before the GPU tier grew, so a session runs `tier`, `match`,
# `executors` and `samples` (each under 10 minutes; `tier` alone ran past 480 s once), then `bench` (the whole benchmark suite
# at --reps 3 in three parts; summary.json and each part's results file are copied to OUTDIR). `samples` starts
# with a short differential run (random programs on the GPU against the reference
# interpreter, each that differs shrunk into OUTDIR/differential); `differential` is
# a longer one alone.
set -u
out=${1:-/tmp/gasync-gpu}
part=${2:-all}
mkdir -p "$out"
# Compiled to bytecode at install, and the tree's own modules now: the device's Python runs with
# PYTHONDONTWRITEBYTECODE=1, so a module without a .pyc is compiled from source in every process
# (every benchmark's fresh process, B6's compile among them), which an installed package never is
# (once a call: a part that runs other parts hands them GASYNC_CHECK_INSTALLED)
if [ -z "${GASYNC_CHECK_INSTALLED:-}" ]; then
  python3 -m pip install -q --no-index --no-deps --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  python3 -m compileall -q -j 8 -x '/(\.venv|\.git)/' . > /dev/null 2>&1  # build/tree-* too: bases alike
  export GASYNC_CHECK_INSTALLED=1
fi
mkdir -p /tmp/gs && ln -sfn "$PWD" /tmp/gs/gasync
export PYTHONPATH=/tmp/gs:/tmp/site PYTHONUNBUFFERED=1
log="$out/gpu-$part.log"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c "import numba, numba_cuda, numpy; print('numba', numba.__version__, 'numba-cuda', numba_cuda.__version__, 'numpy', numpy.__version__)"
  in_part() { case " $* " in *" $part "*) return 0 ;; esac; return 1; }
  # Benchmarks ONLY (bench/run.py's --only) at a stage NAME (FILE changed by a sed EXPRESSION),
  # then as the tree is, in the same call, each limited to SECONDS; rows matching PATTERN shown
  beside() {  # ONLY SECONDS PATTERN NAME FILE EXPRESSION
    PYTHONPATH=/tmp/site timeout "$2" bash scripts/bench_stage.sh "$out" "$4" "$1" "$5" "$6" 2>&1 \
      | grep -E "== stage|$3" | grep -v unchecked | cut -c1-250
    echo "== $1 as the tree is"
    timeout "$2" python3 bench/run.py --reps 3 --only "$1" 2>&1 | grep -E "$3|wrote" | grep -v unchecked | cut -c1-250
  }
  # GPU tests (pytest -m gpu ARGS over WORKERS processes, limited to SECONDS) into OUTDIR/LOG,
  # and their failures and count shown
  gpu_tests() {  # SECONDS WORKERS LOG ARGS...
    local secs=$1 workers=$2 name=$3
    shift 3
    timeout "$secs" python3 -m pytest -q -m gpu "$@" -n "$workers" -p no:cacheprovider -W ignore -rf > "$out/$name" 2>&1
    grep -E "^(FAILED|ERROR)|passed|failed" "$out/$name" | tail -60
  }
  # the newest results file bench/run.py wrote (not the summary)
  newest_results() { ls -t bench/results/*.json | grep -v -e compile-time -e summary.json | head -1; }
  # B7 and B8 with one step of a change undone, then as the tree is; the tree's results file to
  # OUTDIR/tree-b7-b8.json
  b7_b8_beside() {
    beside B7,B8 200 "ratio|GB/s|GFLOP" "$1" "$2" "$3"
    cp "$(ls -t bench/results/*-b7-b8.json | head -1)" "$out/tree-b7-b8.json" 2>/dev/null
  }
  if in_part first; then
  # a session's first call, where machines are scarce (~480 s): B2, B7, B8 and B6 as the tree is
  # (summary.json and the results files to OUTDIR), B6 without the kept helpers, B2 in a group in
  # each build/tree-* carried, then the whole GPU suite in what is left of the call
  BENCH_PARTS="170 B2,B7,B8;100 B6" bash "$0" "$out" bench | grep -E "ratio|us/hand-off|GB/s|GFLOP|compile_s|wrote" \
    | grep -v unchecked | cut -c1-170
  if [ "${FIRST_UNLINKED:-1}" != 0 ]; then
  echo "== B6 without the kept helpers (GASYNC_LINKED=0)"
  GASYNC_LINKED=0 timeout 100 python3 bench/run.py --reps 3 --only B6 2>&1 | grep -E "compile_s|wrote" | cut -c1-170
  cp "$(ls -t bench/results/*-b6.json | head -1)" "$out/b6-unlinked.json" 2>/dev/null
  fi
  # (FIRST_COMMITS_ONLY=B6: each carried tree's B6 too, the code before a compile-time change)
  COMMITS_ONLY=${FIRST_COMMITS_ONLY:--} timeout 160 bash "$0" "$out" commits | grep -v "^numba\|^name\|^NVIDIA"
  echo "== the whole GPU suite over 10 processes"
  timeout 200 python3 -m pytest -q -m gpu tests/gpu -n 10 -p no:cacheprovider -W ignore -rf \
    > "$out/pytest-gpu-suite.log" 2>&1
  grep -E "^(FAILED|ERROR)|passed|failed" "$out/pytest-gpu-suite.log" | tail -30
  fi
  if in_part suite; then
  # the whole GPU suite at once, spread over processes (most of its time is Numba's
  # compiling, on the CPU: 16 cores there); pytest-xdist and execnet travel in .whl/
  echo "== the whole GPU suite (tier, match, executors) over 10 processes"
  gpu_tests 540 10 pytest-gpu-suite.log tests/gpu
  fi
  if in_part tier checks all; then
  echo "== GPU contract suite (every test but the other executors and the simulator comparison)"
  # the whole log is kept: a tail alone lost the failures' causes once
  timeout 480 python3 -m pytest -q -m gpu tests/gpu -k "not test_gpu_executors and not test_gpu_matches_simulator" \
    -p no:cacheprovider -W ignore -rf > "$out/pytest-gpu-tier.log" 2>&1
  grep -E "^(FAILED|ERROR)|passed|failed" "$out/pytest-gpu-tier.log" | tail -40
  fi
  if in_part match checks all; then
  echo "== every contract case on the GPU against the simulator (warm simulator worker)"
  timeout 480 python3 -m pytest -q -m gpu tests/gpu -k "test_gpu_matches_simulator" -p no:cacheprovider -W ignore -rf \
    > "$out/pytest-gpu-match.log" 2>&1
  grep -E "^(FAILED|ERROR)|passed|failed" "$out/pytest-gpu-match.log" | tail -40
  fi
  if in_part executors checks all; then
  echo "== GPU contract suite on the queue and spin executors, 1 and 3 of them"
  timeout 420 python3 -m pytest -q -m gpu tests/gpu -k "test_gpu_executors" -p no:cacheprovider -W ignore -rf \
    > "$out/pytest-gpu-executors.log" 2>&1
  grep -E "^(FAILED|ERROR)|passed|failed" "$out/pytest-gpu-executors.log" | tail -40
  fi
  if in_part profile all; then
  echo "== where a cold compile of stencil2d goes (bench/compile_profile.py: CPU seconds by stage)"
  timeout 300 python3 bench/compile_profile.py samples/stencil2d.gasync --json "$out/compile-profile.json" 2>>"$out/stderr.log" | tail -30
  fi
  if in_part runprofiles; then
  # B6's cached row and issue 17's single runs, by function: where a run's seconds go beyond
  # what its stats account for (each a fresh process; the first cached_run_probe fills the cache)
  d=$(mktemp -d)
  for k in cold cached; do
    echo "== a $k run of stencil2d, profiled (scripts/cached_run_probe.py)"
    timeout 120 python3 scripts/cached_run_probe.py "$d" --out "$out/run-profile-$k.txt" 2>&1 | head -45
  done
  echo "== single run_files of normalize, profiled (scripts/run_files_probe.py)"
  timeout 150 python3 scripts/run_files_probe.py --inputs 8 2>&1 | head -70
  fi
  if in_part launch; then
  # the prepared launch's call and its parts (runs 37-41 and 58, bench/NOTES.md), then B4
  echo "== the launch call's parts (scripts/launch_parts_probe.py)"
  timeout 150 python3 scripts/launch_parts_probe.py 12 2>&1 | grep -v -i warn | head -30
  echo "== B4 as the tree is"
  timeout 150 python3 bench/run.py --reps 3 --only B4 2>&1 | grep -E "ratio|GB/s|wrote" | grep -v unchecked | cut -c1-170
  cp "$(ls -t bench/results/*-b4.json | head -1)" "$out/tree-b4.json" 2>/dev/null
  fi
  if in_part handoff; then
  # B2 and B2b as the tree is (its results file copied out: the carried tree is replaced at the
  # next call). Earlier stages of this part (nodefer, oldpath, notry, apart; packed for B4) are
  # measured in bench/NOTES.md.
  echo "== B2 and B2b as the tree is"
  timeout 200 python3 bench/run.py --reps 3 --only B2,B2b 2>&1 | grep -E "us/hand-off|ns/await|wrote" | grep -v -e unchecked | cut -c1-170
  cp "$(ls -t bench/results/*-b2-b2b.json | head -1)" "$out/tree-b2-b2b.json" 2>/dev/null
  fi
  if in_part b2ab; then
  # B2 across SMs and in a group at each carried build/tree-* and at the working tree, the
  # trees interleaved row by row (3 runs of 20,000 round trips each): a change to a hand-off's
  # path beside the code before it, in one short call
  for row in "" "--group"; do
    for tree in build/tree-* .; do
      root=$(mktemp -d) && ln -sfn "$(cd "$tree" && pwd)" "$root/gasync"
      echo "-- ${row:-across SMs} at $(basename "$(cd "$tree" && pwd)")"
      (cd "$tree" && PYTHONPATH="$root:/tmp/site" timeout 90 python3 scripts/handoff_probe.py $row --runs 3 \
        --reps 20000 2>&1 | grep -E "hand-off|wrong|rror" | cut -c1-120)
    done
  done
  fi
  if in_part b4parts; then
  # B4 in parts (bench/NOTES.md, the thirty-eighth session): the tree (each hand-written kernel's
  # GPU time in its row's note, beside gasync's span), then one stage each: twice the map's loads
  # in flight (VEC_STEPS 16), the reset without its synchronize, half the loads (VEC_STEPS 4)
  BENCH_PARTS="100 B4" bash "$0" "$out" bench | grep -E "ratio|GB/s|wrote" | grep -v unchecked | cut -c1-330
  for stage in "vec16 codegen/vectors.py s/^VEC_STEPS = 8/VEC_STEPS = 16/" \
    "nosync runtime/prepared.py /self.cuda.synchronize()  # the reset is done before the launch call is timed/d" \
    "vec4 codegen/vectors.py s/^VEC_STEPS = 8/VEC_STEPS = 4/"; do
    set -- $stage
    name=$1 file=$2
    expr=${stage#"$name $file "}
    PYTHONPATH=/tmp/site bash scripts/bench_stage.sh "$out" "$name" B4 "$file" "$expr" 2>&1 \
      | grep -E "==|ratio|GB/s" | grep -v unchecked | cut -c1-330
  done
  fi
  if in_part next; then
  # the fortieth session's calls (machines are scarce): on an H200, #14's B7 and #12's B6 first
  # (and B2, B4 for summary.json), then the GPU suite; on another card the end seen at every idle
  # turn (runtime/deviceexec.py ENDED_EVERY_TURN) with its fix, checked: the GPU suite, B1 and B4
  case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in
  *H200*)  # (~8 min: the benchmarks, then the GPU suite in what is left)
    BENCH_PARTS="160 B2,B7,B8;70 B6;70 B4" bash "$0" "$out" bench \
      | grep -E "ratio|us/hand-off|GB/s|GFLOP|compile_s|wrote" | grep -v unchecked | cut -c1-170
    gpu_tests 130 14 pytest-gpu-suite.log tests/gpu ;;
  *) bash "$0" "$out" endcheck | grep -v "^numba\|^name\|^NVIDIA" ;;
  esac
  fi
  if in_part endcheck; then
  # the end's fix on the GPU (the fortieth session, after run 106's false deadlock in B1): the
  # whole GPU suite, then B1 and B4 as the tree is, B1 twice over (a false deadlock fails it)
  gpu_tests "${ENDCHECK_SUITE_S:-170}" 14 pytest-gpu-suite.log tests/gpu
  for k in 1 2; do
    timeout 120 python3 bench/run.py --reps 3 --only "$([ $k = 1 ] && echo B1,B4 || echo B1)" 2>&1 \
      | grep -E "ns/task|ratio|rror|wrote" | grep -v "^|" | cut -c1-230
    cp "$(newest_results)" "$out/endcheck-$k.json" 2>/dev/null
  done
  fi
  if in_part ended; then
  # an idle executor looks at the run's end at every empty turn, not every 8th (the fortieth
  # session: B4's last ~60 us were its executors' exit): the contract cases and the prepared
  # launch's tests on the GPU, B4's tiles in time, then B4, B5, B5a and B7 without it (a stage)
  # and as the tree is
  gpu_tests "${ENDED_TESTS_S:-200}" 10 pytest-gpu-ended.log tests/gpu/test_contract_gpu.py tests/gpu/test_prepared_gpu.py
  echo "== B4's tiles in time (a traced run; scripts/b4_timeline_probe.py)"
  timeout 90 python3 scripts/b4_timeline_probe.py 2>&1 | tail -9
  beside "${ENDED_ONLY:-B4,B5,B5a,B7}" 240 "ratio|GB/s|hand-written" lateend runtime/deviceexec.py \
    's/^ENDED_EVERY_TURN = True/ENDED_EVERY_TURN = False/'
  cp "$(newest_results)" "$out/tree-ended.json" 2>/dev/null
  fi
  if in_part b4probes; then
  # the two B4 probes alone (~2 min): B4's work hand-written in its shapes, and its tiles in time
  echo "== B4's shape, hand-written"
  timeout 150 python3 scripts/b4shape_probe.py 2>&1 | tail -14
  echo "== B4's tiles in time (a traced run; scripts/b4_timeline_probe.py)"
  timeout 90 python3 scripts/b4_timeline_probe.py 2>&1 | tail -9
  fi
  if in_part b4shape; then
  # B4's work in its own shape, hand-written (scripts/b4shape_probe.py, the thirty-ninth session):
  # 1,024 or 512 warps with long ranges, rotated or not, beside the bench's per-warp kernel; B4 with
  # its maps rotated and as it is
  bash "$0" "$out" b4probes | grep -v "^numba\|^name\|^NVIDIA"
  # the map's whole turns walked from turn w mod their number (codegen/vectors.py ROTATE), then
  # B4 as the tree is
  beside B4 150 "ratio|GB/s" rotate codegen/vectors.py 's/^ROTATE = False/ROTATE = True/'
  # the rotated walk's values on the GPU: the vector-map tests and the contract cases, ROTATE on
  # (the tree's copy edited here and put back)
  sed -i 's/^ROTATE = False/ROTATE = True/' codegen/vectors.py
  gpu_tests "${ROTATED_TESTS_S:-80}" 10 pytest-gpu-rotated.log tests/gpu/test_vector_maps_gpu.py tests/gpu/test_contract_gpu.py
  sed -i 's/^ROTATE = True/ROTATE = False/' codegen/vectors.py
  fi
  if in_part b6memo; then
  # B6 without the operator-typing memo (a stage), then as the tree is, in the same call
  beside B6 150 "compile_s" nomemo runtime/module.py '/numbafast.memo_operator_calls()/d'
  fi
  if in_part b2slack; then
  # a row's --set: WAIT=N or SEEN=N (the probe's delay), or any MODULE.NAME=VALUE (a constant)
  setting() {
    case "$1" in "") ;; *.*) echo "--set $1" ;; *) echo "--set runtime.devicelib.PROBE_${1%%=*}_CYCLES=${1#*=}" ;; esac
  }
  # B2's critical path by delay (runtime/devicelib.py, PROBE_*): cycles of busy wait put into
  # one segment of every wait in place, as it begins (the re-entry of a side that has just
  # published) or as it sees its value (the path from seeing to publishing the reply). A segment
  # with slack absorbs them; one on the critical path adds them to every hand-off. The `1` rows:
  # the probe's code with no delay to speak of, against the tree's (none)
  echo "== B2 across SMs, a delay in one segment of every wait ($(nvidia-smi --query-gpu=clocks.max.sm --format=csv,noheader))"
  # (B2SLACK_CROSS, B2SLACK_GROUP: other rows, "tree" for the tree's own)
  for s in ${B2SLACK_CROSS:-tree WAIT=1 WAIT=400 WAIT=1600 SEEN=1 SEEN=400 SEEN=1600}; do
    [ "$s" = tree ] && s=""
    echo "-- ${s:-tree}"
    timeout 90 python3 scripts/handoff_probe.py --runs 3 --reps 20000 \
      $(setting "$s") 2>&1 | grep -E "hand-off|wrong|rror" | cut -c1-120
  done
  echo "== B2 in a group (two warps of one block, local channels), a delay in one segment of every local receive's claim"
  for s in ${B2SLACK_GROUP:-tree WAIT=1 WAIT=200 WAIT=800 SEEN=1 SEEN=200 SEEN=800}; do
    [ "$s" = tree ] && s=""
    echo "-- group ${s:-tree}"
    timeout 90 python3 scripts/handoff_probe.py --group --runs 3 --reps 20000 \
      $(setting "$s") 2>&1 | grep -E "hand-off|wrong|rror" | cut -c1-120
  done
  echo "-- notry (the wait's first turn is the receive's try: codegen/chanpolls.py TRY_FIRST)"
  timeout 90 python3 scripts/handoff_probe.py --runs 3 --reps 20000 --set codegen.chanpolls.TRY_FIRST=False 2>&1 \
    | grep -E "hand-off|wrong|rror" | cut -c1-120
  # the hand-written limit built up piece by piece (never run before the thirty-seventh session)
  echo "== B2's protocol piece by piece, hand-written (scripts/handoff_parts_probe.py)"
  for p in ${B2SLACK_PARTS:-cross block}; do
    timeout 80 python3 scripts/handoff_parts_probe.py 20000 --placement "$p" 2>&1 | grep -E "hand-off|rror" | cut -c1-120
  done
  fi
  if in_part b7halves; then
  # which half of B7's pipeline holds it under the hand-written kernels (bench/NOTES.md, run 49):
  # the whole pipeline, the loaders alone, the compute tasks alone, at the benchmark's 2^28 f32
  echo "== B7's halves (scripts/group_probe.py, 128 instances, 512 tiles of 4,096 each)"
  for h in "" "--half loads" "--half stores"; do
    echo "-- ${h:-whole}"
    timeout 150 python3 scripts/group_probe.py --tiles 512 --runs 3 $h 2>&1 | grep -v -i warn | tail -3
  done
  fi
  if in_part b7shapes; then
  # B7's pipeline in other shapes of the same program (group_probe, 2^28 f32, kernel time): more
  # stages than warps (slack between the loaders and the compute tasks: run 56 found each warp's
  # tile costs ~1,000 instructions of task machinery), other loader/compute splits, tiles of 8 K
  # with 6 stages; then B7 itself beside the hand-written kernels
  echo "== B7's shapes (scripts/group_probe.py, 128 instances)"
  # (and more warps a block, twenty-eighth session: the per-warp kernel keeps many more warps an SM
  # streaming than B7's 8; 16 warps of 128 registers are an SM's 65,536)
  # (and, thirtieth session, more group instances of fewer warps: a lone loader and a lone compute
  # task take their local channels' claims without a cas, on all lanes where a ring is open)
  for v in "--stages 8" "--stages 12 -D C=8" "--stages 13 -D L=8 -D C=8" \
    "--stages 3 -D L=1 -D C=1 -D GROUPS=512" "--stages 6 -D L=2 -D C=2 -D GROUPS=256" \
    "--stages 4 -D L=1 -D C=2 -D GROUPS=384"; do
    echo "-- $v"
    timeout 100 python3 scripts/group_probe.py --tiles 512 $v --runs 3 2>&1 | grep -v -i warn | tail -3
  done
  timeout 150 python3 bench/run.py --reps 3 --only B7 2>&1 | grep -E "ratio|GB/s" | grep -v -e unchecked -e variant | cut -c1-150
  fi
  if in_part warppoll; then
  # a group task's poll on all 32 lanes (codegen/warppoll.py, twenty-sixth session): B7 and B8
  # with the lane-0 poll (a stage) beside the tree, then B7's loaders alone at the tree
  echo "== B7, B8 with the lane-0 poll (a stage), then as the tree is"
  b7_b8_beside lane0 codegen/warppoll.py 's/^WARP_POLL = True/WARP_POLL = False/'
  echo "-- the lanes together (scripts/converge_probe.py): in B8's compute loop, at a task's start, at its loop's top"
  for at in loop entry looptop; do timeout 100 python3 scripts/converge_probe.py --at $at 2>&1 | tail -1; done
  echo "-- B7's loaders alone, then the compute tasks alone"
  for h in "--half loads" "--half stores"; do
    timeout 100 python3 scripts/group_probe.py --tiles 512 --runs 3 $h 2>&1 | grep -v -i warn | tail -3
  done
  fi
  if in_part lchmbar; then
  # local channels' slots through mbarriers in a poll on all lanes (runtime/devicembar.py,
  # twenty-seventh session): B7 and B8 with lane 0's sequence words alone (a stage) beside the
  # tree (the groups part has racecheck on the samples and the probe's hand-offs)
  echo "== B7, B8 with the sequence words alone (a stage), then as the tree is"
  b7_b8_beside seqonly runtime/devicegroups.py 's/^LCH_MBAR = True/LCH_MBAR = False/'
  fi
  if in_part localwait; then
  # a lone local await waits in place (codegen/groups.py LOCAL_TRIES, twenty-eighth session; not
  # yet measured): B2 (its group row), B7 and B8 with one claim a poll (a stage) beside the tree
  echo "== B2, B7, B8 with one claim a poll (a stage), then as the tree is"
  PYTHONPATH=/tmp/site timeout 250 bash scripts/bench_stage.sh "$out" oneclaim B2,B7,B8 codegen/groups.py \
    's/^LOCAL_TRIES = 64/LOCAL_TRIES = 1/' 2>&1 | grep -E "== stage|ratio|us/hand-off|wrote" | grep -v unchecked | cut -c1-160
  timeout 250 python3 bench/run.py --reps 3 --only B2,B7,B8 2>&1 | grep -E "ratio|us/hand-off|wrote" \
    | grep -v unchecked | cut -c1-170
  cp "$(ls -t bench/results/*-b2-b7-b8.json | head -1)" "$out/tree-b2-b7-b8.json" 2>/dev/null
  fi
  if in_part commits; then
  # commits side by side (scripts/commits_bench.sh): every tree carried as build/tree-NAME
  # (`git archive COMMIT | tar -x -C build/tree-NAME` here), B2 in a group and COMMITS_ONLY in each
  echo "== commits side by side: $(ls -d build/tree-* 2>/dev/null | tr '\n' ' ')"
  timeout 540 bash scripts/commits_bench.sh "$out" "${COMMITS_ONLY:-B2,B7,B8}" build/tree-*
  # then B2 in a group at the working tree with one constant changed (scripts/handoff_probe.py --set),
  # each of COMMITS_SET's words in turn (a word's commas join constants changed together), e.g.
  # COMMITS_SET="runtime.devicegroups.LCH_TRY_NAP_NS=0 codegen.groups.LOCAL_TRIES=512,runtime.devicegroups.LCH_TRY_NAP_NS=0"
  for v in ${COMMITS_SET:-}; do
    echo "-- the working tree with $v"
    timeout 60 python3 scripts/handoff_probe.py --group --reps 10000 --runs 3 $(printf -- '--set %s ' ${v//,/ }) 2>&1 \
      | grep -v -i warn | tail -3
  done
  fi
  if in_part b2group; then
  # B2 between two tasks of a group (bench/programs/b2_group.gasync) with one constant changed at a
  # time, each in a fresh cache (scripts/handoff_probe.py --set): without the local channels' bits
  # (codegen/shapes.py LOCAL_BITS, thirtieth session: every end claims with a cas, looks at CLOSED
  # and passes the slots' mbarriers, as at run 77: 1.30 us a hand-off, 1.16 without mbarriers),
  # then that without mbarriers (the bits' lane-0 slot, but with cas claims); and the lone ends'
  # claims on lane 0 again (LANES_CLAIM=False: as at run 79, before lch_claim_lanes)
  echo "== B2 in a group: the tree, then one constant changed at a time"
  for v in "" "--set runtime.devicegroups.LANES_CLAIM=False" "--set codegen.shapes.LOCAL_BITS=False" \
    "--set codegen.shapes.LOCAL_BITS=False --set runtime.devicegroups.LCH_MBAR=False"; do
    echo "-- ${v:-the tree}"
    timeout 100 python3 scripts/handoff_probe.py --group --reps 10000 --runs 3 $v 2>&1 | grep -v -i warn | tail -4
  done
  echo "== B2, B7, B8 as the tree is"
  timeout 200 python3 bench/run.py --reps 3 --only B2,B7,B8 2>&1 | grep -E "ratio|us/hand-off|wrote" \
    | grep -v unchecked | cut -c1-170
  cp "$(ls -t bench/results/*-b2-b7-b8.json | head -1)" "$out/tree-b2-b7-b8.json" 2>/dev/null
  echo "== Nsight Compute: B2 in a group by SASS instruction (read with scripts/ncu_path.py)"
  timeout 240 ncu --clock-control none --section SourceCounters --section WarpStateStats --section LaunchStats \
    -k regex:gasync_kernel -c 1 -f -o "$out/b2g" python3 scripts/handoff_probe.py --group --lineinfo --reps 20000 \
    > "$out/ncu-b2g.log" 2>&1
  tail -3 "$out/ncu-b2g.log"
  ncu --import "$out/b2g.ncu-rep" --page source --csv --print-source cuda,sass 2>/dev/null | gzip > "$out/ncu-b2g-src.csv.gz"
  ncu --import "$out/b2g.ncu-rep" --page details --csv 2>/dev/null > "$out/ncu-b2g-details.csv"
  grep -E "Duration|Warp Cycles Per Issued|Issued Warp|Stall" "$out/ncu-b2g-details.csv" | cut -c1-200 | head -30
  rm -f "$out/b2g.ncu-rep"
  fi
  if in_part atomloads; then
  # the group words' loads as atomics too (runtime/order.py CTA_ATOMIC_LOADS, a stage: what racecheck
  # may need, +6% instructions in B7's kernel) beside the tree
  echo "== B7, B8 with the group words' loads as atomics (a stage), then as the tree is"
  b7_b8_beside atomloads runtime/order.py 's/^    CTA_ATOMIC_LOADS = False/    CTA_ATOMIC_LOADS = True/'
  fi
  if in_part racelines; then
  # racecheck on the group samples with line information: each reported pair by the generated
  # lines of its accesses (scripts/racecheck_lines.py, racecheck_where.py)
  echo "== racecheck with line information on the group samples"
  for f in samples/staged_pipeline.gasync samples/tiled_matmul.gasync; do
    b=$(basename "$f" .gasync)
    timeout 240 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --report-api-errors no \
      python3 scripts/racecheck_lines.py "$f" "$out" > "$out/racelines-$b.log" 2>&1
    echo "$f: exit $? $(grep -h 'RACECHECK SUMMARY' "$out/racelines-$b.log" | tail -1)"
    python3 scripts/racecheck_where.py "$out/racelines-$b.log" "$out/$b.gen.py" 2>&1 | head -80
  done
  # the tree's loads of a group's words as atomics too (runtime/order.py, CTA_ATOMIC_LOADS: a stage)
  # (a folder named gasync: the script puts its parent on the path, as the tree's /tmp/gs does)
  rm -rf /tmp/stage-loads && mkdir -p /tmp/stage-loads/gasync
  tar --exclude=./.whl --exclude=./.git --exclude=./build -cf - . | tar -xf - -C /tmp/stage-loads/gasync
  sed -i 's/^    CTA_ATOMIC_LOADS = False/    CTA_ATOMIC_LOADS = True/' /tmp/stage-loads/gasync/runtime/order.py
  for f in samples/staged_pipeline.gasync samples/tiled_matmul.gasync; do
    b=$(basename "$f" .gasync)
    (cd /tmp/stage-loads/gasync && PYTHONPATH=/tmp/site timeout 240 /usr/local/cuda/bin/compute-sanitizer --tool racecheck \
      --report-api-errors no python3 scripts/racecheck_lines.py "$f" "$out/loads" > "$out/racelines-loads-$b.log" 2>&1)
    echo "atomic loads too, $f: exit $? $(grep -h 'RACECHECK SUMMARY' "$out/racelines-loads-$b.log" | tail -1)"
  done
  for k in exchflag atomflag samewarp samewarpmeet samewarpload; do
    printf 'racecheck probe %s: ' "$k"
    timeout 90 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --report-api-errors no \
      python3 scripts/racecheck_probe.py "$k" > "$out/racecheck-probe-$k.log" 2>&1
    echo "exit $? $(grep -h 'RACECHECK SUMMARY' "$out/racecheck-probe-$k.log" | tail -1) $(grep -h 'warp 1' "$out/racecheck-probe-$k.log")"
  done
  fi
  if in_part bulk; then
  # B7 with a stage's copy by the bulk copy engine (codegen/groups.py BULK_COPY, off since run 55:
  # its loaders alone read 10% slower than with the lanes' cp.async), a stage beside the tree
  echo "== B7 with the bulk copy engine (a stage), then as the tree is"
  PYTHONPATH=/tmp/site timeout 200 bash scripts/bench_stage.sh "$out" bulk B7 codegen/groups.py \
    's/^BULK_COPY = False/BULK_COPY = True/' 2>&1 | grep -E "== stage|ratio|wrote" | grep -v unchecked | cut -c1-160
  timeout 200 python3 bench/run.py --reps 3 --only B7 2>&1 | grep -E "ratio|wrote" | grep -v unchecked | cut -c1-160
  fi
  if in_part cubins; then
  # kept kernels (runtime/cubins.py, on since run 48): the GPU test, then B6 (its cached run is
  # a fresh process over the cold run's cache) with them off (a stage) and as the tree is
  echo "== kept kernels: the GPU test, then B6 with them off (a stage) and as the tree is"
  timeout 300 python3 -m pytest -q -m gpu tests/gpu/test_cubins_gpu.py -p no:cacheprovider -W ignore -rf 2>&1 | tail -4
  PYTHONPATH=/tmp/site timeout 260 bash scripts/bench_stage.sh "$out" nocubins B6 runtime/cubins.py 's/^ENABLED = True/ENABLED = False/' \
    2>&1 | grep -E "== stage|B6|compile_s|wall|wrote" | cut -c1-160
  timeout 260 python3 bench/run.py --reps 3 --only B6 2>&1 | grep -E "compile_s|wall|wrote" | cut -c1-160
  fi
  if in_part differential; then
  echo "== differential: random programs on the GPU against the reference interpreter"
  timeout 420 python3 scripts/differential.py --backend cuda --programs 2000 --time-budget 300 \
    --out "$out/differential" 2>>"$out/stderr.log" | tail -20
  fi
  if in_part samples checks all; then
  echo "== differential: random programs on the GPU against the reference interpreter"
  timeout 200 python3 scripts/differential.py --backend cuda --programs 2000 --time-budget 150 \
    --out "$out/differential" 2>>"$out/stderr.log" | tail -15
  echo "== samples through the CLI on the GPU"
  # the two samples that read an input file get one (their headers' Run lines)
  python3 -c "import numpy as np; r = np.random.default_rng(0)
np.save('/tmp/img.npy', r.random((64, 64), np.float32)); np.save('/tmp/hdr.npy', 8 * r.random((32, 48), np.float32))"
  for f in samples/*.gasync; do
    extra=""
    case "$f" in
      *counter*) extra="--signal stop=5ms" ;;
      *normalize*) extra="--input img=/tmp/img.npy" ;;
      *tonemap*) extra="--input hdr=/tmp/hdr.npy" ;;
    esac
    echo "-- gasync run $f $extra"
    timeout 120 python3 -m gasync run "$f" --backend cuda --json $extra 2>>"$out/stderr.log" | python3 -c "
import json, sys
text = sys.stdin.read()
try:
    d = json.loads(text.strip().splitlines()[-1])
except Exception:
    print(text[-1500:]); sys.exit()
s = d['stats']
def total(v):
    return sum(total(x) for x in v) if isinstance(v, list) else float(v)
print('shared', d['shared'], 'signals', d['signals'])
print('buffer sums', {k: round(total(v), 3) for k, v in sorted(d['buffers'].items())})
print('polls', s['polls'], 'executors', s['executors'], 'compile_s', s['compile_s'], 'kernel_ms', s['kernel_ms'])
"
  done
  echo "-- second run of stencil2d (Numba's cache)"
  timeout 120 python3 -m gasync run samples/stencil2d.gasync --backend cuda --json | python3 -c "import json,sys; s=json.load(sys.stdin)['stats']; print('compile_s', s['compile_s'], 'kernel_ms', s['kernel_ms'])"
  echo "-- a deadlock on the GPU"
  printf 'channel a: i32[2];\nchannel b: i32[2];\ntask x { let v = a.recv().await; b.send(v).await; }\ntask y { let v = b.recv().await; a.send(v).await; }\n' > /tmp/dead.gasync
  timeout 60 python3 -m gasync run /tmp/dead.gasync --backend cuda; echo "exit status $?"
  echo "-- traced run"
  timeout 120 python3 -m gasync run samples/join_select.gasync --backend cuda --trace "$out/trace.json" --schedule "$out/schedule.dot" 2>&1 | tail -5
  fi
  if in_part probe map all; then
  echo "== a frame's round trip: does a global store leave its line in L1? (scripts/frame_probe.py)"
  timeout 60 python3 scripts/frame_probe.py 2>&1 | tail -6
  fi
  if in_part probe all; then
  echo "== where a run's fixed time goes: launch call, marshalling, device time (scripts/launch_probe.py)"
  timeout 200 python3 scripts/launch_probe.py 2>&1 | grep -v -i "warn"
  echo "== what each memory order becomes in SASS (sm_90)"
  python3 scripts/sass_orders.py /tmp/orders.ptx && /usr/local/cuda/bin/ptxas -arch=sm_90 /tmp/orders.ptx -o /tmp/orders.cubin \
    && /usr/local/cuda/bin/cuobjdump -sass /tmp/orders.cubin | grep -E "LD|ST|ATOM|MEMBAR|FENCE|CCTL|ERRBAR|RED|CAS" | head -60
  echo "== the CLI and trace tests on the GPU"
  timeout 240 python3 -m pytest -q -m gpu tests/gpu/test_cli_gpu.py tests/gpu/test_trace_gpu.py -p no:cacheprovider -W ignore -rf \
    > "$out/pytest-gpu-cli-trace.log" 2>&1
  grep -E "^(FAILED|ERROR)|passed|failed" "$out/pytest-gpu-cli-trace.log" | tail -20
  fi
  if in_part sanitize all; then
  # Issue 13: 0 memcheck errors on every sample and every contract case, bounds checks on (the
  # default), one GPU. Everything runs at once, each process under its own sanitizer: the 9
  # samples, and the contract cases in 7 shards (scripts/sanitize_contract.py: one run per
  # case with 2 executors; under memcheck every spinning warp is slow). On an H200 (2026-12-01)
  # the whole part took 137 s: 16 processes, each "ERROR SUMMARY: 0 errors", every contract
  # case ok (the slowest, every_future_kind_in_a_nested_join_and_a_select_arm, 65 s). pytest-xdist
  # under one sanitizer instead ran 55 of 56 tests (2 runs each) in 230 s and was cut off.
  echo "== compute-sanitizer memcheck, bounds checks on: every sample and every contract case"
  export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
  san="/usr/local/cuda/bin/compute-sanitizer --tool memcheck --report-api-errors no"
  for f in samples/*.gasync; do
    extra=""
    case "$f" in *counter*) extra="--signal stop=5ms" ;; esac
    slog="$out/sanitize-$(basename "$f" .gasync).log"
    ( timeout 230 $san python3 -m gasync run "$f" --backend cuda -q --timeout 200s $extra > "$slog" 2>&1
      echo "exit $?" >> "$slog" ) &
  done
  for k in 0 1 2 3 4 5 6; do
    ( timeout 230 $san python3 scripts/sanitize_contract.py --shard "$k/7" > "$out/sanitize-contract-$k.log" 2>&1
      echo "exit $?" >> "$out/sanitize-contract-$k.log" ) &
  done
  wait
  for f in samples/*.gasync; do
    slog="$out/sanitize-$(basename "$f" .gasync).log"
    echo "$f: $(tail -1 "$slog"), $(grep -h 'ERROR SUMMARY' "$slog" | tail -1)"
  done
  cat "$out"/sanitize-contract-*.log > "$out/sanitize-contract.log"
  echo "contract cases: $(grep -c '^ok ' "$out/sanitize-contract.log") ok," \
    "$(grep -c '^FAIL ' "$out/sanitize-contract.log") failed, $(grep -c '^skip ' "$out/sanitize-contract.log") skipped"
  grep -h "^FAIL \|^exit \|ERROR SUMMARY" "$out/sanitize-contract.log" | sort | uniq -c
  fi
  if in_part groups all; then
  echo "== groups (issue 14): the group samples on the GPU, the spec's sizes, racecheck and memcheck"
  for f in samples/staged_pipeline.gasync samples/tiled_matmul.gasync; do
    b=$(basename "$f" .gasync)
    printf '%s: ' "$f"
    timeout 120 python3 -m gasync run "$f" --backend cuda --json --timeout 60s > "$out/groups-$b.json" 2> "$out/groups-$b.err"
    echo "exit $?"
  done
  timeout 200 python3 scripts/groups_gpu.py "$out"
  for tool in racecheck memcheck synccheck; do
    for f in samples/staged_pipeline.gasync samples/tiled_matmul.gasync; do
      b=$(basename "$f" .gasync)
      printf '%s %s: ' "$tool" "$f"
      timeout 200 /usr/local/cuda/bin/compute-sanitizer --tool "$tool" --report-api-errors no \
        python3 -m gasync run "$f" --backend cuda -q > "$out/$tool-$b.log" 2>&1
      echo "exit $? $(grep -h -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/$tool-$b.log" | tail -1)"
    done
  done
  # B2's ping-pong in a group: local channels whose lone ends claim on all lanes and whose slots
  # lane 0 alone passes (no mbarriers: codegen/shapes.py local_how), which the samples do not take
  python3 -c "import numpy; numpy.save('$out/reps.npy', numpy.array([200], dtype=numpy.int64))"
  for tool in racecheck synccheck; do
    printf '%s b2_group: ' "$tool"
    timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool "$tool" --report-api-errors no \
      python3 -m gasync run bench/programs/b2_group.gasync --input "reps=$out/reps.npy" --backend cuda -q \
      > "$out/$tool-b2_group.log" 2>&1
    echo "exit $? $(grep -h -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/$tool-b2_group.log" | tail -1)"
  done
  # racecheck beside a correct release/acquire hand-off (reported too) and a barrier one (not):
  # what racecheck can see (docs/groups.md, Known limits)
  for k in flag barrier mbar1 mbar32; do
    printf 'racecheck probe %s: ' "$k"
    timeout 90 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --report-api-errors no \
      python3 scripts/racecheck_probe.py "$k" > "$out/racecheck-probe-$k.log" 2>&1
    echo "exit $? $(grep -h 'RACECHECK SUMMARY' "$out/racecheck-probe-$k.log" | tail -1)"
  done
  fi
  if in_part traces; then
  # where a group instance's time goes (bench/NOTES.md, run 22: B8's ~150 us a k-stage): each
  # task's polls, the time in them, its life and the gaps between polls, from a traced run
  echo "== B8 traced: samples/tiled_matmul.gasync at N = 1,024 (scripts/matmul_probe.py --trace)"
  timeout 200 python3 scripts/matmul_probe.py --n 1024 --runs 2 --trace 2>&1 | tail -8
  echo "== B7 traced: 128 instances of 128 tiles of 4,096 (scripts/group_probe.py --trace)"
  timeout 200 python3 scripts/group_probe.py --tiles 128 --runs 2 --trace 2>&1 | tail -8
  fi
  if in_part ncu; then
  # B8 at N = 1,024 by SASS instruction (no line information: NVVM refuses the product with it,
  # bench/NOTES.md): executed instructions and stall samples, to set against the counted ones
  echo "== Nsight Compute: B8 (scripts/matmul_probe.py --n 1024) by SASS instruction"
  timeout 240 ncu --clock-control none --section SourceCounters --section WarpStateStats --section Occupancy --section LaunchStats \
    --section SpeedOfLight --section SchedulerStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
    -k regex:gasync_kernel -c 1 -f -o "$out/b8" python3 scripts/matmul_probe.py --n 1024 > "$out/ncu-b8.log" 2>&1
  tail -3 "$out/ncu-b8.log"
  ncu --import "$out/b8.ncu-rep" --page source --csv --print-source sass 2>/dev/null | gzip > "$out/ncu-b8-sass.csv.gz"
  ncu --import "$out/b8.ncu-rep" --page details --csv 2>/dev/null > "$out/ncu-b8-details.csv"
  grep -E "Duration|Elapsed Cycles|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Issued Warp|Issue Slots|Eligible|Pipe|Bank" "$out/ncu-b8-details.csv" | cut -c1-200
  rm -f "$out/b8.ncu-rep"
  fi
  if in_part ncub2; then
  # B2 across SMs by generated line (the kernel compiled with line information): stall samples
  # of the hand-off's path, to set against the counts of bench/NOTES.md (runs 38-39 missed).
  # NCUB2_TREES: other trees carried as build/tree-NAME (a stage: `git archive` + sed, here),
  # each profiled in turn, its files named -NAME (e.g. run 97's restored global sends beside the head)
  for tree in ${NCUB2_TREES:-.}; do
  sfx="" && [ "$tree" != . ] && sfx="-$(basename "$tree")"
  root=$(mktemp -d) && ln -sfn "$(cd "$tree" && pwd)" "$root/gasync"
  echo "== Nsight Compute: B2 across SMs (scripts/handoff_probe.py --lineinfo) by SASS instruction, at ${tree}"
  (cd "$tree" && PYTHONPATH="$root:/tmp/site" timeout 300 ncu --clock-control none --section SourceCounters \
    --section WarpStateStats --section LaunchStats -k regex:gasync_kernel -c 1 -f -o "$out/b2$sfx" \
    python3 scripts/handoff_probe.py --lineinfo --reps 20000 > "$out/ncu-b2$sfx.log" 2>&1)
  tail -4 "$out/ncu-b2$sfx.log"
  ncu --import "$out/b2$sfx.ncu-rep" --page source --csv --print-source sass 2>/dev/null | gzip > "$out/ncu-b2$sfx-sass.csv.gz"
  ncu --import "$out/b2$sfx.ncu-rep" --page source --csv --print-source cuda,sass 2>/dev/null | gzip > "$out/ncu-b2$sfx-src.csv.gz"
  ncu --import "$out/b2$sfx.ncu-rep" --page details --csv 2>/dev/null > "$out/ncu-b2$sfx-details.csv"
  grep -E "Duration|Warp Cycles Per Issued|Issued Warp|Stall" "$out/ncu-b2$sfx-details.csv" | cut -c1-200 | head -30
  done
  fi
  if in_part ncub7; then
  # B7's loaders alone by generated line (the kernel compiled with line information): where a
  # loader's ~5.4 us a tile go (bench/NOTES.md, runs 53-55), read with scripts/ncu_path.py
  echo "== Nsight Compute: B7's loaders alone (scripts/group_probe.py --half loads --lineinfo) by SASS instruction"
  timeout 300 ncu --clock-control none --section SourceCounters --section WarpStateStats --section LaunchStats \
    -k regex:gasync_kernel -c 1 -f -o "$out/b7" python3 scripts/group_probe.py --tiles 512 --runs 1 --half loads \
    --lineinfo > "$out/ncu-b7.log" 2>&1
  tail -4 "$out/ncu-b7.log"
  ncu --import "$out/b7.ncu-rep" --page source --csv --print-source cuda,sass 2>/dev/null | gzip > "$out/ncu-b7-src.csv.gz"
  ncu --import "$out/b7.ncu-rep" --page details --csv 2>/dev/null > "$out/ncu-b7-details.csv"
  grep -E "Duration|Warp Cycles Per Issued|Issued Warp|Stall" "$out/ncu-b7-details.csv" | cut -c1-200 | head -30
  rm -f "$out/b7.ncu-rep"
  fi
  if in_part map; then
  # issue 17: gasync map of 16 images through dask-cuda's LocalCUDACluster against single runs in
  # one process (goal: within 1.10), and the cluster's tests on the GPU; Dask, dask-cuda and their
  # dependencies travel in .whl/ (scripts/fetch_wheels.sh)
  echo "== gasync map on the GPU (scripts/map_check.py: 16 inputs of 2048 x 2048)"
  timeout 300 python3 scripts/map_check.py --backend cuda --inputs 16 --size 2048 --json "$out/map-check.json" 2>&1 | tail -30
  echo "== the cluster tests on the GPU's host (simulator backend)"
  timeout 200 python3 -m pytest -q tests/cluster -p no:cacheprovider -W ignore -rf 2>&1 | tail -5
  fi
  if in_part bench all; then
  echo "== benchmarks: the whole suite, median of 3 runs, in three parts"
  # In parts, so that a slow benchmark cannot take the whole call's time with it; the three
  # timeouts (520 s) and the set-up above fit one 10-minute device call. At --reps 2 the suite
  # took about 140 s (bench/results/2026-11-30-h200-session8.json's elapsed_s); --reps 3, B4's
  # second capacity and the hand-written limits add an estimated 60-90 s.
  # Each part writes its own results file and updates summary.json (same commit: entries merge).
  rm -f bench/results/summary.json  # only this run's measurements go into it
  stamp=$(mktemp)  # a part that wrote nothing must not pick up an older results file
  parts=""
  # BENCH_PARTS="SECONDS LIST;..." runs other parts (e.g. "200 B2,B4,B5" after a change to those)
  IFS=';' read -r -a specs <<< "${BENCH_PARTS:-180 B1,B2,B2b,B5a;160 B4,B5;180 B3,T1,B6;150 B7,B8}"
  for spec in "${specs[@]}"; do
    set -- $spec
    timeout "$1" python3 bench/run.py --reps 3 --only "$2" 2>&1 | grep -v "arn" | grep "^   \|^==\|FAIL\|wrote"
    f=$(newest_results)
    [ -n "$f" ] && [ "$f" -nt "$stamp" ] || { echo "part $2 wrote no results"; continue; }
    case " $parts " in *" $f "*) ;; *) parts="$parts $f" ;; esac
    cp "$f" "$out/" 2>/dev/null
  done
  rm -f "$stamp"
  # the page from all three parts and the summary they wrote together
  [ -n "$parts" ] && python3 bench/report.py $parts
  # (a call brings back at most 8 files: the page and latest.md are made again here from the results)
  cp bench/results/summary.json "$out/summary.json" 2>/dev/null || echo "no summary.json was written"
  fi
} 2>&1 | tee "$log"
