#!/usr/bin/env bash
# Slurm HealthCheckProgram running gpu-preflight (settings: see common.sh beside this file).
#
#   slurm.conf:  HealthCheckProgram=/usr/share/gpu-preflight/slurm/healthcheck.sh
#                HealthCheckInterval=300
#
# Slurm itself does nothing with a health check's result, so this script changes the node state:
#   not ready (exit 1)  drains the node with Reason="gpu-preflight: <line summary>", unless it is
#                       already drained or down for another reason (an admin's reason is kept)
#   ready (exit 0)      resumes the node, but only when the reason starts with "gpu-preflight:",
#                       that is, only when this script drained it
#   checker error       changes nothing (see GPU_PREFLIGHT_ERROR_BLOCKS)
# The JSON report of the last run is $GPU_PREFLIGHT_LOG_DIR/healthcheck.json. Exits with the
# checker's status (0/1/2), so slurmd logs the runs that were not clean.
set -u
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/common.sh"

gpf_run healthcheck.json
case $gpf_rc in
  0) gpf_resume ;;
  1) gpf_drain ;;
  *) echo "gpu-preflight: $gpf_line; node $gpf_node left as it is" >&2 ;;
esac
exit "$gpf_rc"
