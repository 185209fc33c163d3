#!/usr/bin/env bash
# gpu-preflight's metrics through a real node_exporter (ctest label prometheus):
#   node-exporter-test.sh GPU_PREFLIGHT_BINARY SOURCE_DIR
# Starts Debian's prometheus-node-exporter on a free 127.0.0.1 port with only the textfile
# collector, reading a temporary directory; runs contrib/prometheus/gpu-preflight-textfile.sh
# (what the systemd service runs) on fixture snapshots; scrapes /metrics over HTTP and finds the
# series with the values of each check. While a slow check runs, a scrape still serves the
# previous complete file (the binary renames its temporary file into place). Installs the package when
# missing; exits 77 (skipped) when it cannot. Everything it starts is stopped on exit.
set -euo pipefail
bin=$(readlink -f "$1")
src=$(readlink -f "$2")
# shellcheck source-path=SCRIPTDIR source=install.sh
. "$src/tests/prometheus/install.sh"
gpf_need_packages prometheus-node-exporter curl
exporter=/usr/bin/prometheus-node-exporter
[ -x "$exporter" ] || { echo "SKIP: $exporter not found"; exit 77; }

tmp=$(mktemp -d /tmp/gpf-node-exporter-XXXXXX)
textdir=$tmp/textfile
mkdir -p "$textdir"
pid=
writer=
cleanup() {
  local rc=$?
  set +e
  [ -n "$writer" ] && kill "$writer" 2>/dev/null && wait "$writer" 2>/dev/null
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  fi
  [ $rc -ne 0 ] && [ -f "$tmp/exporter.log" ] && tail -n 20 "$tmp/exporter.log"
  rm -rf "$tmp"
  exit $rc
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# a free port: bind port 0, read what the kernel gave, retry if node_exporter loses the race
port=
for _ in 1 2 3 4 5; do
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$exporter" --web.listen-address="127.0.0.1:$port" --collector.disable-defaults \
    --collector.textfile --collector.textfile.directory="$textdir" >"$tmp/exporter.log" 2>&1 &
  pid=$!
  for _ in $(seq 50); do
    curl -fsS "http://127.0.0.1:$port/metrics" >/dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null && curl -fsS "http://127.0.0.1:$port/metrics" >/dev/null 2>&1; then
    break
  fi
  wait "$pid" 2>/dev/null || true
  pid=
done
[ -n "$pid" ] || fail "node_exporter did not start"
echo "node_exporter on 127.0.0.1:$port, textfile directory $textdir"

scrape() { curl -fsS --max-time 5 "http://127.0.0.1:$port/metrics"; }
# has SERIES_REGEX: the scrape holds a line matching it (node_exporter sorts the labels by name)
has() { grep -Eq "$1" "$tmp/scrape" || { grep '^gpu_preflight_' "$tmp/scrape" | head -n 40 >&2; fail "no line matching: $1"; }; }

textfile=$src/contrib/prometheus/gpu-preflight-textfile.sh

# a ready node
rc=0
GPU_PREFLIGHT=$bin "$textfile" "$textdir" --root "$src/tests/fixtures/healthy-4gpu" >/dev/null || rc=$?
[ "$rc" -eq 0 ] || fail "textfile script on healthy-4gpu exited $rc"
[ -f "$textdir/gpu-preflight.prom" ] || fail "no gpu-preflight.prom"
[ "$(find "$textdir" -name 'gpu-preflight.prom.*' | wc -l)" -eq 0 ] || fail "a temporary file was left"
scrape >"$tmp/scrape"
has '^gpu_preflight_ready 1$'
has '^gpu_preflight_verdict\{verdict="pass"\} 1$'
has '^gpu_preflight_gpus\{state="total"\} 4$'
has '^gpu_preflight_gpu_usable\{bus_id="0000:3a:00.0",model="NVIDIA H100 80GB HBM3",uuid="GPU-[0-9a-f-]+"\} 1$'
has '^node_textfile_scrape_error 0$'
grep '^gpu_preflight_' "$tmp/scrape" >"$tmp/healthy-series"
echo "ready node: $(wc -l <"$tmp/healthy-series") gpu_preflight_ series scraped"

# a node that is not ready: exit 1, the file is still written
rc=0
GPU_PREFLIGHT=$bin "$textfile" "$textdir" --root "$src/tests/fixtures/missing-uvm" >/dev/null || rc=$?
[ "$rc" -eq 1 ] || fail "textfile script on missing-uvm exited $rc, not 1"
scrape >"$tmp/scrape"
has '^gpu_preflight_ready 0$'
has '^gpu_preflight_verdict\{verdict="fail"\} 1$'
has '^gpu_preflight_finding\{gpu="",id="devnode.nvidia-uvm-missing",severity="fail"\} 1$'

# a slow check: a scrape while it runs sees the previous complete file and no error; the binary
# (--prom-out) writes a temporary beside it and renames it into place only at the end.
cat >"$tmp/slow-gpu-preflight" <<SLOW
#!/bin/sh
sleep 3
exec "$bin" "\$@"
SLOW
chmod +x "$tmp/slow-gpu-preflight"
GPU_PREFLIGHT=$tmp/slow-gpu-preflight "$textfile" "$textdir" --root "$src/tests/fixtures/healthy-4gpu" >/dev/null &
writer=$!
sleep 1
kill -0 "$writer" 2>/dev/null || fail "the slow check ended before the scrape"
scrape >"$tmp/scrape"
has '^gpu_preflight_ready 0$' # still the previous (missing-uvm) file, whole
has '^gpu_preflight_finding\{gpu="",id="devnode.nvidia-uvm-missing",severity="fail"\} 1$'
has '^node_textfile_scrape_error 0$'
wait "$writer"
writer=
[ "$(find "$textdir" -name 'gpu-preflight.prom.*' | wc -l)" -eq 0 ] || fail "a temporary file was left"
scrape >"$tmp/scrape"
has '^gpu_preflight_ready 1$'
echo "during a slow write the previous file was served; after the rename the new one"

echo "--- scraped series (healthy-4gpu)"
cat "$tmp/healthy-series"
echo "PASS"
