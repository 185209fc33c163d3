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
root=$(snapshot 8)
init8=$(FAKE_CUDA_GPUS=8 FAKE_CUDA_INIT_MS=1500 stage_median "$bin" --root "$root" --libcuda "$fake")
printf '%-44s %8s %10s\n' "8 GPUs, 1.5 s cuInit per process" "$init8" "$(awk 'BEGIN {printf "%.1f", 10 * 1.5}')"

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
awk -v one="${ctx[1]}" -v eight="${ctx[8]}" -v init8="$init8" -v hung="$hung" 'BEGIN {
  printf "8 GPUs / 1 GPU stage time: %.2f (the multi-GPU test starts beside the per-GPU tests: close to 1; after them it would be 2; serial 16)\n", eight / one
  printf "8 GPUs (1.5 s context init) stage: %.2f s, target < 4 s: %s\n", eight, eight < 4 ? "met" : "MISSED"
  printf "8 GPUs (1.5 s cuInit) stage: %.2f s, target < 4 s: %s\n", init8, init8 < 4 ? "met" : "MISSED"
  printf "hung driver: verdict after %.2f s = deadline + %.2f s, target <= 4 s: %s\n", hung, hung - 3, hung <= 4 ? "met" : "MISSED"
}'
