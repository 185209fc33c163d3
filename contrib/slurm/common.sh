# shellcheck shell=bash
# Shared by healthcheck.sh and prolog.sh (sourced, not run): settings, and one run of the checker.
#
# Slurm starts both scripts with an almost empty environment, so the settings live in a shell
# fragment, /etc/default/gpu-preflight (or the file named by GPU_PREFLIGHT_CONFIG); a variable
# set there wins over the same variable in the environment.
#   GPU_PREFLIGHT               the binary (default: gpu-preflight on PATH)
#   GPU_PREFLIGHT_ARGS          extra check options, split on blanks (never glob-expanded), e.g.
#                               "--min-gpus 8 --strict"
#   GPU_PREFLIGHT_LOG_DIR       where the JSON reports go (default /var/log/gpu-preflight)
#   GPU_PREFLIGHT_CUDA_TIMEOUT  deadline of the CUDA probe in seconds (default 20); lowered to fit
#                               the budget a smaller GPU_PREFLIGHT_TIMEOUT gives, so that CUDA
#                               is never left out for the budget
#   GPU_PREFLIGHT_TIMEOUT       hard limit on the whole check in seconds (default 35; Slurm kills a
#                               HealthCheckProgram after 60, and the script's worst case is this
#                               plus 18 s: --help 3+1, SIGKILL 2, two scontrol calls 5+1 each);
#                               a whole number gives the checker --budget of 5 s less
#   GPU_PREFLIGHT_ROOT          judge this snapshot directory instead of the host (--root; tests)
#   GPU_PREFLIGHT_ERROR_BLOCKS  1: a checker error (exit 2, timeout) counts as not ready; default
#                               0, so a broken checker never drains a fleet
#   GPU_PREFLIGHT_NODE          the Slurm node name (default $SLURMD_NODENAME, else hostname -s)
#   GPU_PREFLIGHT_PROLOG_DRAIN  0: the Prolog only exits 1 and Slurm drains with "Prolog error";
#                               default 1: the Prolog drains first with the gpu-preflight reason,
#                               which Slurm keeps and the health check may later resume
#   SCONTROL                    the scontrol to call (default: scontrol on PATH)

gpf_config=${GPU_PREFLIGHT_CONFIG:-/etc/default/gpu-preflight}
if [ -r "$gpf_config" ]; then
  # shellcheck source=/dev/null
  . "$gpf_config"
fi
# Slurm may give no PATH at all; bash's built-in default lacks the sbin directories.
PATH=${PATH:+$PATH:}/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

GPF_PREFIX="gpu-preflight:"
gpf_bin=${GPU_PREFLIGHT:-gpu-preflight}
gpf_log_dir=${GPU_PREFLIGHT_LOG_DIR:-/var/log/gpu-preflight}
gpf_node=${GPU_PREFLIGHT_NODE:-${SLURMD_NODENAME:-$(hostname -s)}}
gpf_scontrol=${SCONTROL:-scontrol}
# Seconds of the budget kept for what runs besides the CUDA stage (the file probes before it, the
# rules and the report after it): the CUDA deadline is at most --budget less this.
GPF_STAGE_MARGIN_S=3

