#!/usr/bin/env bash
# What the compatibility checks cost: a full check of the compat-lib-mismatch snapshot (embedded
# matrix parsed on first use, etc/ld.so.cache parsed, the loader's library search, every rule)
# against the binary's bare start-up (`--version`), timed interleaved in this run so machine
# noise hits both sides alike. Prints the ratios. Usage: bench/compat.sh BUILD_DIR (N=runs, 200)
set -euo pipefail
build=${1:-build}
bin=$build/gpu-preflight
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/lib.sh"
root=$here/tests/fixtures/compat-lib-mismatch
n=${N:-200}

"$bin" --root "$root" --format json >/dev/null 2>&1 || [ $? -eq 1 ] # must run (verdict fail), not crash

echo "compat: $n interleaved runs each"
bench_interleaved "$n" "start-up (--version)" "'$bin' --version" \
  "rules --format json" "'$bin' rules --format json" \
  "check --root compat snapshot" "'$bin' --root '$root' --format json"
