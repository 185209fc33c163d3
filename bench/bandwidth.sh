#!/usr/bin/env bash
# Benchmark of the CUDA stage's bandwidth step with the fake driver (tests/fake_cuda): the live
# stage's wall time (facts.cuda.wall_ms) on 8 fake GPUs with the step (the default) and without it
# (--no-bandwidth), runs interleaved so that a change of load hits both alike; prints medians and
# their ratio measured in this run. The fake's timed copies take no time, so the ratio is the
# step's own cost (pinned and device allocations, events, protocol lines, 56 peer pairs), not a
# real link's.
# Usage: bench/bandwidth.sh BUILD_DIR [RUNS]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build=${1:?usage: bench/bandwidth.sh BUILD_DIR [RUNS]}
runs=${2:-7}
bin="$build/gpu-preflight"
fake="$build/tests/fake_cuda/libcuda.so.1"
for f in "$bin" "$fake"; do
  [ -e "$f" ] || { echo "missing $f (build the tests first)" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$(bench_fake_host "$work/host-8" 8)

median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

# The CUDA stage's own wall time in milliseconds.
stage_ms() {
  FAKE_CUDA_GPUS=8 "$bin" --root "$root" --libcuda "$fake" --format json "$@" |
    sed -n 's/.*"wall_ms": \([0-9.e+]*\).*/\1/p' | head -1 || true
}

with=()
without=()
for ((i = 0; i < runs; i++)); do
  with+=("$(stage_ms)")
  without+=("$(stage_ms --no-bandwidth)")
done
w=$(printf '%s\n' "${with[@]}" | median)
wo=$(printf '%s\n' "${without[@]}" | median)
echo "CUDA stage on 8 fake GPUs, median of $runs interleaved runs (ms)"
printf '  %-40s %8.1f\n' "without the bandwidth step" "$wo" "with it (default sizes)" "$w"
awk -v w="$w" -v wo="$wo" 'BEGIN {
  r = w / wo
  printf "with / without: %.2f, target <= 1.20: %s\n", r, r <= 1.20 ? "met" : "MISSED"
}'
