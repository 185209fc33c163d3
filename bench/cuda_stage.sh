#!/usr/bin/env bash
# Benchmark of the live CUDA stage with the fake driver (tests/fake_cuda): wall time of the stage
# for 1, 2, 4 and 8 GPUs whose initialisation takes 1.5 s each, and the time to a verdict when
# cuInit hangs under --cuda-timeout 3. Prints medians and ratios measured in this run.
# Usage: bench/cuda_stage.sh BUILD_DIR [RUNS]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build=${1:?usage: bench/cuda_stage.sh BUILD_DIR [RUNS]}
runs=${2:-3}
bin="$build/gpu-preflight"
fake="$build/tests/fake_cuda/libcuda.so.1"
for f in "$bin" "$fake"; do
  [ -e "$f" ] || { echo "missing $f (build the tests first)" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A snapshot whose driver lists N GPUs (bench/lib.sh).
snapshot() { bench_fake_host "$work/host-$1" "$1"; }

median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

# The CUDA stage's own wall time (facts.cuda.wall_ms), in seconds.
stage_s() {
  local out
  out=$("$@" --format json || true)
  echo "$out" | sed -n 's/.*"wall_ms": \([0-9.e+]*\).*/\1/p' | head -1 | awk '{printf "%.3f\n", $1 / 1000}'
}

stage_median() {
  local i
  for ((i = 0; i < runs; i++)); do stage_s "$@"; done | median
}

echo "CUDA stage with the fake driver, median of $runs runs (seconds)"
printf '%-44s %8s %10s\n' "case" "stage" "serial"
declare -A ctx
for n in 1 2 4 8; do
  root=$(snapshot "$n")
  ctx[$n]=$(FAKE_CUDA_GPUS=$n FAKE_CUDA_CTX_MS=1500 stage_median "$bin" --root "$root" --libcuda "$fake")
  # serial = one GPU after the other, per-GPU test and multi-GPU test
  printf '%-44s %8s %10s\n' "$n GPU(s), 1.5 s context init each" "${ctx[$n]}" \
    "$(awk -v n="$n" 'BEGIN {printf "%.1f", n * 1.5 * (n > 1 ? 2 : 1)}')"
done
# cuInit slow in every process (no persistence mode): 8 GPUs against one, without the active step
# (the fake computes its kernels on the CPU, which 8 children share here; the next row has it).
root=$(snapshot 1)
init1=$(FAKE_CUDA_GPUS=1 FAKE_CUDA_INIT_MS=1500 stage_median "$bin" --root "$root" --libcuda "$fake" --no-active)
printf '%-44s %8s %10s\n' "1 GPU, 1.5 s cuInit per process, no active" "$init1" "$(awk 'BEGIN {printf "%.1f", 2 * 1.5}')"
root=$(snapshot 8)
init8=$(FAKE_CUDA_GPUS=8 FAKE_CUDA_INIT_MS=1500 stage_median "$bin" --root "$root" --libcuda "$fake" --no-active)
printf '%-44s %8s %10s\n' "8 GPUs, 1.5 s cuInit per process, no active" "$init8" "$(awk 'BEGIN {printf "%.1f", 10 * 1.5}')"
ctx8=$(FAKE_CUDA_GPUS=8 FAKE_CUDA_CTX_MS=1500 stage_median "$bin" --root "$root" --libcuda "$fake" --no-active)
printf '%-44s %8s %10s\n' "8 GPUs, 1.5 s context init, no active" "$ctx8" "$(awk 'BEGIN {printf "%.1f", 16 * 1.5}')"

# The stage against its floor: the slowest per-GPU child's own steps (start-up, copies, the active
# step), from the same run's report; the multi-GPU test and enumeration run beside them.
floor_ratio() {
  "$@" --format json 2>/dev/null | python3 -c '
import json, sys
c = json.load(sys.stdin)["facts"]["cuda"]
own = max(sum(s["duration_ms"] for s in d["steps"]) for d in c["devices"])
a = c["devices"][0]["active"]
print("%.3f %.3f %.2f %d" % (c["wall_ms"] / 1000, own / 1000, c["wall_ms"] / own,
                             a.get("memory_bytes", 0) >> 20))'
}
ratios=()
for ((i = 0; i < runs; i++)); do
  ratios+=("$(FAKE_CUDA_GPUS=8 FAKE_CUDA_CTX_MS=1500 floor_ratio "$bin" --root "$root" --libcuda "$fake")")
done
read -r active_stage active_own active_ratio active_mib < <(printf '%s\n' "${ratios[@]}" | sort -n -k3 | sed -n "$(((runs + 1) / 2))p")
printf '%-44s %8s %10s\n' "8 GPUs + active step: slowest child's own" "$active_stage" "$active_own"

verdict_times=()
for ((i = 0; i < runs; i++)); do
  start=$(date +%s.%N)
  FAKE_CUDA_GPUS=8 FAKE_CUDA_INIT_HANG=1 FAKE_CUDA_IGNORE_SIGTERM=1 \
    "$bin" --root "$root" --libcuda "$fake" --cuda-timeout 3 > /dev/null || true
  end=$(date +%s.%N)
  verdict_times+=("$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.3f", b - a}')")
done
hung=$(printf '%s\n' "${verdict_times[@]}" | median)
printf '%-44s %8s\n' "hung cuInit (ignores SIGTERM), --cuda-timeout 3: time to verdict" "$hung"

echo
awk -v one="${ctx[1]}" -v eight="${ctx[8]}" -v init1="$init1" -v init8="$init8" -v ctx8="$ctx8" -v hung="$hung" \
  -v as="$active_stage" -v ao="$active_own" -v ar="$active_ratio" -v mib="$active_mib" 'BEGIN {
  printf "8 GPUs / 1 GPU stage time: %.2f (the multi-GPU test starts beside the per-GPU tests: close to 1; after them it would be 2; serial 16)\n", eight / one
  printf "8 GPUs (1.5 s context init) stage: %.2f s, target < 4 s: %s\n", eight, eight < 4 ? "met" : "MISSED"
  printf "8 GPUs (1.5 s cuInit) stage: %.2f s = %.2f x one GPU (%.2f s), target <= 1.2: %s\n", init8, init8 / init1, init1, init8 / init1 <= 1.2 ? "met" : "MISSED"
  printf "  = %.2f x the same 8 GPUs with 1.5 s context init instead (%.2f s): the multi-GPU child runs cuInit at time 0 (after enumeration: 1.5 s more); the rest is the 56 verified peer copies, CPU work in the fake\n", init8 / ctx8, ctx8
  printf "8 GPUs with the active step (%s MiB per GPU): stage %.2f s / slowest per-GPU child %.2f s = %.2f, target <= 1.2: %s\n", mib, as, ao, ar, ar <= 1.2 ? "met" : "MISSED"
  printf "hung driver: verdict after %.2f s = deadline + %.2f s, target <= 4 s: %s\n", hung, hung - 3, hung <= 4 ? "met" : "MISSED"
}'
