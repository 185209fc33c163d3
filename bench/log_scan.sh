#!/usr/bin/env bash
# Kernel-log scan speed and memory. For logs of 1 MiB, 64 MiB and 1 GiB (bench/gen_log.py:
# realistic chatter, rare NVRM/Xid lines, a boot marker) it times the real binary,
#   gpu-preflight check --root <snapshot> --dmesg FILE --format json
# against `grep -cE 'NVRM|Xid' FILE` and `cat FILE >/dev/null` on the same file in the same run:
# median wall time of several interleaved runs, the ratio to grep, and each one's peak RSS
# (wait4 rusage). Targets: gpu-preflight <= 1.0x grep's time at 1 GiB; peak RSS <= 16 MiB at every
# size. The logs live in a temporary directory that is removed at the end.
#   usage: bench/log_scan.sh BUILD_DIR      (GPF_BENCH_LOG_SIZES, GPF_BENCH_RUNS override)
set -euo pipefail
build=${1:?usage: bench/log_scan.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "$build" && pwd)/gpu-preflight
root=$here/../tests/fixtures/healthy-4gpu # a full snapshot; --dmesg supplies the log
sizes=${GPF_BENCH_LOG_SIZES:-"1048576 67108864 1073741824"}
runs=${GPF_BENCH_RUNS:-5}
[ -x "$bin" ] || { echo "log_scan: $bin not built" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpf-bench-log.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

for size in $sizes; do
  log=$tmp/kern-$size.log
  start=$(date +%s.%N)
  python3 "$here/gen_log.py" "$size" "$log"
  echo "log of $(numfmt --to=iec "$size" 2>/dev/null || echo "$size") bytes generated in" \
       "$(python3 -c "print(f'{$(date +%s.%N) - $start:.1f}')") s"
  python3 - "$here" "$bin" "$root" "$log" "$runs" <<'PY'
import os, sys

sys.path.insert(0, sys.argv[1])
from interleaved import RSS_SOURCE, measure

binary, root, log, runs = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
out_path = log + ".out"
commands = {  # name: (argv, where stdout goes)
    "gpu-preflight": ([binary, "check", "--root", root, "--dmesg", log, "--format", "json"], out_path),
    "grep -cE": (["grep", "-cE", "NVRM|Xid", log], out_path),
    "cat": (["cat", log], os.devnull),
}
med, rss = measure(commands, runs, out_path)
size = os.path.getsize(log)
for name in commands:
    print(f"  {name:14s} median {med[name]*1000:9.1f} ms  {size / med[name] / 2**30:6.2f} GiB/s  "
          f"peak RSS {rss[name] / 1024:6.1f} MiB")
ratio = med["gpu-preflight"] / med["grep -cE"]
print(f"  gpu-preflight / grep -cE = {ratio:.2f}x   gpu-preflight / cat = {med['gpu-preflight'] / med['cat']:.2f}x")
print(f"  (peak RSS from {RSS_SOURCE})")
verdict = lambda ok: "met" if ok else "MISSED"
line = f"  target peak RSS <= 16 MiB: {verdict(rss['gpu-preflight'] <= 16 * 1024)}"
if size >= 2**30:
    line += f"; target time <= 1.0x grep at 1 GiB: {verdict(ratio <= 1.0)}"
print(line)
PY
  rm -f "$log" "$log".out "$log".out.rss
done
