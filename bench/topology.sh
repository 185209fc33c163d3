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
. "$here/lib.sh"
n=${N:-100}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$here/gen_topology_host.py" "$tmp/full"
python3 "$here/gen_topology_host.py" "$tmp/bare" --bare

"$bin" --root "$tmp/full" --format json >/dev/null # must pass: a healthy host
"$bin" --root "$tmp/bare" --format json >/dev/null

echo "topology: $n interleaved runs each (8 GPUs, 300 other PCI devices, 2000 processes)"
bench_interleaved "$n" "start-up (--version)" "'$bin' --version" \
  "check, host without topology inputs" "'$bin' --root '$tmp/bare' --format json" \
  "check, full host" "'$bin' --root '$tmp/full' --format json"
