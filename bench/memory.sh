#!/usr/bin/env bash
# Peak memory on hostile inputs: every read is capped and the kernel log is streamed, so the
# checker's peak RSS must not grow with its input. Three snapshot roots, built in a temporary
# directory (removed at the end):
#   baseline  tests/fixtures/healthy-4gpu as it is
#   long-line the same with a 200 MiB dmesg.txt that is one line without a newline
#   huge      the same with every input file 1 GiB (sparse: NUL bytes, no disk used): proc/modules,
#             the driver files, each GPU's information, environ, devices.json, statvfs.json,
#             cuda.json, proc/cmdline, proc/mounts, proc/cpuinfo, etc/ld.so.cache,
#             var/lib/dpkg/status, plus a 200 MiB single-line dmesg.txt
#   gpu-preflight --root ROOT --format json   (peak RSS from GNU time, %M)
# Prints each peak RSS and its ratio to the baseline measured in the same run; fails when a peak
# is above 64 MiB (GPF_BENCH_RSS_LIMIT_KIB overrides).
#   usage: bench/memory.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: bench/memory.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "$build" && pwd)/gpu-preflight
limit_kib=${GPF_BENCH_RSS_LIMIT_KIB:-65536}
[ -x "$bin" ] || { echo "memory: $bin not built" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "memory: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpf-bench-mem.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fixture=$here/../tests/fixtures/healthy-4gpu

cp -r "$fixture" "$tmp/baseline"
cp -r "$fixture" "$tmp/long-line"
head -c $((200 << 20)) /dev/zero | tr '\0' 'A' >"$tmp/long-line/dmesg.txt"
cp -r "$tmp/long-line" "$tmp/huge"
for f in proc/modules proc/driver/nvidia/version proc/driver/nvidia/params proc/driver/nvidia/registry \
         sys/module/nvidia/version environ devices.json statvfs.json cuda.json proc/cmdline proc/mounts \
         proc/cpuinfo etc/ld.so.cache var/lib/dpkg/status; do
  mkdir -p "$(dirname "$tmp/huge/$f")"
  rm -f "$tmp/huge/$f"
  truncate -s 1G "$tmp/huge/$f"
done
for info in "$tmp"/huge/proc/driver/nvidia/gpus/*/information; do
  rm -f "$info"
  truncate -s 1G "$info"
done

peak_kib() { # ROOT -> peak RSS in KiB of one run (exit 0 or 1 expected: a verdict)
  local rc=0
  /usr/bin/time -f '%M' -o "$tmp/rss" "$bin" --root "$1" --format json >"$tmp/out.json" 2>"$tmp/err" || rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
    echo "memory: gpu-preflight failed on $1 (exit $rc): $(cat "$tmp/err")" >&2
    exit 1
  fi
  python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/out.json"
  tail -n 1 "$tmp/rss"
}

failed=0
base=$(peak_kib "$tmp/baseline")
printf '%-10s peak RSS %7d KiB\n' baseline "$base"
for name in long-line huge; do
  kib=$(peak_kib "$tmp/$name")
  ratio=$(python3 -c "import sys; print(f'{int(sys.argv[1]) / int(sys.argv[2]):.2f}')" "$kib" "$base")
  verdict=ok
  if [ "$kib" -gt "$limit_kib" ]; then
    verdict="ABOVE $((limit_kib / 1024)) MiB"
    failed=1
  fi
  printf '%-10s peak RSS %7d KiB  %sx baseline  %s\n' "$name" "$kib" "$ratio" "$verdict"
done
exit "$failed"
