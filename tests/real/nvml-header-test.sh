#!/usr/bin/env bash
# The probe's NVML declarations against NVIDIA's own nvml.h (Debian 12 non-free libnvidia-ml-dev,
# fetched into CACHE_DIR like the libraries): tests/real/nvml_header_check.cpp compiles only when
# every struct size, field offset, constant and entry-point type matches. Then a control: the same
# check on a copy of the declarations with one field widened must fail, so a pass means something.
# Skipped (77) with the reason where the header cannot be fetched.
# usage: nvml-header-test.sh CXX SOURCE_DIR CACHE_DIR
set -euo pipefail
cxx=$1 src=$2 cache=$3
mkdir -p "$cache"
# shellcheck source=tests/real/fetch-nonfree.sh
. "$(dirname "$0")/fetch-nonfree.sh"
header=$cache/root/usr/include/nvml.h
if [ ! -e "$header" ]; then
  fetch_nonfree "$cache" libnvidia-ml-dev || exit $?
fi
echo "nvml.h: $(grep -m1 -o 'NVML_API_VERSION_STR *"[0-9]*"' "$header" || echo "$header")"

check() { # INCLUDE_DIR: compiles the check with the probe's declarations found there first
  "$cxx" -std=c++20 -fsyntax-only -DNVML_NO_UNVERSIONED_FUNC_DEFS -I"$cache/root/usr/include" \
    -I"$1" -I"$src/src" -I"$src/include" "$src/tests/real/nvml_header_check.cpp"
}
check "$src/src"
echo "PASS: the probe's NVML structs, constants and entry points match nvml.h"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/probes/nvml"
sed 's/^  unsigned int domain;$/  unsigned long long domain;/' "$src/src/probes/nvml/nvml_api.hpp" >"$tmp/probes/nvml/nvml_api.hpp"
if cmp -s "$src/src/probes/nvml/nvml_api.hpp" "$tmp/probes/nvml/nvml_api.hpp"; then
  echo "FAIL: the control found no 'unsigned int domain;' to widen in nvml_api.hpp" >&2
  exit 1
fi
if check "$tmp" 2>"$tmp/err"; then
  echo "FAIL: a widened nvmlPciInfo_t.domain still compiled: the check checks nothing" >&2
  exit 1
fi
grep -q 'nvmlPciInfo_t' "$tmp/err" || { cat "$tmp/err" >&2; echo "FAIL: the control failed for another reason" >&2; exit 1; }
echo "PASS: the control (nvmlPciInfo_t.domain widened) is refused"