# gpf_run LOG_NAME: runs the check once under a hard time limit, the JSON report going to
# $gpf_log_dir/LOG_NAME. Sets gpf_rc (0 ready, 1 not ready, 2 checker error or timeout) and
# gpf_line (the --format line summary, or why the checker failed).
gpf_run() {
  local log="$gpf_log_dir/$1"
  local -a args=(check --format line)
  if mkdir -p "$gpf_log_dir" 2>/dev/null && [ -w "$gpf_log_dir" ]; then
    args+=(--json-out "$log")
  else
    echo "gpu-preflight: warning: cannot write to $gpf_log_dir; no JSON report kept" >&2
  fi
  if [ -n "${GPU_PREFLIGHT_ROOT:-}" ]; then
    args+=(--root "$GPU_PREFLIGHT_ROOT")
  fi
  # Older builds lack the CUDA probe's deadline option and --skip-busy; asking --help costs a few
  # milliseconds. --skip-busy: no CUDA context is made on a node where a job holds a GPU.
  local help
  help=$(timeout -k 1 3 "$gpf_bin" --help 2>/dev/null)
  # --budget: the checker leaves out a stage that cannot finish (reported not checked) instead of
  # being killed by the hard limit below with no verdict; 5 s short of that limit.
  local limit=${GPU_PREFLIGHT_TIMEOUT:-35} budget=
  if grep -q -- '--budget' <<<"$help" && [[ $limit =~ ^[0-9]+$ ]] && [ "$limit" -gt 10 ]; then
    budget=$((limit - 5))
  fi
  # The CUDA deadline is derived from that limit: it must fit the budget with the probes before it
  # (GPF_STAGE_MARGIN_S), or the checker leaves CUDA out and a node whose cuInit hangs would pass.
  # GPU_PREFLIGHT_CUDA_TIMEOUT (default 20) is the most it may be; a smaller limit lowers it.
  if grep -q -- '--cuda-timeout' <<<"$help"; then
    local cuda=${GPU_PREFLIGHT_CUDA_TIMEOUT:-20} room
    if [[ $cuda =~ ^[0-9]+$ ]] && [[ $limit =~ ^[0-9]+$ ]]; then
      room=$(( ${budget:-$limit} - GPF_STAGE_MARGIN_S ))
      [ "$room" -lt 1 ] && room=1
      if [ "$cuda" -gt "$room" ]; then
        echo "gpu-preflight: GPU_PREFLIGHT_TIMEOUT=$limit leaves the CUDA stage ${room} s (not ${cuda} s)" >&2
        cuda=$room
      fi
    fi
    args+=(--cuda-timeout "$cuda")
  fi
  if grep -q -- '--skip-busy' <<<"$help"; then
    args+=(--skip-busy)
  fi
  if [ -n "$budget" ]; then
    args+=(--budget "$budget")
  fi
  # a list of options: split on blanks, but a '*' stays a '*' (read does not glob)
  local -a extra=()
  read -r -a extra <<<"${GPU_PREFLIGHT_ARGS:-}"
  args+=("${extra[@]}")
  gpf_line=$(timeout -k 2 "${GPU_PREFLIGHT_TIMEOUT:-35}" "$gpf_bin" "${args[@]}")
  gpf_rc=$?
  case $gpf_rc in
    0 | 1) ;;
    124 | 137) gpf_rc=2 gpf_line="ERROR checker timed out after ${GPU_PREFLIGHT_TIMEOUT:-35} s" ;;
    126 | 127) gpf_rc=2 gpf_line="ERROR cannot run $gpf_bin" ;;
    *) gpf_line="ERROR checker failed (exit $gpf_rc)" gpf_rc=2 ;;
  esac
  if [ "$gpf_rc" -eq 2 ] && [ "${GPU_PREFLIGHT_ERROR_BLOCKS:-0}" = 1 ]; then
    gpf_rc=1
  fi
}

# gpf_read_node: sets gpf_state (e.g. IDLE+DRAIN) and gpf_reason (the reason without its
# "[user@time]" stamp) of $gpf_node; returns 1 when scontrol cannot tell.
gpf_read_node() {
  local info
  if ! info=$(timeout -k 1 5 "$gpf_scontrol" show node "$gpf_node" 2>&1); then
    echo "gpu-preflight: cannot read node $gpf_node: $info" >&2
    return 1
  fi
  gpf_state=$(sed -n 's/^ *State=\([^ ]*\).*/\1/p' <<<"$info")
  gpf_reason=$(sed -n 's/^ *Reason=\(.*\) \[[^]]*\] *$/\1/p; t; s/^ *Reason=//p' <<<"$info")
}

# Drained, draining, down or failed: someone has taken the node out of service.
gpf_node_held() {
  [[ $gpf_state == *DRAIN* || $gpf_state == *DOWN* || $gpf_state == *FAIL* ]]
}

gpf_update() {
  local out
  if ! out=$(timeout -k 1 5 "$gpf_scontrol" update NodeName="$gpf_node" "$@" 2>&1); then
    echo "gpu-preflight: scontrol update NodeName=$gpf_node $*: failed: $out" >&2
    return 1
  fi
  echo "gpu-preflight: node $gpf_node: $*"
}

# gpf_drain: drains the node for $gpf_line, unless it is already out of service for another
# reason (an admin's reason is never replaced) or already drained for this one.
gpf_drain() {
  local reason="$GPF_PREFIX $gpf_line"
  gpf_read_node || return 1
  if gpf_node_held && [ -n "$gpf_reason" ] && [[ $gpf_reason != "$GPF_PREFIX"* ]]; then
    echo "gpu-preflight: $gpf_line; node $gpf_node left as it is ($gpf_state, reason: $gpf_reason)"
  elif gpf_node_held && [ "$gpf_reason" = "$reason" ]; then
    echo "gpu-preflight: $gpf_line; node $gpf_node already drained for it"
  else
    gpf_update State=DRAIN Reason="$reason"
  fi
}

# gpf_resume: resumes the node only when gpu-preflight took it out of service.
gpf_resume() {
  gpf_read_node || return 1
  if gpf_node_held && [[ $gpf_reason == "$GPF_PREFIX"* ]]; then
    gpf_update State=RESUME
  else
    echo "gpu-preflight: $gpf_line"
  fi
}
