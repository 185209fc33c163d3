#!/usr/bin/env bash
# Runs shellcheck on the shell scripts the package ships (contrib/) and on the scripts of the
# integration tests. Usage: tests/lint/shellcheck.sh SOURCE_DIR
# Exits 77 (ctest: skipped) when shellcheck is not installed.
set -euo pipefail
cd "$1"
if ! command -v shellcheck >/dev/null; then
  echo "SKIP: shellcheck is not installed (apt-get install shellcheck)"
  exit 77
fi
mapfile -t scripts < <(find contrib tests/fleet tests/slurm tests/prometheus tests/schema tests/package tests/lint tests/real tests/completion tests/docs tests/kubernetes -name '*.sh' | sort;
                       echo bench/fleet.sh; echo scripts/fleet-example.sh; echo scripts/gen-manpage.sh; echo scripts/check-format.sh)
[ ${#scripts[@]} -ge 8 ] || { echo "FAIL: only ${#scripts[@]} scripts found: ${scripts[*]}" >&2; exit 1; }
shellcheck -x "${scripts[@]}"
echo "PASS: ${#scripts[@]} scripts clean: ${scripts[*]}"
