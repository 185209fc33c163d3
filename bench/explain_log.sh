#!/usr/bin/env bash
# explain-log speed and memory. For job logs of 1 MiB, 64 MiB and 1 GiB (bench/gen_job_log.py:
# NCCL INFO, step and loss lines, progress bars, rare error lines, the NCCL /dev/shm failure last)
# it times the real binary,
#   gpu-preflight explain-log FILE --format json
# which matches every row of the pattern table and runs the kernel-log scanner over every byte,
# against `grep -c 'posix_fallocate failed' FILE` (one fixed pattern) and `cat FILE >/dev/null` on
# the same file in the same run: median wall time of interleaved runs, the ratios, and each one's
# peak RSS. Target: peak RSS <= 16 MiB at every size (the log streams; memory does not grow with
# it). The ratio to grep is reported, not asserted. The logs are removed at the end.
#   usage: bench/explain_log.sh BUILD_DIR      (GPF_BENCH_LOG_SIZES, GPF_BENCH_RUNS override)
set -euo pipefail
build=${1:?usage: bench/explain_log.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "$build" && pwd)/gpu-preflight
sizes=${GPF_BENCH_LOG_SIZES:-"1048576 67108864 1073741824"}
runs=${GPF_BENCH_RUNS:-5}
[ -x "$bin" ] || { echo "explain_log: $bin not built" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpf-bench-explain.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

for size in $sizes; do
  log=$tmp/job-$size.log
  python3 "$here/gen_job_log.py" "$size" "$log"
  echo "job log of $(numfmt --to=iec "$size" 2>/dev/null || echo "$size") bytes"
  python3 - "$bin" "$log" "$runs" <<'PY'
import os, statistics, subprocess, sys, time

binary, log, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
out_path = log + ".out"
commands = {
    "explain-log": ([binary, "explain-log", log, "--format", "json"], out_path),
    "grep -c": (["grep", "-c", "posix_fallocate failed", log], out_path),
    "cat": (["cat", log], os.devnull),
}
gnu_time = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None

def run(argv, sink):
    wrapped = [gnu_time, "-f", "%M", "-o", out_path + ".rss"] + argv if gnu_time else argv
    with open(sink, "wb") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(wrapped, stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        err = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit(f"{argv[0]} failed ({code}): {err}")
    peak = usage.ru_maxrss
    if gnu_time:
        with open(out_path + ".rss") as f:
            peak = int(f.read().split()[-1])
    return wall, peak

run(*commands["cat"])  # warm the page cache
times = {name: [] for name in commands}
rss = {name: 0 for name in commands}
for _ in range(runs):
    for name, (argv, sink) in commands.items():
        wall, peak = run(argv, sink)
        times[name].append(wall)
        rss[name] = max(rss[name], peak)
med = {name: statistics.median(v) for name, v in times.items()}
size = os.path.getsize(log)
for name in commands:
    print(f"  {name:12s} median {med[name]*1000:9.1f} ms  {size / med[name] / 2**30:6.2f} GiB/s  "
          f"peak RSS {rss[name] / 1024:6.1f} MiB")
print(f"  explain-log / grep -c = {med['explain-log'] / med['grep -c']:.2f}x   "
      f"explain-log / cat = {med['explain-log'] / med['cat']:.2f}x")
print(f"  target peak RSS <= 16 MiB: {'met' if rss['explain-log'] <= 16 * 1024 else 'MISSED'}")
PY
  rm -f "$log" "$log".out "$log".out.rss
done
