#!/usr/bin/env bash
# What the link checks cost (PCIe link training and AER on every hop, InfiniBand ports, GPUDirect
# RDMA, the fd scan for processes on the GPUs): a whole check of a large HGX host snapshot (300
# other PCI devices, 2000 processes with 6 open files each) against the same host without those
# inputs (bench/gen_links_host.py --bare); timed interleaved in this run so machine noise hits both
# sides alike. Prints the ratio. Usage: bench/links.sh BUILD_DIR (N=runs, 50)
set -euo pipefail
build=${1:-build}
bin=$(cd "$build" && pwd)/gpu-preflight
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
n=${N:-50}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$here/gen_links_host.py" "$tmp/full"
python3 "$here/gen_links_host.py" "$tmp/bare" --bare

"$bin" --root "$tmp/full" --format json >/dev/null || [ $? -eq 1 ] # warns: processes on the GPUs
"$bin" --root "$tmp/bare" --format json >/dev/null || [ $? -eq 1 ]

echo "links: $n interleaved runs each (HGX, 8 NICs, 300 other PCI devices, 2000 processes x 6 fds)"
bench_interleaved "$n" "check, host without link inputs" "'$bin' --root '$tmp/bare' --format json" \
  "check, host with link inputs" "'$bin' --root '$tmp/full' --format json"
