#!/usr/bin/env bash
# Comparison 1: a whole check of a healthy 8-GPU snapshot (no CUDA stage) against the seed's bash
# script doing its three checks on the same snapshot. Comparison 4: start-up cost and binary size.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
build=${1:-build}
bin=$(cd "$build" && pwd)/gpu-preflight
snap=$here/../docs/examples/healthy-8gpu
bench_need hyperfine python3

# The seed's script, pointed at the snapshot: list the nodes, grep the registry, tail+grep the log.
seed=$(mktemp)
cat > "$seed" <<SH
#!/usr/bin/env bash
ls $snap/dev/nvidia* >/dev/null
grep -q RmEnableNvGpuFirmwareLoad $snap/proc/driver/nvidia/registry || true
tail -n 200 $snap/dmesg.txt 2>/dev/null | grep -q 0x26 || true
SH
chmod +x "$seed"
cuda_flag=$("$bin" --help | grep -q -- '--no-cuda' && echo --no-cuda || true)

read -r _ ours ours_sd < <(bench_median_ms gpu-preflight 30 "$bin check --root $snap --format json $cuda_flag")
read -r _ script script_sd < <(bench_median_ms seed-script 30 "$seed")
read -r _ version version_sd < <(bench_median_ms version 50 "$bin --version")
# The floor: the probes' reads alone, replayed in one process (gpf_micro_bench, built by `make
# bench` before this script), after start-up; what a check of this snapshot cannot go below.
micro=$(cd "$build" && pwd)/bench/micro/gpf_micro_bench
floor=""
if [ -x "$micro" ]; then
  floor=$("$micro" --benchmark_filter='bm_probes|bm_reads_replayed' --benchmark_min_time=0.3 \
    --benchmark_format=json 2>/dev/null | python3 -c '
import json, sys
b = {x["name"]: x for x in json.load(sys.stdin)["benchmarks"]}
p, r = b["bm_probes"], b["bm_reads_replayed"]
print("%.2f %.2f %d %d" % (p["real_time"] / 1000, r["real_time"] / 1000, r["accesses"], r["not_found"]))')
fi
rm -f "$seed"
echo "1. check of a healthy 8-GPU snapshot vs the seed's bash script (same snapshot, same run)"
echo "   gpu-preflight check --root docs/examples/healthy-8gpu $cuda_flag: median ${ours} ms (sd ${ours_sd})"
echo "   seed bash script (ls, grep registry, tail|grep log):         median ${script} ms (sd ${script_sd})"
echo "   ratio: $(bench_ratio "$ours" "$script")x   (target <= 0.30x)"
if [ -n "$floor" ]; then
  read -r probes_ms reads_ms accesses not_found <<<"$floor"
  floor_ms=$(python3 -c "import sys; print(f'{float(sys.argv[1]) + float(sys.argv[2]):.2f}')" "$version" "$reads_ms")
  echo "   in one process: the probes ${probes_ms} ms; their ${accesses} host accesses alone (${not_found} of them answered: not there) ${reads_ms} ms"
  echo "   floor, start-up (--version) + those reads: ${floor_ms} ms, $(bench_ratio "$floor_ms" "$script")x the seed script"
else
  echo "   (floor not measured: build gpf_micro_bench first, as make bench does)"
fi
stripped=$(mktemp)
strip -o "$stripped" "$bin" # what the package installs (CPACK_STRIP_FILES)
echo "4. start-up: gpu-preflight --version median ${version} ms (sd ${version_sd}), $(bench_ratio "$version" "$script")x the seed script"
echo "   binary $(stat -c %s "$bin") bytes as built (debug info), $(stat -c %s "$stripped") bytes stripped"
rm -f "$stripped"
echo "   dynamic dependencies: $(ldd "$bin" | awk '{print $1}' | tr '\n' ' ')"
