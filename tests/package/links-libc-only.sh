#!/usr/bin/env bash
# The binary links libc and the loader only (libstdc++ and libgcc are linked in; libsystemd is
# loaded with dlopen where it exists), so it runs in a minimal or distroless image.
#   links-libc-only.sh GPU_PREFLIGHT_BINARY
set -euo pipefail
needed=$(objdump -p "$1" | awk '$1 == "NEEDED" {print $2}' | sort | tr '\n' ' ')
echo "NEEDED: $needed"
for lib in $needed; do
  case $lib in
    libc.so.6 | ld-linux-*.so.*) ;;
    *) echo "FAIL: $1 needs $lib beyond libc" >&2; exit 1 ;;
  esac
done
ldd "$1" | grep -v -e 'linux-vdso' -e 'libc\.so' -e 'ld-linux' && { echo "FAIL: ldd lists more than libc and the loader" >&2; exit 1; }
echo "PASS: $1 links libc and the loader only"
