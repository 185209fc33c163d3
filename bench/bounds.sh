#!/usr/bin/env bash
# docs/reliability.md's table of bounds, measured: for each row, a snapshot of the healthy-4gpu
# fixture with that one input at or beyond its cap (bench/gen_bounds.py), checked once under GNU
# time (the DKMS tree and the newline-free kernel logs also through `snapshot`, whose output must
# stay under 64 MiB); then summarize on a 16 MiB report. Prints a markdown table (input, seconds, peak RSS) to
# paste into the table, and fails when a run crashes, gives no verdict or exceeds 128 MiB.
# Usage: bench/bounds.sh BUILD_DIR
set -euo pipefail
build=${1:-build}
bin=$(cd "$build" && pwd)/gpu-preflight
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
bench_need python3 /usr/bin/time
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
limit_kib=$((128 << 10))
failed=0

# measure WHAT CMD...: one run; its exit status must be 0 or 1 (a verdict; a snapshot's 0)
measure() {
  local what=$1 rc=0
  shift
  /usr/bin/time -f '%e %M' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || rc=$?
  read -r secs kib < <(tail -n 1 "$tmp/time") # after "Command exited with non-zero status 1"
  echo "| $what | $secs s, $((kib / 1024)) MB |"
  if [ "$rc" -gt 1 ]; then
    echo "bounds: FAIL: $what: exit $rc: $(tail -n 2 "$tmp/err")" >&2
    failed=1
  fi
  if [ "$kib" -gt "$limit_kib" ]; then
    echo "bounds: FAIL: $what: peak RSS $kib KiB is above 128 MiB" >&2
    failed=1
  fi
}

echo "| input | cost (one run: wall time, peak RSS) |"
echo "|---|---|"
measure "the plain fixture" "$bin" --root "$here/../tests/fixtures/healthy-4gpu" --format json
while IFS=$'\t' read -r name dir what; do
  measure "$what" "$bin" --root "$dir" --format json
  case $name in
  dkms-tree | newline-free-log | newline-free-run)
    # the snapshot of it too: linear in the input, bounded in memory and in what it writes
    measure "\`snapshot\` of it" "$bin" snapshot --root "$dir" -o "$tmp/snap-$name"
    # what it wrote: the DKMS tree's 16 versions and placeholders, under 64 MiB; a log, no more
    # than the log itself (a run without a blank: 1 MiB of it)
    written_kib=$(du -sk "$tmp/snap-$name" | cut -f1)
    allowed_kib=$((64 << 10))
    [ "$name" = newline-free-log ] && allowed_kib=$(($(du -sk "$dir/dmesg.txt" | cut -f1) + (8 << 10)))
    echo "| (the snapshot of $name wrote $((written_kib / 1024)) MB) | |"
    if [ "$written_kib" -gt "$allowed_kib" ]; then
      echo "bounds: FAIL: snapshot of $name wrote $written_kib KiB, more than $allowed_kib KiB" >&2
      failed=1
    fi
    rm -rf "$tmp/snap-$name"
    ;;
  esac
  rm -rf "$dir"
done < <(python3 "$here/gen_bounds.py" "$tmp/cases" "$here/../tests/fixtures")

# --rules: a file of 4 MiB is refused (exit 2) after reading one byte past its 1 MiB cap
python3 -c 'import json; print(json.dumps({"schema": 1, "rules": [], "pad": "x" * (4 << 20)}))' >"$tmp/rules.json"
rc=0
/usr/bin/time -f '%e %M' -o "$tmp/time" "$bin" --root "$here/../tests/fixtures/healthy-4gpu" --rules "$tmp/rules.json" \
  --format json >/dev/null 2>"$tmp/err" || rc=$?
read -r secs kib < <(tail -n 1 "$tmp/time")
echo "| \`--rules FILE\` of 4 MiB (cap 1 MiB): refused, exit $rc | $secs s, $((kib / 1024)) MB |"
[ "$rc" -eq 2 ] || { echo "bounds: FAIL: --rules of 4 MiB: exit $rc, not 2" >&2; failed=1; }

# summarize: one report whose facts carry 15 MiB of members it never reads
"$bin" --root "$here/../tests/fixtures/healthy-4gpu" --format json >"$tmp/report.json" || [ $? -le 1 ]
python3 - "$tmp/report.json" <<'PY'
import json, sys
path = sys.argv[1]
r = json.load(open(path))
one = {f"k{k}": k % 10 for k in range(100)}
size = len(json.dumps(one)) + 2
r["facts"]["padding"] = [one] * ((15 << 20) // size)
json.dump(r, open(path, "w"))
PY
measure "\`summarize\`, one 16 MiB report (1.7 M members it does not read)" "$bin" summarize --format json "$tmp/report.json"
exit "$failed"
