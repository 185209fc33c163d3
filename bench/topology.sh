#!/usr/bin/env bash
# What the multi-GPU start-up checks cost (probes pcie, iommu, shm, services, firmware, mig): a
# whole check of a large 8-GPU host snapshot (300 other PCI devices, 2000 processes, none of them a
# NVIDIA daemon, so the process scan reads the whole table) against the same host without those
# inputs (the topology probes skip), and against bare start-up; timed interleaved in this run so
# machine noise hits all sides alike. Prints the ratios. Usage: bench/topology.sh BUILD_DIR (N=runs, 100)
set -euo pipefail
build=${1:-build}
bin=$(cd "$build" && pwd)/gpu-preflight
here=$(cd "$(dirname "$0")" && pwd)
n=${N:-100}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$here/gen_topology_host.py" "$tmp/full"
python3 "$here/gen_topology_host.py" "$tmp/bare" --bare

"$bin" --root "$tmp/full" --format json >/dev/null # must pass: a healthy host
"$bin" --root "$tmp/bare" --format json >/dev/null

declare -A total=([startup]=0 [bare]=0 [full]=0)
us() { local t=${EPOCHREALTIME/[.,]/}; echo "$t"; }
for ((i = 0; i < n; i++)); do
  t0=$(us); "$bin" --version >/dev/null 2>&1 || true
  t1=$(us); "$bin" --root "$tmp/bare" --format json >/dev/null 2>&1 || true
  t2=$(us); "$bin" --root "$tmp/full" --format json >/dev/null 2>&1 || true
  t3=$(us)
  total[startup]=$((total[startup] + t1 - t0))
  total[bare]=$((total[bare] + t2 - t1))
  total[full]=$((total[full] + t3 - t2))
done
awk -v s="${total[startup]}" -v b="${total[bare]}" -v f="${total[full]}" -v n="$n" 'BEGIN {
  printf "topology: %d interleaved runs each (8 GPUs, 300 other PCI devices, 2000 processes)\n", n
  printf "  start-up (--version)                  %8.3f ms\n", s / n / 1e3
  printf "  check, host without topology inputs   %8.3f ms  (%.2fx start-up)\n", b / n / 1e3, b / s
  printf "  check, full host                      %8.3f ms  (%.2fx start-up, %.2fx the bare check)\n", f / n / 1e3, f / s, f / b
}'
