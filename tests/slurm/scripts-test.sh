#!/usr/bin/env bash
# contrib/slurm scripts without a cluster (ctest label "contrib"; no root needed): the paths the
# real-cluster test cannot provoke. scontrol is a stand-in that serves a node description from a
# file and records updates; the checker is the real binary on fixtures, or a stand-in that hangs,
# fails or records its arguments.
#   scripts-test.sh GPU_PREFLIGHT_BINARY SOURCE_DIR [FAKE_LIBCUDA]
set -euo pipefail

bin=$(readlink -f "$1")
src=$(readlink -f "$2")
fake_libcuda=${3:-} # tests/fake_cuda's libcuda.so.1: the CUDA stage live under each limit
hc=$src/contrib/slurm/healthcheck.sh
prolog=$src/contrib/slurm/prolog.sh
failing=$src/tests/fixtures/missing-uvm
passing=$src/tests/fixtures/healthy-4gpu

tmp=$(mktemp -d /tmp/gpf-slurm-scripts-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$tmp/scontrol" <<EOF2
#!/usr/bin/env bash
# Stand-in scontrol: "show node" prints $tmp/node; "update" is recorded in $tmp/calls.
case "\$1" in
  show) [ -f $tmp/scontrol-down ] && { echo "slurm_load_node error: Unable to contact slurm controller" >&2; exit 1; }
        cat $tmp/node ;;
  update) shift; printf '%s\n' "\$*" >>$tmp/calls ;;
  *) exit 2 ;;
esac
EOF2
cat >"$tmp/hanging-checker" <<'EOF2'
#!/usr/bin/env bash
# Stand-in checker that never answers a check.
[ "${1:-}" = --help ] && exit 0
exec sleep 30
EOF2
cat >"$tmp/crashing-checker" <<'EOF2'
#!/usr/bin/env bash
# Stand-in checker that dies of a signal.
[ "${1:-}" = --help ] && exit 0
kill -ABRT $$
EOF2
cat >"$tmp/recording-checker" <<EOF2
#!/usr/bin/env bash
# Stand-in checker that has --cuda-timeout, --skip-busy and --budget, records its arguments and passes.
[ "\${1:-}" = --help ] && { printf '  --cuda-timeout FLOAT  Deadline of the CUDA probe\n  --skip-busy  Skip when busy\n  --budget SEC  Budget\n'; exit 0; }
printf '%s\n' "\$*" >$tmp/args
echo "PASS 1/1 GPUs"
EOF2
chmod +x "$tmp/scontrol" "$tmp/hanging-checker" "$tmp/crashing-checker" "$tmp/recording-checker"

node_state() { # STATE [REASON]: the node description scontrol shows
  { echo "NodeName=n1 Arch=x86_64 CoresPerSocket=1"
    echo "   State=$1 ThreadsPerCore=1 TmpDisk=0 Weight=1"
    [ -z "${2:-}" ] || echo "   Reason=$2 [root@2026-01-01T00:00:00]"; } >"$tmp/node"
  rm -f "$tmp/calls"
}
calls() { cat "$tmp/calls" 2>/dev/null || true; }
# run SCRIPT EXPECTED_EXIT [VAR=VALUE...]: runs a script with the stand-ins and a clean settings file.
run() {
  local script=$1 expected=$2 rc=0
  shift 2
  env -i PATH=/usr/bin:/bin SCONTROL="$tmp/scontrol" GPU_PREFLIGHT="$bin" GPU_PREFLIGHT_CONFIG=/dev/null \
    GPU_PREFLIGHT_LOG_DIR="$tmp/log" GPU_PREFLIGHT_NODE=n1 "$@" "$script" >"$tmp/out" 2>&1 || rc=$?
  [ $rc -eq "$expected" ] || { cat "$tmp/out"; fail "$(basename "$script") $* exited $rc, expected $expected"; }
}

