#!/usr/bin/env bash
# Validates the JSON report of every fixture snapshot against docs/report.schema.json, and
# explain-log's JSON against docs/explain-log.schema.json, with a real JSON Schema validator,
# ajv-cli (draft 2020-12, strict mode), as a CI dashboard would:
#   validate-with-ajv.sh GPU_PREFLIGHT_BINARY SOURCE_DIR NPM_PREFIX
# ajv-cli is installed once into NPM_PREFIX (inside the build directory, never globally). Exits 77
# (ctest: skipped) only when npm is not installed.
set -euo pipefail

k_skip=77
k_ajv_cli="ajv-cli@5.0.0"
bin=$(readlink -f "$1")
src=$(readlink -f "$2")
prefix=$3
schema=$src/docs/report.schema.json
ajv=$prefix/node_modules/.bin/ajv

if [ ! -x "$ajv" ]; then
  if ! command -v npm >/dev/null; then
    echo "SKIP: npm is not installed, so ajv-cli cannot be (apt-get install npm)"
    exit $k_skip
  fi
  mkdir -p "$prefix"
  echo "installing $k_ajv_cli into $prefix"
  timeout 300 npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "$k_ajv_cli"
fi

tmp=$(mktemp -d /tmp/gpf-ajv-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/reports" "$tmp/broken"

# Every fixture, plus option combinations that change the report's shape (--strict exit codes,
# --min-gpus failures, the file written by --json-out).
count=0
for dir in "$src"/tests/fixtures/*/; do
  name=$(basename "$dir")
  rc=0
  "$bin" check --root "$dir" --format json >"$tmp/reports/$name.json" || rc=$?
  [ $rc -le 1 ] || { echo "FAIL: gpu-preflight exited $rc on $name" >&2; exit 1; }
  rc=0
  "$bin" check --root "$dir" --strict --min-gpus 8 --format line --json-out "$tmp/reports/$name-strict.json" >/dev/null || rc=$?
  [ $rc -le 1 ] || { echo "FAIL: gpu-preflight --strict --min-gpus 8 exited $rc on $name" >&2; exit 1; }
  count=$((count + 1))
done
[ $count -ge 5 ] || { echo "FAIL: only $count fixtures found" >&2; exit 1; }

"$ajv" compile --spec=draft2020 --strict=true -s "$schema"
"$ajv" validate --spec=draft2020 --strict=true --all-errors -s "$schema" -d "$tmp/reports/*.json"

# The validator must reject what the schema forbids, or the passes above prove nothing.
good=$tmp/reports/missing-uvm.json
sed 's/"verdict": "fail"/"verdict": "broken"/' "$good" >"$tmp/broken/bad-verdict.json"
sed '0,/"schema_version": 1,/s//"schema_version": 1, "unexpected": true,/' "$good" >"$tmp/broken/extra-key.json"
sed 's/"severity": "fail"/"severity": "fatal"/' "$good" >"$tmp/broken/bad-severity.json"
sed '0,/"exit_code": 1,/s///' "$good" >"$tmp/broken/no-exit-code.json"
for f in "$tmp"/broken/*.json; do
  cmp -s "$f" "$good" && { echo "FAIL: $(basename "$f") was not changed; the test's edit no longer applies" >&2; exit 1; }
  if "$ajv" validate --spec=draft2020 --strict=true -s "$schema" -d "$f" >/dev/null 2>&1; then
    echo "FAIL: ajv accepted $(basename "$f"), which breaks the schema" >&2
    exit 1
  fi
  echo "$(basename "$f") rejected, as it must be"
done
echo "PASS: $((count * 2)) reports valid against docs/report.schema.json (ajv, draft 2020-12, strict)"

# explain-log's JSON against docs/explain-log.schema.json: every excerpt of tests/data/explain-log,
# and --check on the example snapshots (candidates with states and findings).
explain_schema=$src/docs/explain-log.schema.json
mkdir "$tmp/explain"
logs=0
for log in "$src"/tests/data/explain-log/*.log; do
  name=$(basename "$log" .log)
  rc=0
  "$bin" explain-log "$log" --format json >"$tmp/explain/$name.json" || rc=$?
  [ $rc -le 1 ] || { echo "FAIL: explain-log exited $rc on $name" >&2; exit 1; }
  for ex in broken-node healthy-8gpu; do
    rc=0
    "$bin" explain-log "$log" --check --root "$src/docs/examples/$ex" --no-cuda --no-nvml --format json \
      >"$tmp/explain/$name-$ex.json" || rc=$?
    [ $rc -le 1 ] || { echo "FAIL: explain-log --check exited $rc on $name ($ex)" >&2; exit 1; }
  done
  logs=$((logs + 1))
done
[ $logs -ge 10 ] || { echo "FAIL: only $logs explain-log excerpts found" >&2; exit 1; }
"$ajv" compile --spec=draft2020 --strict=true -s "$explain_schema"
"$ajv" validate --spec=draft2020 --strict=true --all-errors -s "$explain_schema" -d "$tmp/explain/*.json"
good=$tmp/explain/cuda-unknown-error-uvm-broken-node.json
sed 's/"state": "confirmed"/"state": "maybe"/' "$good" >"$tmp/broken/explain-bad-state.json"
cmp -s "$tmp/broken/explain-bad-state.json" "$good" && { echo "FAIL: the explain-log edit no longer applies" >&2; exit 1; }
if "$ajv" validate --spec=draft2020 --strict=true -s "$explain_schema" -d "$tmp/broken/explain-bad-state.json" >/dev/null 2>&1; then
  echo "FAIL: ajv accepted explain-bad-state.json, which breaks the schema" >&2
  exit 1
fi
echo "PASS: $((logs * 3)) explain-log results valid against docs/explain-log.schema.json (ajv, draft 2020-12, strict)"
