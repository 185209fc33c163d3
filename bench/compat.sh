#!/usr/bin/env bash
# What the compatibility checks cost: a full check of the compat-lib-mismatch snapshot (embedded
# matrix parsed on first use, etc/ld.so.cache parsed, the loader's library search, every rule)
# against the binary's bare start-up (`--version`), timed interleaved in this run so machine
# noise hits both sides alike. Prints the ratios. Usage: bench/compat.sh BUILD_DIR (N=runs, 200)
set -euo pipefail
build=${1:-build}
bin=$build/gpu-preflight
here=$(cd "$(dirname "$0")/.." && pwd)
root=$here/tests/fixtures/compat-lib-mismatch
n=${N:-200}

"$bin" --root "$root" --format json >/dev/null 2>&1 || [ $? -eq 1 ] # must run (verdict fail), not crash

declare -A total=([startup]=0 [rules]=0 [check]=0)
us() { local t=${EPOCHREALTIME/[.,]/}; echo "$t"; }
for ((i = 0; i < n; i++)); do
  t0=$(us); "$bin" --version >/dev/null 2>&1 || true
  t1=$(us); "$bin" rules --format json >/dev/null 2>&1 || true
  t2=$(us); "$bin" --root "$root" --format json >/dev/null 2>&1 || true
  t3=$(us)
  total[startup]=$((total[startup] + t1 - t0))
  total[rules]=$((total[rules] + t2 - t1))
  total[check]=$((total[check] + t3 - t2))
done
awk -v s="${total[startup]}" -v r="${total[rules]}" -v c="${total[check]}" -v n="$n" 'BEGIN {
  printf "compat: %d interleaved runs each\n", n
  printf "  start-up (--version)          %8.3f ms\n", s / n / 1e3
  printf "  rules --format json           %8.3f ms  (%.2fx start-up)\n", r / n / 1e3, r / s
  printf "  check --root compat snapshot  %8.3f ms  (%.2fx start-up)\n", c / n / 1e3, c / s
}'
