#!/usr/bin/env bash
# `summarize` on a large fleet: time and peak memory (GNU time) for
#   10,000 small reports as JSON lines on stdin, the same as 10,000 files in a directory,
#   1,000 reports (to compare: memory grows with the nodes, a few hundred bytes each, never with
#   the reports' size), and a 100 MiB file that is one line of junk (read in capped pieces).
# Reports are copies of a real report (tests/fixtures/excluded-gpu) with host and checked_at
# varied. Fails when a peak is above 128 MiB (GPF_BENCH_FLEET_RSS_LIMIT_KIB overrides).
#   usage: bench/fleet.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: bench/fleet.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "$build" && pwd)/gpu-preflight
limit_kib=${GPF_BENCH_FLEET_RSS_LIMIT_KIB:-131072}
[ -x "$bin" ] || { echo "fleet: $bin not built" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "fleet: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpf-bench-fleet.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$bin" check --root "$here/../tests/fixtures/excluded-gpu" --format json >"$tmp/one.json" || true
python3 - "$tmp" <<'PY'
import json, os, sys
tmp = sys.argv[1]
one = json.load(open(os.path.join(tmp, "one.json")))
os.makedirs(os.path.join(tmp, "dir"))
for n, name in ((10000, "10k.jsonl"), (1000, "1k.jsonl")):
    with open(os.path.join(tmp, name), "w") as out:
        for i in range(n):
            one["host"] = f"node-{i:05d}"
            one["checked_at"] = f"2026-12-01T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}Z"
            line = json.dumps(one, separators=(",", ":"))
            out.write(line + "\n")
            if n == 10000:
                with open(os.path.join(tmp, "dir", f"node-{i:05d}.json"), "w") as f:
                    f.write(line)
PY
head -c $((100 << 20)) /dev/zero | tr '\0' 'x' >"$tmp/junk.json"

# measure NAME EXPECTED_EXIT CMD...: prints "NAME seconds peak_KiB" and checks the peak
measure() {
  local name=$1 want=$2
  shift 2
  local rc=0
  /usr/bin/time -f '%e %M' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || rc=$?
  read -r secs kib < <(tail -n 1 "$tmp/time") # GNU time first says why a command failed
  printf '%-28s %6ss  peak %6d KiB  exit %d\n' "$name" "$secs" "$kib" "$rc"
  [ "$rc" -eq "$want" ] || { echo "fleet: $name exited $rc, expected $want" >&2; cat "$tmp/err" >&2; exit 1; }
  [ "$kib" -le "$limit_kib" ] || { echo "fleet: $name peak $kib KiB above $limit_kib KiB" >&2; exit 1; }
}
# shellcheck disable=SC2016 # $0 and $1 are the inner shell's
measure "1,000 reports (stdin)" 0 sh -c '"$0" summarize <"$1"' "$bin" "$tmp/1k.jsonl"
# shellcheck disable=SC2016
measure "10,000 reports (stdin)" 0 sh -c '"$0" summarize <"$1"' "$bin" "$tmp/10k.jsonl"
measure "10,000 report files" 0 "$bin" summarize "$tmp/dir"
# shellcheck disable=SC2016
measure "10,000 reports, JSON" 0 sh -c '"$0" summarize --format json <"$1"' "$bin" "$tmp/10k.jsonl"
measure "100 MiB one-line junk" 2 "$bin" summarize "$tmp/junk.json"
"$bin" summarize <"$tmp/10k.jsonl" | head -n 4