echo "drain on fail, with the line as reason; nothing when already drained for it"
node_state IDLE
run "$hc" 1 GPU_PREFLIGHT_ROOT="$failing"
[ "$(calls)" = "NodeName=n1 State=DRAIN Reason=gpu-preflight: FAIL devnode.nvidia-uvm-missing" ] || fail "calls: $(calls)"
grep -q '"verdict": "fail"' "$tmp/log/healthcheck.json" || fail "no JSON report"
node_state IDLE+DRAIN "gpu-preflight: FAIL devnode.nvidia-uvm-missing"
run "$hc" 1 GPU_PREFLIGHT_ROOT="$failing"
[ -z "$(calls)" ] || fail "re-drained: $(calls)"

echo "a different failure replaces our own reason; a pass resumes our drain only"
node_state IDLE+DRAIN "gpu-preflight: FAIL devnode.nvidia-uvm-missing"
run "$hc" 1 GPU_PREFLIGHT_ROOT="$passing" GPU_PREFLIGHT_ARGS="--min-gpus 8"
[[ $(calls) == "NodeName=n1 State=DRAIN Reason=gpu-preflight: FAIL "* ]] || fail "calls: $(calls)"
[[ $(calls) != *nvidia-uvm* ]] || fail "reason not replaced: $(calls)"
node_state MIXED+DRAIN "gpu-preflight: FAIL devnode.nvidia-uvm-missing"
run "$hc" 0 GPU_PREFLIGHT_ROOT="$passing"
[ "$(calls)" = "NodeName=n1 State=RESUME" ] || fail "calls: $(calls)"
node_state IDLE
run "$hc" 0 GPU_PREFLIGHT_ROOT="$passing"
[ -z "$(calls)" ] || fail "touched a healthy node: $(calls)"

echo "other reasons are never replaced or resumed: admin drains, Slurm's own, down nodes"
for held in "IDLE+DRAIN|admin: rack move" "DOWN|Not responding" "IDLE+DRAIN|Prolog error" "DOWN+DRAIN|gpu-preflight-not-ours"; do
  node_state "${held%%|*}" "${held#*|}"
  run "$hc" 1 GPU_PREFLIGHT_ROOT="$failing"
  run "$hc" 0 GPU_PREFLIGHT_ROOT="$passing"
  [ -z "$(calls)" ] || fail "changed a node held for '${held#*|}': $(calls)"
done

echo "checker errors change nothing, unless GPU_PREFLIGHT_ERROR_BLOCKS=1"
node_state IDLE
run "$hc" 2 GPU_PREFLIGHT=/nonexistent/gpu-preflight
grep -q "ERROR cannot run /nonexistent/gpu-preflight" "$tmp/out" || fail "no reason: $(cat "$tmp/out")"
run "$hc" 2 GPU_PREFLIGHT_ROOT=/nonexistent/snapshot
run "$hc" 2 GPU_PREFLIGHT="$tmp/crashing-checker"
grep -q "ERROR checker failed (exit 134)" "$tmp/out" || fail "no exit status: $(cat "$tmp/out")"
[ -z "$(calls)" ] || fail "drained on a checker error: $(calls)"
start=$SECONDS
run "$hc" 2 GPU_PREFLIGHT="$tmp/hanging-checker" GPU_PREFLIGHT_TIMEOUT=1
[ $((SECONDS - start)) -lt 10 ] || fail "the hard time limit did not stop a hanging checker"
grep -q "ERROR checker timed out after 1 s" "$tmp/out" || fail "no timeout reason: $(cat "$tmp/out")"
[ -z "$(calls)" ] || fail "drained on a timeout: $(calls)"
run "$hc" 1 GPU_PREFLIGHT="$tmp/hanging-checker" GPU_PREFLIGHT_TIMEOUT=1 GPU_PREFLIGHT_ERROR_BLOCKS=1
[ "$(calls)" = "NodeName=n1 State=DRAIN Reason=gpu-preflight: ERROR checker timed out after 1 s" ] || fail "calls: $(calls)"

