#!/usr/bin/env bash
# Writes gpu-preflight's metrics for node_exporter's textfile collector:
#   gpu-preflight-textfile.sh [DIR [CHECK OPTIONS...]]
# DIR is node_exporter's --collector.textfile.directory (default: $GPU_PREFLIGHT_TEXTFILE_DIR, else
# /var/lib/prometheus/node-exporter, Debian's). It must not be writable by any user but root (and
# node_exporter's own): whoever may write there may replace the file the collector serves.
# The binary writes DIR/gpu-preflight.prom itself (--prom-out): a temporary gpu-preflight.prom.XXXXXX
# created with O_EXCL|O_NOFOLLOW (the collector reads only *.prom), mode 0644 set on its
# descriptor, then renamed over gpu-preflight.prom: a scrape sees the previous file or the new
# one, never half of one. This script, run as root, touches no path in DIR itself (no mktemp, no
# chmod, no mv): a link planted there during the check is never followed.
# Exit: gpu-preflight's status (0 ready, 1 not ready: the file is written either way); on 2 (the
# checker could not run) the previous file stays, and gpu_preflight_last_check_timestamp_seconds
# ages, which the example alert GpuPreflightStale catches. The one-line verdict goes to stdout
# (the journal, under the systemd unit).
set -u
dir=${1:-${GPU_PREFLIGHT_TEXTFILE_DIR:-/var/lib/prometheus/node-exporter}}
[ $# -gt 0 ] && shift
bin=${GPU_PREFLIGHT:-gpu-preflight}

if [ ! -d "$dir" ]; then
  echo "gpu-preflight-textfile: $dir is not a directory" >&2
  exit 2
fi
# Others may write here (and no sticky bit keeps them off root's files): anyone could swap the file
# the collector serves. The write stays safe; the warning names the setting to fix.
if [ -n "$(find "$dir" -maxdepth 0 -perm -0002 ! -perm -1000 2>/dev/null)" ]; then
  echo "gpu-preflight-textfile: warning: $dir is writable by every user; make it writable by root only (chmod o-w $dir)" >&2
fi
"$bin" check --format line --prom-out "$dir/gpu-preflight.prom" "$@"
rc=$?
if [ "$rc" -gt 1 ]; then
  echo "gpu-preflight-textfile: gpu-preflight exited $rc; $dir/gpu-preflight.prom left as it was" >&2
fi
exit "$rc"
