#!/usr/bin/env bash
# Runs every libFuzzer target of a sanitizer build for SECONDS each (`make fuzz FUZZ_SECONDS=N`).
# Fails on any crash, leak, timeout, out-of-memory or sanitizer report (libFuzzer exits non-zero
# and keeps the input under BUILD/fuzz-artifacts/<target>/). Prints execs/s and total execs per
# target from libFuzzer's final statistics.
#   usage: scripts/fuzz.sh BUILD_DIR SECONDS [TARGET...]
set -euo pipefail
build=${1:?usage: fuzz.sh BUILD_DIR SECONDS [TARGET...]}
seconds=${2:?usage: fuzz.sh BUILD_DIR SECONDS [TARGET...]}
shift 2
src=$(cd "$(dirname "$0")/.." && pwd)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  # Every target fuzz/CMakeLists.txt builds: the list lives there only.
  for exe in "$build"/fuzz/fuzz_*; do
    [ -f "$exe" ] && [ -x "$exe" ] && targets+=("${exe##*/fuzz_}")
  done
  [ ${#targets[@]} -gt 0 ] || { echo "fuzz: no targets in $build/fuzz (build the 'fuzzers' target of a GPF_SANITIZE clang build)" >&2; exit 2; }
fi

seeds="$build/fuzz-seeds"
rm -rf "$seeds"
python3 "$src/fuzz/make_seeds.py" "$src" "$seeds" >/dev/null

# One target per core at a time (FUZZ_JOBS, default nproc): each still gets SECONDS of its own, and
# CI's two cores finish the whole run in half the time.
jobs_max=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
logs="$build/fuzz-logs"
mkdir -p "$logs"
fuzz_one() {
  local t=$1 bin="$build/fuzz/fuzz_$1" corpus="$build/fuzz-corpus/$1" artifacts="$build/fuzz-artifacts/$1"
  local log="$logs/$1.log" max_len rc=0 runs secs
  mkdir -p "$corpus" "$artifacts" "$seeds/$t"
  local inputs=("$corpus" "$seeds/$t")
  [ -d "$src/tests/fuzz-regressions/$t" ] && inputs+=("$src/tests/fuzz-regressions/$t")
  # Whole logs and snapshots need room; the one-file parsers are fast on small inputs.
  case $t in
    log_scanner | render | explain_log) max_len=131072 ;;
    *) max_len=16384 ;;
  esac
  echo "== fuzz_$t (${seconds}s)"
  # A fixed seed (FUZZ_SEED, default 1): a run that fails in CI fails the same way here.
  "$bin" -seed="${FUZZ_SEED:-1}" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -max_len="$max_len" \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "${inputs[@]}" >"$log" 2>&1 || rc=$?
  # "Done 123456 runs in 20 second(s)" and "stat::number_of_executed_units: 123456".
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
  [ -n "$runs" ] || runs=0
  [ -n "$secs" ] && [ "$secs" -gt 0 ] || secs=$seconds
  printf '%-18s %10s execs/s %12s execs  %ss\n' "$t" "$((runs / secs))" "$runs" "$secs" >"$logs/$t.summary"
  if [ "$rc" -ne 0 ] || grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|fuzz property violated' "$log"; then
    echo failed >"$logs/$t.status"
  else
    echo clean >"$logs/$t.status"
  fi
}

for t in "${targets[@]}"; do
  [ -x "$build/fuzz/fuzz_$t" ] || { echo "fuzz: $build/fuzz/fuzz_$t is missing (build the 'fuzzers' target of a GPF_SANITIZE clang build)" >&2; exit 2; }
  rm -f "$logs/$t.summary" "$logs/$t.status"
done
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
  fuzz_one "$t" &
done
wait

failed=()
summary=()
for t in "${targets[@]}"; do
  summary+=("$(cat "$logs/$t.summary" 2>/dev/null || echo "$t (no result)")")
  [ "$(cat "$logs/$t.status" 2>/dev/null)" = clean ] || failed+=("$t")
done

echo
echo "target             execs/s            total execs  time"
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -ne 0 ]; then
  # The details come last: CI keeps only the tail of a long output.
  for t in "${failed[@]}"; do
    echo
    echo "fuzz_$t FAILED; last lines of $build/fuzz-logs/$t.log:"
    grep -E -A12 'ERROR: |runtime error:|fuzz property violated|^(whole|pieces|chunk)' "$build/fuzz-logs/$t.log" | head -60 | cut -c1-600
    echo "-- tail:"
    tail -15 "$build/fuzz-logs/$t.log" | cut -c1-600
    echo "-- kept input (base64, first 4 KiB): $(ls "$build/fuzz-artifacts/$t" 2>/dev/null | head -3 | tr '\n' ' ')"
    for f in "$build/fuzz-artifacts/$t"/*; do
      [ -f "$f" ] && head -c 4096 "$f" | base64 -w0 && echo
      break
    done
  done >&2
  echo "fuzz: failures in: ${failed[*]} (reproduce: BUILD/fuzz/fuzz_TARGET CRASH_FILE; see docs/reliability.md)" >&2
  exit 1
fi
echo "fuzz: all ${#targets[@]} targets clean"
