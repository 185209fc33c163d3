#!/usr/bin/env bash
# Runs gpu-preflight on a set of Slurm nodes through srun (one task per node, under a time limit),
# collects each node's JSON report and summarises them with `gpu-preflight summarize`.
#
#   fleet-check.sh [SRUN OPTIONS...] [-- CHECK OPTIONS...]
#   fleet-check.sh -N 16 -p gpu                   # 16 nodes of partition gpu
#   fleet-check.sh -w 'gpu[001-032]' -- --min-gpus 8
#
# SRUN OPTIONS select the nodes (-N, -w, -p, -A, --reservation, ...); --ntasks-per-node=1, the
# time limit and --label are added here. CHECK OPTIONS go to `gpu-preflight check`.
# Environment:
#   GPU_PREFLIGHT            the binary, on the nodes and here (default: gpu-preflight on PATH)
#   GPU_PREFLIGHT_FLEET_DIR  keep the reports here, one file per task (default: a temporary
#                            directory, removed at the end)
#   GPU_PREFLIGHT_FLEET_TIME the srun time limit in minutes (default 2)
#   GPU_PREFLIGHT_SUMMARY    summarize's --format: text (default) or json
#   SRUN                     the srun to call (default: srun on PATH)
# Exit: summarize's status: 0 every node ready, 1 some node not ready, 2 a report missing or
# unreadable: a node whose task started but wrote no report (the checker missing there, killed at
# the time limit, crashed) is named on stderr, and so is a task srun could not start.
set -u

bin=${GPU_PREFLIGHT:-gpu-preflight}
srun=${SRUN:-srun}
minutes=${GPU_PREFLIGHT_FLEET_TIME:-2}
format=${GPU_PREFLIGHT_SUMMARY:-text}

srun_args=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  srun_args+=("$1")
  shift
done
[ $# -gt 0 ] && shift # the "--"
check_args=("$@")

if [ -n "${GPU_PREFLIGHT_FLEET_DIR:-}" ]; then
  dir=$GPU_PREFLIGHT_FLEET_DIR
  mkdir -p "$dir" || exit 2
else
  dir=$(mktemp -d "${TMPDIR:-/tmp}/gpu-preflight-fleet-XXXXXX") || exit 2
  trap 'rm -rf "$dir"' EXIT
fi

# --label prefixes every output line with its task number ("  3: {"), which puts the reports of
# the nodes, interleaved on srun's standard output, back together: one file per task. Each task
# first prints its node's name (a "#node" line, kept in task-N.node), so that a node whose checker
# printed nothing is still known by name.
# shellcheck disable=SC2016 # $0, $@ and $(uname -n) are the task's, expanded on the node
"$srun" --ntasks-per-node=1 --time="$minutes" --label --kill-on-bad-exit=0 "${srun_args[@]}" \
  sh -c 'echo "#node $(uname -n)"; exec "$0" "$@"' "$bin" check --format json "${check_args[@]}" |
  awk -v dir="$dir" '
    match($0, /^ *[0-9]+: /) {
      task = substr($0, 1, RLENGTH); gsub(/[ :]/, "", task)
      line = substr($0, RLENGTH + 1)
      if (line ~ /^#node /) { print substr(line, 7) > (dir "/task-" task ".node"); next }
      print line > (dir "/task-" task ".json")
      next
    }
    { print "fleet-check: unlabelled output: " $0 > "/dev/stderr" }'
status=("${PIPESTATUS[@]}")
# srun exits non-zero whenever a node is not ready (the check exits 1): not an error here.
if [ "${status[0]}" -gt 1 ]; then
  echo "fleet-check: srun exited ${status[0]}; nodes whose task did not finish have no report" >&2
fi
shopt -s nullglob
silent=0
for started in "$dir"/task-*.node; do
  task=${started%.node}
  if [ ! -s "$task.json" ]; then
    echo "fleet-check: node $(cat "$started") (${task##*/}) returned no report" >&2
    silent=$((silent + 1))
  fi
done
reports=("$dir"/task-*.json)
if [ ${#reports[@]} -eq 0 ]; then
  echo "fleet-check: no report came back (srun exited ${status[0]})" >&2
  exit 2
fi
rc=0
"$bin" summarize --format "$format" "$dir" || rc=$?
if [ "$silent" -gt 0 ] && [ "$rc" -lt 2 ]; then
  rc=2
fi
exit "$rc"
