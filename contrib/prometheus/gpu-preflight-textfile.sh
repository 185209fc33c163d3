#!/usr/bin/env bash
# Writes gpu-preflight's metrics for node_exporter's textfile collector:
#   gpu-preflight-textfile.sh [DIR [CHECK OPTIONS...]]
# DIR is node_exporter's --collector.textfile.directory (default: $GPU_PREFLIGHT_TEXTFILE_DIR, else
# /var/lib/prometheus/node-exporter, Debian's). The metrics are written to a temporary file in DIR
# whose name does not end in .prom (the collector reads only *.prom), then renamed over
# gpu-preflight.prom: a scrape sees the previous file or the new one, never half of one.
# Exit: gpu-preflight's status (0 ready, 1 not ready: the file is written either way); on 2 (the
# checker could not run) the previous file stays, and gpu_preflight_last_check_timestamp_seconds
# ages, which the example alert GpuPreflightStale catches.
set -u
dir=${1:-${GPU_PREFLIGHT_TEXTFILE_DIR:-/var/lib/prometheus/node-exporter}}
[ $# -gt 0 ] && shift
bin=${GPU_PREFLIGHT:-gpu-preflight}

if [ ! -d "$dir" ]; then
  echo "gpu-preflight-textfile: $dir is not a directory" >&2
  exit 2
fi
tmp=$(mktemp "$dir/.gpu-preflight.prom.XXXXXX") || exit 2
trap 'rm -f "$tmp"' EXIT
"$bin" check --format prometheus "$@" >"$tmp"
rc=$?
if [ "$rc" -gt 1 ]; then
  echo "gpu-preflight-textfile: gpu-preflight exited $rc; $dir/gpu-preflight.prom left as it was" >&2
  exit "$rc"
fi
chmod 0644 "$tmp"
mv -f "$tmp" "$dir/gpu-preflight.prom" || exit 2
trap - EXIT
exit "$rc"
