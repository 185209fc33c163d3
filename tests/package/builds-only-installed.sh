#!/usr/bin/env bash
# `make package` builds only what the package installs: the binary, the man page and the shell
# completion (the docs are files of the source tree), never the test suite, which is most of a
# fresh build's time. A fresh configure of the source tree (Ninja, whose dry run sees the whole
# graph), then the dry run of the targets `make package` builds (package-contents, then CPack's
# preinstall) must not name a test program. Skipped (77) without ninja.
#   builds-only-installed.sh SOURCE_DIR
set -euo pipefail
src=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v ninja >/dev/null || { echo "SKIP: no ninja"; exit 77; }
cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log" >&2; echo "FAIL: configure" >&2; exit 1; }
# the commands that build each target, from Ninja's graph, without running them
plan=$(ninja -C "$work/build" -t commands package-contents 2>&1)
all=$(ninja -C "$work/build" -t commands all 2>&1)
grep -q gpf_tests <<<"$all" || { echo "FAIL: the check itself is wrong: all does not build gpf_tests" >&2; exit 1; }
for wanted in gpu-preflight.dir gen-manpage.sh "completion bash"; do
  grep -q -- "$wanted" <<<"$plan" || { echo "FAIL: make package does not build $wanted" >&2; exit 1; }
done
if grep -E -e 'gpf_[a-z_]*tests' -e 'fake_(cuda|nvml|nccl)' -e 'catch_main' <<<"$plan" | head -3 | grep .; then
  echo "FAIL: make package builds the test suite (above)" >&2
  exit 1
fi
grep -q -- '--target package-contents' "$src/Makefile" || { echo "FAIL: the Makefile's package target does not build package-contents" >&2; exit 1; }
echo "PASS: make package builds the binary, the man page and the completion, no test"