echo "options reach the checker: --cuda-timeout, --skip-busy and --budget when it has them, --root, GPU_PREFLIGHT_ARGS, the settings file"
node_state IDLE
printf 'GPU_PREFLIGHT_ARGS="--strict --min-gpus 2"\nGPU_PREFLIGHT_CUDA_TIMEOUT=7\n' >"$tmp/settings"
run "$hc" 0 GPU_PREFLIGHT="$tmp/recording-checker" GPU_PREFLIGHT_ROOT=/snap GPU_PREFLIGHT_CONFIG="$tmp/settings"
[ "$(cat "$tmp/args")" = "check --format line --json-out $tmp/log/healthcheck.json --root /snap --cuda-timeout 7 --skip-busy --budget 30 --strict --min-gpus 2" ] ||
  fail "arguments: $(cat "$tmp/args")"
# a '*' in GPU_PREFLIGHT_ARGS reaches the checker as it is, never as the names of files here
cd "$tmp"
run "$hc" 0 GPU_PREFLIGHT="$tmp/recording-checker" GPU_PREFLIGHT_ROOT=/snap GPU_PREFLIGHT_ARGS="--disable *"
cd - >/dev/null
[ "$(cat "$tmp/args")" = "check --format line --json-out $tmp/log/healthcheck.json --root /snap --cuda-timeout 20 --skip-busy --budget 30 --disable *" ] ||
  fail "GPU_PREFLIGHT_ARGS was globbed: $(cat "$tmp/args")"
# the budget follows the hard limit; a limit that is no whole number of seconds gives none
run "$hc" 0 GPU_PREFLIGHT="$tmp/recording-checker" GPU_PREFLIGHT_ROOT=/snap GPU_PREFLIGHT_TIMEOUT=50
grep -Eq -- "--budget 45( |$)" "$tmp/args" || fail "budget for a 50 s limit: $(cat "$tmp/args")"
run "$hc" 0 GPU_PREFLIGHT="$tmp/recording-checker" GPU_PREFLIGHT_ROOT=/snap GPU_PREFLIGHT_TIMEOUT=40.5
! grep -q -- "--budget" "$tmp/args" || fail "budget for a 40.5 s limit: $(cat "$tmp/args")"
run "$hc" 1 GPU_PREFLIGHT_ROOT="$failing" GPU_PREFLIGHT_CUDA_TIMEOUT=7
[ -n "$(calls)" ] || fail "no drain with a binary without --cuda-timeout"

echo "the CUDA deadline is derived from the limit: it always fits the budget, so CUDA is never left out"
# the deadline handed on, for limits at and below the 25 s at which it once stopped fitting
for limit in 8 12 20 25 35 50; do
  run "$hc" 0 GPU_PREFLIGHT="$tmp/recording-checker" GPU_PREFLIGHT_ROOT=/snap GPU_PREFLIGHT_TIMEOUT=$limit
  cuda=$(sed -n 's/.*--cuda-timeout \([0-9]*\).*/\1/p' "$tmp/args")
  budget=$(sed -n 's/.*--budget \([0-9]*\).*/\1/p' "$tmp/args")
  [ -n "$cuda" ] || fail "no --cuda-timeout for a $limit s limit: $(cat "$tmp/args")"
  [ "$cuda" -lt "${budget:-$limit}" ] || fail "a $limit s limit: --cuda-timeout $cuda does not fit --budget ${budget:-none}"
  [ "$cuda" -le 20 ] || fail "a $limit s limit raised the CUDA deadline to $cuda"
