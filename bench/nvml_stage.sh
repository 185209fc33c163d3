#!/usr/bin/env bash
# Benchmark of the live NVML stage with the fake libnvidia-ml (tests/fake_nvml): its own wall time
# on 8 GPUs, and what it adds to a whole live check beside the CUDA stage (fake libcuda, 8 GPUs
# whose context creation takes 1.5 s, so that CUDA is the slower stage). Ratios from one run.
# Usage: bench/nvml_stage.sh BUILD_DIR [RUNS]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build=${1:?usage: bench/nvml_stage.sh BUILD_DIR [RUNS]}
runs=${2:-5}
bin="$build/gpu-preflight"
cuda="$build/tests/fake_cuda/libcuda.so.1"
nvml="$build/tests/fake_nvml/libnvidia-ml.so.1"
for f in "$bin" "$cuda" "$nvml"; do
  [ -e "$f" ] || { echo "missing $f (build the tests first)" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$(bench_fake_host "$work/host" 8)
buses=$(printf '0000:%02x:00.0,' 1 2 3 4 5 6 7 8)
export FAKE_NVML_BUS_IDS=${buses%,} FAKE_CUDA_GPUS=8 FAKE_CUDA_CTX_MS=1500

median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
# wall_ms of facts.<stage> in the JSON report of one run, in ms
stage_ms() {
  local stage=$1
  shift
  "$bin" "$@" --format json | python3 -c "import json,sys; print(json.load(sys.stdin)['facts']['$stage']['wall_ms'])" || true
}
# the whole run, in ms
whole_ms() {
  local t0 t1
  t0=${EPOCHREALTIME/[.,]/}
  "$bin" "$@" >/dev/null || true
  t1=${EPOCHREALTIME/[.,]/}
  echo $(((t1 - t0) / 1000))
}
repeat() {
  local i
  for ((i = 0; i < runs; i++)); do "$@"; done | median
}

nvml_alone=$(repeat stage_ms nvml --root "$root" --no-cuda --libnvml "$nvml")
both_nvml=$(repeat stage_ms nvml --root "$root" --libcuda "$cuda" --libnvml "$nvml")
cuda_only=$(repeat whole_ms --root "$root" --libcuda "$cuda" --no-nvml)
both=$(repeat whole_ms --root "$root" --libcuda "$cuda" --libnvml "$nvml")

echo "NVML stage with the fake library, 8 GPUs, median of $runs runs"
printf '  %-58s %8.1f ms\n' "NVML stage alone (--no-cuda)" "$nvml_alone"
printf '  %-58s %8.1f ms\n' "NVML stage beside CUDA (start to collection, after CUDA)" "$both_nvml"
printf '  %-58s %8d ms\n' "whole check, CUDA stage only (--no-nvml)" "$cuda_only"
printf '  %-58s %8d ms\n' "whole check, CUDA and NVML stages" "$both"
awk -v a="$both" -v b="$cuda_only" 'BEGIN {
  r = a / b
  printf "CUDA+NVML / CUDA alone: %.3f; target: NVML adds under 10%% when CUDA is the slower stage (< 1.10): %s\n", r, r < 1.10 ? "met" : "MISSED"
}'
