# shellcheck shell=bash
# Shared helpers for bench/*.sh: timing with hyperfine, medians and ratios measured in one run.
# Machines are shared and noisy: compare ratios from the same run, never assert absolute times.

bench_need() {
  for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 || { echo "bench: '$tool' is missing (make bench installs it as root: apt-get install $tool)" >&2; exit 2; }
  done
}

# bench_median_ms NAME RUNS CMD... : runs CMD (a shell string) RUNS times after one warm-up,
# prints "NAME median_ms stddev_ms".
bench_median_ms() {
  local name=$1 runs=$2; shift 2
  local json
  json=$(mktemp)
  hyperfine --style none --warmup 1 --runs "$runs" -N --export-json "$json" "$@" >/dev/null 2>&1 ||
    hyperfine --style none --warmup 1 --runs "$runs" --export-json "$json" "$@" >/dev/null 2>&1 || true
  python3 - "$json" "$name" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["results"][0]
print(f"{sys.argv[2]} {d['median']*1000:.2f} {d['stddev']*1000 if d['stddev'] is not None else 0:.2f}")
PY
  rm -f "$json"
}

# bench_ratio A_MS B_MS : A/B with two decimals
bench_ratio() { python3 -c "import sys; a,b=map(float,sys.argv[1:]); print(f'{a/b:.2f}')" "$1" "$2"; }

# bench_peak_rss_kib CMD... : peak resident set of the command in KiB (GNU time)
bench_peak_rss_kib() { /usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -n 1; }

# bench_interleaved RUNS LABEL CMD [LABEL CMD]... : runs the commands (shell strings) in turn, RUNS
# rounds, so that a change of load hits them all alike; prints each one's mean and its ratio to the
# first command's.
bench_interleaved() {
  local n=$1; shift
  local -a labels=() cmds=() totals=()
  while [ $# -ge 2 ]; do labels+=("$1"); cmds+=("$2"); totals+=(0); shift 2; done
  local i k t0 t1
  for ((i = 0; i < n; i++)); do
    for k in "${!cmds[@]}"; do
      t0=${EPOCHREALTIME/[.,]/}
      eval "${cmds[$k]}" >/dev/null 2>&1 || true
      t1=${EPOCHREALTIME/[.,]/}
      totals[k]=$((totals[k] + t1 - t0))
    done
  done
  for k in "${!cmds[@]}"; do
    awk -v l="${labels[$k]}" -v t="${totals[$k]}" -v f="${totals[0]}" -v n="$n" \
      'BEGIN { printf "  %-40s %8.3f ms  (%.2fx the first)\n", l, t / n / 1e3, t / f }'
  done
}

# bench_fake_host DIR N: writes a snapshot whose driver lists N GPUs with the fake drivers' default
# bus ids (0000:01:00.0, 0000:02:00.0, ...) and UUIDs, and prints DIR.
bench_fake_host() {
  local dir=$1 n=$2 i bus
  mkdir -p "$dir/proc/sys/kernel" "$dir/proc/driver/nvidia/gpus" "$dir/dev"
  echo "6.8.0-45-generic" >"$dir/proc/sys/kernel/osrelease"
  printf 'nvidia_uvm 1 0 - Live 0x0\nnvidia 1 1 nvidia_uvm, Live 0x0\n' >"$dir/proc/modules"
  echo "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.14  Release Build  (b@h)  2024" \
    >"$dir/proc/driver/nvidia/version"
  echo "EnableGpuFirmware: 18" >"$dir/proc/driver/nvidia/params"
  echo 'Binary: ""' >"$dir/proc/driver/nvidia/registry"
  : >"$dir/dev/nvidiactl"
  : >"$dir/dev/nvidia-uvm"
  : >"$dir/environ"
  for ((i = 0; i < n; i++)); do
    bus=$(printf '0000:%02x:00.0' $((i + 1)))
    mkdir -p "$dir/proc/driver/nvidia/gpus/$bus"
    printf 'Model: \t\t NVIDIA Fake GPU\nGPU UUID: \t GPU-fa4ec0de-0000-4000-8000-%012x\nBus Location: \t %s\nDevice Minor: \t %d\nGPU Excluded:\t No\n' \
      "$i" "$bus" "$i" >"$dir/proc/driver/nvidia/gpus/$bus/information"
    : >"$dir/dev/nvidia$i"
  done
  echo "$dir"
}