done
# and the real checker, its CUDA stage live on the fake driver: checked at every limit, never
# "not checked: budget" (a 25 s limit once gave --budget 20 --cuda-timeout 20: CUDA skipped, PASS)
if [ -n "$fake_libcuda" ] && [ -f "$fake_libcuda" ]; then
  cuda_fixture=$src/tests/fixtures/cuda-4gpu
  for limit in 12 20 25 35; do
    node_state IDLE
    run "$hc" 0 GPU_PREFLIGHT_ROOT="$cuda_fixture" GPU_PREFLIGHT_TIMEOUT=$limit \
      GPU_PREFLIGHT_ARGS="--libcuda $fake_libcuda" FAKE_CUDA_GPUS=4
    status=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print([p["status"]+" "+p.get("message","") for p in r["probes"] if p["name"]=="cuda"][0])' "$tmp/log/healthcheck.json")
    case $status in ok*) ;; *) fail "a $limit s limit: the CUDA probe was $status" ;; esac
    ! grep -q "not checked: budget" "$tmp/out" || fail "a $limit s limit: $(cat "$tmp/out")"
  done
  # an explicit deadline that cannot fit is lowered, said on stderr, and CUDA still runs
  run "$hc" 0 GPU_PREFLIGHT_ROOT="$cuda_fixture" GPU_PREFLIGHT_TIMEOUT=20 GPU_PREFLIGHT_CUDA_TIMEOUT=30 \
    GPU_PREFLIGHT_ARGS="--libcuda $fake_libcuda" FAKE_CUDA_GPUS=4
  grep -q "leaves the CUDA stage 12 s (not 30 s)" "$tmp/out" || fail "no note of the lowered deadline: $(cat "$tmp/out")"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if [p for p in r["probes"] if p["name"]=="cuda"][0]["status"]=="ok" else 1)' "$tmp/log/healthcheck.json" ||
    fail "an explicit 30 s deadline under a 20 s limit left CUDA out"
else
  echo "note: no fake libcuda given (third argument): the live CUDA runs under each limit are not made"
fi

echo "an unwritable log directory or an unreachable controller does not stop the check"
node_state IDLE
run "$hc" 1 GPU_PREFLIGHT_ROOT="$failing" GPU_PREFLIGHT_LOG_DIR=/proc/gpf-no-such-dir
grep -q "no JSON report kept" "$tmp/out" || fail "no warning: $(cat "$tmp/out")"
[ -n "$(calls)" ] || fail "no drain without a log directory"
node_state IDLE
touch "$tmp/scontrol-down"
run "$hc" 1 GPU_PREFLIGHT_ROOT="$failing"
grep -q "cannot read node n1" "$tmp/out" || fail "no message: $(cat "$tmp/out")"
rm "$tmp/scontrol-down"

echo "prolog: 1 and a drain on fail (none with GPU_PREFLIGHT_PROLOG_DRAIN=0), 0 on pass and on checker errors"
node_state ALLOCATED
run "$prolog" 1 GPU_PREFLIGHT_ROOT="$failing" SLURM_JOB_ID=42
grep -q "job 42 refused on n1: FAIL devnode.nvidia-uvm-missing" "$tmp/out" || fail "prolog said: $(cat "$tmp/out")"
[ "$(calls)" = "NodeName=n1 State=DRAIN Reason=gpu-preflight: FAIL devnode.nvidia-uvm-missing" ] || fail "calls: $(calls)"
grep -q '"verdict": "fail"' "$tmp/log/prolog.json" || fail "no prolog JSON report"
node_state ALLOCATED
run "$prolog" 1 GPU_PREFLIGHT_ROOT="$failing" GPU_PREFLIGHT_PROLOG_DRAIN=0
[ -z "$(calls)" ] || fail "drained with GPU_PREFLIGHT_PROLOG_DRAIN=0: $(calls)"
run "$prolog" 0 GPU_PREFLIGHT_ROOT="$passing"
run "$prolog" 0 GPU_PREFLIGHT_ROOT=/nonexistent/snapshot
run "$prolog" 1 GPU_PREFLIGHT_ROOT=/nonexistent/snapshot GPU_PREFLIGHT_ERROR_BLOCKS=1
echo "PASS: contrib/slurm scripts"
