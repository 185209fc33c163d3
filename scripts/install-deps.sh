#!/usr/bin/env bash
# Installs the Debian packages the build and tests need, if any is missing. As root it runs
# apt-get; otherwise it prints the exact command and stops. (slurm-wlm and munge are installed by
# the Slurm test itself, the only one that needs them; npm is used when present, for ajv-cli.)
set -euo pipefail
# dpkg-dev: dpkg-shlibdeps for `make package`; shellcheck: the lint test of the shipped scripts;
# strace: the read-only test (tests/faults/readonly_test.cpp); clang-14: the sanitizer build (the second
# compiler .ci/run builds with); clang-format-14: `make format`, pinned because each clang-format release
# lays out some code differently. libsystemd-dev: sd-journal, the kernel log from the systemd
# journal; systemd-journal-remote: writes the real .journal files the journal test reads. zsh:
# the completion test loads the generated zsh completion into it.
packages=(cmake g++ make clang clang-14 libclang-rt-14-dev clang-format-14 libcli11-dev libfmt-dev nlohmann-json3-dev
          catch2 hyperfine time python3 dpkg-dev shellcheck strace pkg-config libsystemd-dev
          systemd-journal-remote zsh)
# `install-deps.sh bench`: also what `make bench` needs (Google Benchmark, valgrind for profiles).
if [ "${1:-}" = bench ]; then
  packages+=(libbenchmark-dev valgrind)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "missing build packages: ${missing[*]}" >&2
  echo "run as root:  apt-get update && $cmd" >&2
  exit 1
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
$cmd
