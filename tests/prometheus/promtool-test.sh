#!/usr/bin/env bash
# `--format prometheus` against Prometheus's own checker (ctest label prometheus):
#   promtool-test.sh GPU_PREFLIGHT_BINARY SOURCE_DIR
# Every fixture's output passes `promtool check metrics` (syntax and the naming lint); label values
# with a double quote, a backslash and invalid UTF-8 come out escaped; the example alerting rules
# pass `promtool check rules`, and `promtool test rules` (tests/prometheus/alerts-test.yml) for
# each of them. Installs Debian's prometheus (which ships promtool) when missing;
# exits 77 (skipped) when it cannot.
set -euo pipefail
bin=$(readlink -f "$1")
src=$(readlink -f "$2")
# shellcheck source-path=SCRIPTDIR source=install.sh
. "$src/tests/prometheus/install.sh"
gpf_need_packages prometheus
promtool=$(command -v promtool)

tmp=$(mktemp -d /tmp/gpf-promtool-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

checked=0
for fx in "$src"/tests/fixtures/*/; do
  name=$(basename "$fx")
  rc=0
  "$bin" check --root "$fx" --format prometheus >"$tmp/$name.prom" || rc=$?
  [ "$rc" -le 1 ] || fail "$name: gpu-preflight exited $rc"
  if ! out=$(timeout 30 "$promtool" check metrics <"$tmp/$name.prom" 2>&1); then
    echo "$out" >&2
    fail "$name: promtool check metrics"
  fi
  grep -q '^gpu_preflight_ready [01]$' "$tmp/$name.prom" || fail "$name: no gpu_preflight_ready"
  checked=$((checked + 1))
done
[ "$checked" -ge 20 ] || fail "only $checked fixtures"
echo "promtool check metrics: $checked fixtures pass"

# a GPU model with a quote, a backslash and a byte that is not UTF-8
cp -r "$src/tests/fixtures/healthy-4gpu" "$tmp/odd"
info=$(find "$tmp/odd/proc/driver/nvidia/gpus" -name information | sort | head -n 1)
sed -i 's/^Model:.*/Model: \t NVIDIA "H100" \\ back\xff/' "$info"
"$bin" check --root "$tmp/odd" --format prometheus >"$tmp/odd.prom" || true
timeout 30 "$promtool" check metrics <"$tmp/odd.prom" || fail "escaped labels: promtool check metrics"
grep -F 'model="NVIDIA \"H100\" \\ back' "$tmp/odd.prom" >/dev/null ||
  { grep gpu_usable "$tmp/odd.prom" >&2; fail "the model label is not escaped as expected"; }
echo "escaped label values pass"

# findings: one series per finding, with id, severity and gpu
"$bin" check --root "$src/tests/fixtures/excluded-gpu" --format prometheus >"$tmp/ex.prom" || true
grep -E '^gpu_preflight_finding\{id="gpu.excluded",severity="fail",gpu="0000:[0-9a-f:.]+"\} 1$' "$tmp/ex.prom" >/dev/null ||
  fail "excluded-gpu: no gpu.excluded finding series"
grep -q '^gpu_preflight_verdict{verdict="warn"} 1$' "$tmp/ex.prom" || fail "excluded-gpu: verdict"
grep -q '^gpu_preflight_gpus{state="usable"} 3$' "$tmp/ex.prom" || fail "excluded-gpu: usable GPUs"
# the primary cause: one series naming the finding that explains the verdict, none on a clean pass
grep -Eq '^gpu_preflight_primary_cause\{id="gpu.excluded",gpu="0000:[0-9a-f:.]+",where=""\} 1$' "$tmp/ex.prom" ||
  fail "excluded-gpu: no primary cause series"
[ "$(grep -c '^gpu_preflight_primary_cause' "$tmp/ex.prom")" -eq 1 ] || fail "excluded-gpu: more than one primary cause"
grep -q '^gpu_preflight_primary_cause{id="devnode.nvidia-uvm-missing",gpu="",where=""} 1$' "$tmp/missing-uvm.prom" ||
  fail "missing-uvm: the primary cause is not devnode.nvidia-uvm-missing"
! grep -q '^gpu_preflight_primary_cause' "$tmp/healthy-4gpu.prom" || fail "healthy-4gpu: a primary cause on a pass"
# a multi-GPU hang: its cause is a port, named in `where`
"$bin" check --root "$src/tests/fixtures/topo-acs-p2p-hang" --format prometheus >"$tmp/acs.prom" || true
grep -q '^gpu_preflight_primary_cause{id="cuda.multi-gpu-hung",gpu="",where="ACS 0000:17:00.0"} 1$' "$tmp/acs.prom" ||
  fail "topo-acs-p2p-hang: the primary cause does not name the ACS port"

timeout 30 "$promtool" check rules "$src/contrib/prometheus/gpu-preflight-alerts.yml" ||
  fail "promtool check rules"
# every alert fires on a not-ready node's series and stays quiet on a ready one
cp "$src/contrib/prometheus/gpu-preflight-alerts.yml" "$src/tests/prometheus/alerts-test.yml" "$tmp/"
(cd "$tmp" && timeout 60 "$promtool" test rules alerts-test.yml) || fail "promtool test rules"
# ... and the cases cover every alert of the file
while read -r alert; do
  grep -q "alertname: $alert\$" "$src/tests/prometheus/alerts-test.yml" || fail "no promtool test case for $alert"
done < <(sed -n 's/^ *- alert: *//p' "$src/contrib/prometheus/gpu-preflight-alerts.yml")
echo "PASS"
