#!/usr/bin/env bash
# The Kubernetes manifests of contrib/kubernetes, without a cluster (ctest label contrib):
#   manifests-test.sh GPU_PREFLIGHT_BINARY SOURCE_DIR
# tests/kubernetes/check-manifests.py checks their structure and runs every gpu-preflight command
# line in them with the real binary; then each of a list of broken copies must be caught, with the
# problem named. When kubectl is installed, it decodes each YAML file too (`kubectl label --local`:
# offline, so no schema). Needs Python's yaml module: installs Debian's python3-yaml when missing;
# exits 77 (skipped) when it cannot.
set -euo pipefail
bin=$(readlink -f "$1")
src=$(readlink -f "$2")
here=$(cd "$(dirname "$0")" && pwd)

python=
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import yaml' 2>/dev/null; then python=$p; break; fi
done
if [ -z "$python" ]; then
  # shellcheck source-path=SCRIPTDIR source=../prometheus/install.sh
  . "$src/tests/prometheus/install.sh"
  gpf_need_packages python3-yaml
  python=/usr/bin/python3
  "$python" -c 'import yaml' || { echo "SKIP: python3-yaml installed, but $python cannot import yaml"; exit 77; }
fi

tmp=$(mktemp -d /tmp/gpf-k8s-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

timeout 300 "$python" "$here/check-manifests.py" "$bin" "$src" || fail "the manifests (above)"

if command -v kubectl >/dev/null; then
  for f in "$src"/contrib/kubernetes/*.yaml; do
    timeout 30 kubectl label --local -f "$f" checked=yes -o name >/dev/null ||
      fail "kubectl cannot decode $(basename "$f")"
  done
  echo "kubectl decodes every YAML file"
else
  echo "kubectl not installed: the YAML files are not decoded by it"
fi

# Broken copies: file%sed expression%what the check must say. Each must fail, naming its problem.
mutations=(
  "gpu-preflight-job.yaml%0,/- name: host-log$/s//- name: host-logs/%mounts host-logs, which is not a volume"
  "gpu-preflight-job.yaml%0,/readOnly: true/s/readOnly: true/readOnly: false/%is not readOnly: true"
  "gpu-preflight-job.yaml%s/- --min-gpus/- --min-gpu/%exits 2"
  "gpu-preflight-job.yaml%s/automountServiceAccountToken: false/automountServiceAccountToken: true/%with an API token"
  "gpu-preflight-job.yaml%s|apiVersion: batch/v1|apiVersion: batch/v2|%unknown apiVersion/kind batch/v2/Job"
  "gpu-preflight-job.yaml%s|- key: readiness.k8s.io/gpu-preflight|- key: readiness.k8s.io/other|%does not tolerate readiness.k8s.io/gpu-preflight"
  "gpu-preflight-init-container.yaml%0,/nvidia.com\\/gpu: 8/s/nvidia.com\\/gpu: 8/nvidia.com\\/gpu: 4/%different GPU counts"
  "gpu-preflight-init-container.yaml%s|path: /usr/bin/gpu-preflight|path: /usr/local/bin/gpu-preflight|%not a mount of the host's /usr/bin/gpu-preflight"
  "node-readiness-rule.yaml%s/- type: GPUNotReady/- type: GPUNotReadyX/%GPUNotReadyX is set by no NPD configuration"
  "node-readiness-rule.yaml%s/requiredStatus: \"False\"/requiredStatus: False/%not one of the strings"
  "node-readiness-rule.yaml%s/enforcementMode:/enforcement:/%spec.enforcement is not a field"
  "node-readiness-rule.yaml%s|key: readiness.k8s.io/gpu-preflight|key: example.com/gpu-preflight|%is not readiness.k8s.io/NAME"
  "node-readiness-rule.yaml%s/gpu.present: \"true\"/gpu.product: \"H100\"/%nodes without NPD would stay tainted"
  "npd-gpu-preflight.json%s/, \"--strict\"//%no rule of its own (with --strict)"
  "npd-gpu-preflight.json%s/\"--skip-busy\"\\]/\"--skip-busy\", \"--format\", \"json\"]/%not one line within max_output_length"
  "npd-gpu-preflight-daemonset.yaml%s|/config/gpu-preflight.json|/config/npd.json|%loads /config/npd.json"
  "gpu-preflight-device-taints%s/effect, severity = \"NoSchedule\"/effect, severity = \"PreferNoSchedule\"/%taint effect 'PreferNoSchedule' is not one of"
  "gpu-preflight-device-taints%s/return f\"gpu-{minor}\"/return f\"nvidia{minor}\"/%tainted {'nvidia3': 'NoSchedule'}, expected {'gpu-3': 'NoSchedule'}"
  "gpu-preflight-device-taints%s/return f\"gpu-preflight.{base}.{device}\"/return f\"GPU {device}\"/%is not a DNS subdomain"
  "gpu-preflight-device-taints%s/-{gi\['profile_id'\]}-{gi\['placement_start'\]}/-{gi['placement_start']}-{gi['profile_id']}/%expected {'gpu-1-mig-2g20gb-14-0'"
  "gpu-preflight-device-taints%s/if nvml\[\"mig_current\"\] != 1:/if True:/%expected {'gpu-1-mig-2g20gb-14-0'"
  "gpu-preflight-device-taints%s/    if not isinstance(instances, list):/    if not isinstance(instances, list):\n        return [gpu_device(minor)]/%exited 0 on a bad input"
)
for m in "${mutations[@]}"; do
  IFS='%' read -r file expr want <<<"$m"
  copy=$tmp/src
  rm -rf "$copy"
  mkdir -p "$copy/contrib" "$copy/docs/integrations" "$copy/tests/fixtures"
  cp -r "$src/contrib/kubernetes" "$copy/contrib/"
  cp "$src/docs/integrations/kubernetes.md" "$copy/docs/integrations/"
  ln -s "$src/docs/examples" "$copy/docs/examples"
  for fx in excluded-gpu log-xid79-one-of-8 compat-cuda124-b200 healthy-4gpu nvml-mig-left-out; do
    ln -s "$src/tests/fixtures/$fx" "$copy/tests/fixtures/$fx"
  done
  sed -i "$expr" "$copy/contrib/kubernetes/$file"
  ! cmp -s "$copy/contrib/kubernetes/$file" "$src/contrib/kubernetes/$file" || fail "mutation changed nothing: $file $expr"
  rc=0
  out=$(timeout 300 "$python" "$here/check-manifests.py" "$bin" "$copy" 2>&1) || rc=$?
  [ "$rc" -eq 1 ] || { echo "$out" >&2; fail "$file with $expr: check-manifests.py exited $rc, not 1"; }
  grep -qF -- "$want" <<<"$out" || { echo "$out" >&2; fail "$file with $expr: no problem saying '$want'"; }
done
echo "${#mutations[@]} broken copies caught"
echo PASS
