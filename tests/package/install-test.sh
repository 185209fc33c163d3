#!/usr/bin/env bash
# The Debian package (ctest label "package"): builds it with CPack unless the build directory
# already holds one newer than everything it packs, installs it with dpkg into a throwaway root (its own
# --instdir and --admindir; the system's dpkg database is never touched), runs the installed
# binary, checks the files an admin relies on, and removes it again.
#   install-test.sh BUILD_DIR
set -euo pipefail

build=$(readlink -f "$1")
src=$(readlink -f "$(dirname "$0")/../..")
bin=$build/gpu-preflight
version=$("$bin" --version)
version=${version##* }
arch=$(dpkg --print-architecture)
deb=$build/gpu-preflight_${version}_${arch}.deb
# dpkg wants ldconfig and start-stop-daemon on PATH, even for a package without scripts.
export PATH=$PATH:/usr/sbin:/sbin

fail() { echo "FAIL: $*" >&2; exit 1; }

if [ ! -f "$deb" ] || [ -n "$(find "$bin" "$build/gpu-preflight.1.gz" "$src/contrib" "$src/docs" "$src/README.md" \
  "$src/LICENSE" -newer "$deb" -print -quit)" ]; then
  echo "building $deb"
  (cd "$build" && cpack -G DEB >/dev/null)
fi
[ -f "$deb" ] || fail "cpack did not produce $deb"
dpkg-deb --info "$deb" | grep -E '^ (Package|Version|Architecture|Depends):'

tmp=$(mktemp -d /tmp/gpf-deb-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
admin=$root/var/lib/dpkg
mkdir -p "$admin/info" "$admin/updates"
touch "$admin/status"
dpkg_root() {
  dpkg --instdir="$root" --admindir="$admin" --force-not-root --force-depends --log=/dev/null "$@"
}

dpkg_root -i "$deb" 2>&1 | grep -v -e 'dependency problems' -e 'depends on' -e 'is not installed' || true
dpkg --admindir="$admin" -s gpu-preflight | grep -qx 'Status: install ok installed' || fail "dpkg does not list the package as installed"

installed=$root/usr/bin/gpu-preflight
out=$("$installed" --version)
echo "installed: $out"
[ "$out" = "gpu-preflight $version" ] || fail "installed --version says '$out'"
rc=0
line=$("$installed" check --root "$src/tests/fixtures/healthy-4gpu" --format line) || rc=$?
if [ $rc -ne 0 ] || [ "${line%%;*}" != "PASS 4/4 GPUs" ]; then
  fail "installed binary judged healthy-4gpu as '$line' (exit $rc)"
fi

share=$root/usr/share/gpu-preflight
for f in slurm/healthcheck.sh slurm/prolog.sh; do
  [ -x "$share/$f" ] || fail "$f is not installed executable"
  bash -n "$share/$f" || fail "$f does not parse"
done
[ -f "$share/slurm/common.sh" ] || fail "slurm/common.sh missing"
for f in kubernetes/npd-gpu-preflight.json kubernetes/npd-gpu-preflight-pod.json kubernetes/npd-gpu-preflight-daemonset.yaml \
         kubernetes/node-readiness-rule.yaml kubernetes/gpu-preflight-job.yaml kubernetes/gpu-preflight-init-container.yaml \
         report.schema.json; do
  [ -s "$share/$f" ] || fail "$f missing"
done
[ -s "$root/usr/share/doc/gpu-preflight/copyright" ] || fail "no copyright file"
# Shell completion where bash-completion, zsh and fish look for it; each matches the binary's own.
for f in bash-completion/completions/gpu-preflight:bash zsh/vendor-completions/_gpu-preflight:zsh \
         fish/vendor_completions.d/gpu-preflight.fish:fish; do
  path=$root/usr/share/${f%%:*}
  [ -s "$path" ] || fail "${f%%:*} missing"
  cmp -s "$path" <("$installed" completion "${f##*:}") || fail "${f%%:*} differs from completion ${f##*:}"
done
bash -n "$root/usr/share/bash-completion/completions/gpu-preflight" || fail "the bash completion does not parse"
man=$root/usr/share/man/man1/gpu-preflight.1.gz
gzip -t "$man" || fail "the man page is not a valid gzip file"
zcat "$man" | grep -q '^\.TH GPU-PREFLIGHT 1' || fail "the man page has no .TH header"
zcat "$man" | grep -qF "gpu-preflight $version" || fail "the man page does not name version $version"
# Every long option of --help appears in the man page (roff writes '-' as '\-').
for opt in $("$installed" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
  zcat "$man" | grep -qF -- "${opt//-/\\-}" || fail "the man page lacks $opt"
done
# Every subcommand has its section, and the environment is described.
for cmd in $("$installed" --help | sed -n '/^Subcommands:/,/^$/p' | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p'); do
  zcat "$man" | grep -qx "\.SS $cmd" || fail "the man page has no section for $cmd"
done
zcat "$man" | grep -q '^\.SH ENVIRONMENT' || fail "the man page has no ENVIRONMENT section"
if command -v groff >/dev/null; then
  warnings=$(zcat "$man" | groff -man -ww -z 2>&1) || true
  [ -z "$warnings" ] || fail "groff warns about the man page: $warnings"
else
  echo "(groff not installed: man page formatting not checked)"
fi

dpkg_root -r gpu-preflight >/dev/null 2>&1
left=$(find "$root" -path "$admin" -prune -o -type f -print)
[ -z "$left" ] || fail "files left after dpkg -r: $left"
echo "PASS: $(basename "$deb") installs, runs and removes cleanly"
