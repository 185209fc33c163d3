#!/usr/bin/env bash
# A check at the scale limits (bench/gen_scale_host.py): 2000 GPUs, 20000 MIG instances named in
# CUDA_VISIBLE_DEVICES and a cuda.json just under the 8 MiB the probe accepts, against the same
# host with a tenth of the GPUs and MIG entries; then both again with every GPU in a sysfs PCIe tree
# (eight per switch), so that the pcie.* rules judge 2 million pairs. Timed interleaved in this run
# so machine noise hits both alike. Near-linear rules keep each ratio near 10 (quadratic ones made
# it ~100, the cubic pair rules ~1000). Prints the times, the ratios and the peak RSS; fails above
# 64 MiB without the tree (the bound docs/reliability.md states) and 128 MiB with it. Usage: bench/scale.sh BUILD_DIR (N=runs, 5)
set -euo pipefail
build=${1:-build}
bin=$(cd "$build" && pwd)/gpu-preflight
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
n=${N:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$here/gen_scale_host.py" "$tmp/large"
python3 "$here/gen_scale_host.py" "$tmp/small" --gpus 200 --migs 2000 --cuda-json-bytes $((800 << 10))
python3 "$here/gen_scale_host.py" "$tmp/large-pcie" --pcie
python3 "$here/gen_scale_host.py" "$tmp/small-pcie" --pcie --gpus 200 --migs 2000 --cuda-json-bytes $((800 << 10))

"$bin" --root "$tmp/large" --format json >/dev/null # must finish: a verdict, not a crash
echo "scale: $n interleaved runs each"
bench_interleaved "$n" "200 GPUs, 2000 MIG entries, 800 KiB cuda.json" "'$bin' --root '$tmp/small' --format json" \
  "2000 GPUs, 20000 MIG entries, 8 MiB cuda.json" "'$bin' --root '$tmp/large' --format json"
echo "  peak RSS, small: $(bench_peak_rss_kib "$bin" --root "$tmp/small" --format json) KiB"
large_json=$(bench_peak_rss_kib "$bin" --root "$tmp/large" --format json)
large_text=$(bench_peak_rss_kib "$bin" --root "$tmp/large" --format text)
echo "  peak RSS, large: $large_json KiB (json), $large_text KiB (text)"
# The bound docs/reliability.md promises for the largest snapshot the caps allow.
for kib in "$large_json" "$large_text"; do
  if [ "$kib" -gt $((64 << 10)) ]; then
    echo "scale: FAIL: peak RSS $kib KiB is above 64 MiB" >&2
    exit 1
  fi
done
bench_interleaved "$n" "200 GPUs in a sysfs PCIe tree, the rest as above" "'$bin' --root '$tmp/small-pcie' --format json" \
  "2000 GPUs in a sysfs PCIe tree, the rest as above" "'$bin' --root '$tmp/large-pcie' --format json"
pcie_json=$(bench_peak_rss_kib "$bin" --root "$tmp/large-pcie" --format json)
echo "  peak RSS, large in a PCIe tree: $pcie_json KiB (json)"
if [ "$pcie_json" -gt $((128 << 10)) ]; then
  echo "scale: FAIL: peak RSS $pcie_json KiB is above 128 MiB with the PCIe tree" >&2
  exit 1
fi
echo "  CPU of one large run: $( { /usr/bin/time -f '%U s user + %S s sys' "$bin" --root "$tmp/large" --format json >/dev/null; } 2>&1 | tail -n 1)"
