#!/usr/bin/env bash
# Builds an example fleet for docs/fleet.md from the fixture snapshots: 24 nodes (copies given a
# host name; 16 of them with a recorded CUDA result, node-07 slow to create its CUDA contexts), a
# node reported twice, two reports without a host. Writes the snapshots and the JSON reports:
#   scripts/fleet-example.sh GPU_PREFLIGHT_BINARY OUT_DIR FAKE_LIBCUDA
# (FAKE_LIBCUDA: the test build's tests/fake_cuda/libcuda.so.1, run once to record a CUDA result.)
set -euo pipefail
bin=$(readlink -f "$1")
out=$2
fake=$(readlink -f "$3")
src=$(cd "$(dirname "$0")/.." && pwd)
fx=$src/tests/fixtures
mkdir -p "$out/snapshots" "$out/reports"
FAKE_CUDA_GPUS=4 "$bin" check --root "$fx/cuda-4gpu" --libcuda "$fake" --format json >"$out/live.json"

# node HOST FIXTURE [CTX_MS]: a snapshot of FIXTURE named HOST, and its report
node() {
  local host=$1 fixture=$2 ctx=${3:-}
  cp -r "$fx/$fixture" "$out/snapshots/$host"
  echo "$host" >"$out/snapshots/$host/proc/sys/kernel/hostname"
  if [ -n "$ctx" ]; then
    python3 - "$out/live.json" "$ctx" >"$out/snapshots/$host/cuda.json" <<'PY'
import json, sys
cuda = json.load(open(sys.argv[1]))["facts"]["cuda"]
for d in cuda["devices"]:
    for s in d["steps"]:
        s["duration_ms"] = float(sys.argv[2]) if s["name"] == "primary_context" else 1.0
print(json.dumps(cuda, indent=2))
PY
  fi
  "$bin" check --root "$out/snapshots/$host" --format json >"$out/reports/$host.json" || true
}
for i in $(seq 1 16); do
  h=$(printf 'node-%02d' "$i")
  if [ "$i" -eq 7 ]; then node "$h" cuda-4gpu 900; else node "$h" cuda-4gpu "$(python3 -c "print(40 + $i * 0.5)")"; fi
done
node node-17 missing-uvm
node node-18 excluded-gpu
node node-19 nouveau
node node-20 compat-cuda124-driver535
node node-21 healthy-4gpu
# node-21 an hour earlier, when it failed: superseded by the report above
python3 - "$out/reports/node-21.json" >"$out/reports/node-21-old.json" <<'PY'
import json, sys, datetime
r = json.load(open(sys.argv[1]))
t = datetime.datetime.strptime(r["checked_at"], "%Y-%m-%dT%H:%M:%SZ") - datetime.timedelta(hours=1)
r["checked_at"] = t.strftime("%Y-%m-%dT%H:%M:%SZ")
r["verdict"], r["exit_code"] = "fail", 1
print(json.dumps(r, indent=2))
PY
node node-22 healthy-4gpu
node node-23 missing-gpu-node
node node-24 old-kernel-4gpu
"$bin" check --root "$fx/healthy-4gpu" --format json >"$out/reports/lab-a.json" || true
"$bin" check --root "$fx/healthy-4gpu" --format json >"$out/reports/lab-b.json" || true
