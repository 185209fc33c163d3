#!/usr/bin/env bash
# `make run`: the checker on this host, then on the shipped example snapshots. Prints each run's
# exit code; fails only when the checker itself could not run (exit 2 or a crash).
set -u
bin=${1:-build/gpu-preflight}
here=$(cd "$(dirname "$0")/.." && pwd)
status=0
run() {
  echo "\$ gpu-preflight $*"
  "$bin" "$@"
  local rc=$?
  echo "[exit code $rc]"
  echo
  [ $rc -le 1 ] || status=1
}
run check
for ex in "$here"/docs/examples/*/; do
  run check --root "$ex"
done
exit $status
