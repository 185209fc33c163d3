#!/usr/bin/env bash
# Slurm Prolog running gpu-preflight before each job (settings: see common.sh beside this file).
#
#   slurm.conf:  Prolog=/usr/share/gpu-preflight/slurm/prolog.sh
#
# Not ready: drains the node with Reason="gpu-preflight: <line summary>" (as healthcheck.sh does;
# GPU_PREFLIGHT_PROLOG_DRAIN=0 leaves that to Slurm, whose reason is then "Prolog error"), then
# exits 1, so Slurm requeues the job, held, before it starts. Checker error: exits 0 unless
# GPU_PREFLIGHT_ERROR_BLOCKS=1 (a broken checker must not stop every job). The JSON report goes to
# $GPU_PREFLIGHT_LOG_DIR/prolog.json; the one-line summary to stderr, which slurmd logs.
set -u
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/common.sh"

gpf_run prolog.json
case $gpf_rc in
  0) exit 0 ;;
  1)
    echo "gpu-preflight: job ${SLURM_JOB_ID:-?} refused on $gpf_node: $gpf_line" >&2
    if [ "${GPU_PREFLIGHT_PROLOG_DRAIN:-1}" != 0 ]; then
      gpf_drain >&2
    fi
    exit 1
    ;;
  *)
    echo "gpu-preflight: job ${SLURM_JOB_ID:-?} allowed on $gpf_node despite: $gpf_line" >&2
    exit 0
    ;;
esac
