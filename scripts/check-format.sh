#!/usr/bin/env bash
# The layout of the C++ sources (src include tests bench fuzz) against .clang-format.
#   scripts/check-format.sh        `make check-format`: lists each file whose layout differs, exit 1
#                                  when any does, 0 when all match
#   scripts/check-format.sh --fix  `make format`: rewrites those files in place
# The clang-format version is pinned (CLANG_FORMAT, default clang-format-14, what Debian 12 ships):
# another release lays out some constructs differently, and the check would flip with the tool.
# Exit 2 when clang-format is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=${CLANG_FORMAT:-clang-format-14}
if ! command -v "$clang_format" >/dev/null; then
  echo "check-format: $clang_format not found (scripts/install-deps.sh installs it)" >&2
  exit 2
fi
# Test data (fixtures, fuzz inputs, goldens) is input, not code.
mapfile -d '' files < <(find src include tests bench fuzz \
  \( -path tests/fixtures -o -path tests/fuzz-regressions -o -path tests/golden \) -prune -o \
  -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \) -print0 | sort -z)
if [ "${1:-}" = --fix ]; then
  "$clang_format" --style=file -i "${files[@]}"
  echo "format: ${#files[@]} files laid out by $clang_format"
  exit 0
fi
differ=()
for f in "${files[@]}"; do
  if ! out=$("$clang_format" --style=file --dry-run -Werror "$f" 2>&1); then
    # anything but a layout difference (a bad .clang-format, an unreadable file) is not a verdict
    if ! grep -q 'clang-format-violations' <<<"$out"; then
      echo "check-format: $clang_format failed on $f:" >&2
      echo "$out" >&2
      exit 2
    fi
    differ+=("$f")
  fi
done
if [ ${#differ[@]} -ne 0 ]; then
  printf '%s\n' "${differ[@]}"
  echo "check-format: ${#differ[@]} of ${#files[@]} files differ from .clang-format ($clang_format); 'make format' rewrites them" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files match .clang-format ($clang_format)"
