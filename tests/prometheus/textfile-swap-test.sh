#!/usr/bin/env bash
# contrib/prometheus/gpu-preflight-textfile.sh against the directory's owner (ctest label contrib):
#   textfile-swap-test.sh GPU_PREFLIGHT_BINARY SOURCE_DIR
# The script runs as root in a directory another user may write. A slow check (a wrapper that
# swaps, while the check runs, every file in the directory but gpu-preflight.prom for a symbolic
# link to a private file, and keeps swapping any temporary that appears until the script ends)
# must leave that private file's mode and content as they were: the script's old
# `mktemp; check >tmp; chmod 0644 tmp; mv` made it world-readable through the link. Also: the
# file written is a regular 0644 file with the metrics, no temporary is left, exit 2 leaves the
# previous file, and a directory others may write draws a warning.
set -euo pipefail
bin=$(readlink -f "$1")
src=$(readlink -f "$2")
textfile=$src/contrib/prometheus/gpu-preflight-textfile.sh
fixture=$src/tests/fixtures/healthy-4gpu

tmp=$(mktemp -d /tmp/gpf-textfile-swap-XXXXXX)
swapper=
cleanup() {
  local rc=$?
  [ -n "$swapper" ] && kill "$swapper" 2>/dev/null && wait "$swapper" 2>/dev/null
  rm -rf "$tmp"
  exit $rc
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mode() { stat -c %a "$1"; }

textdir=$tmp/textfile
mkdir -m 0777 "$textdir" # the owner of this directory is the attacker
secret=$tmp/secret
printf 'root only\n' >"$secret"
chmod 0600 "$secret"

# The slow check: swaps what is in the directory now (the old script's temporary), then runs the
# real check a little later, while a background loop swaps any temporary that appears meanwhile.
cat >"$tmp/slow-gpu-preflight" <<SLOW
#!/usr/bin/env bash
for f in "$textdir"/* "$textdir"/.[!.]*; do
  [ -e "\$f" ] || [ -L "\$f" ] || continue
  [ "\$(basename "\$f")" = gpu-preflight.prom ] && continue
  rm -f "\$f" && ln -s "$secret" "\$f" && echo swapped >>"$tmp/swaps"
done
sleep 0.5
exec "$bin" "\$@"
SLOW
chmod +x "$tmp/slow-gpu-preflight"
(
  while :; do
    for f in "$textdir"/gpu-preflight.prom.* "$textdir"/.gpu-preflight.prom.*; do
      [ -f "$f" ] && [ ! -L "$f" ] && rm -f "$f" && ln -s "$secret" "$f" 2>/dev/null
    done
    sleep 0.001
  done
) &
swapper=$!

rc=0
out=$(GPU_PREFLIGHT=$tmp/slow-gpu-preflight "$textfile" "$textdir" --root "$fixture" 2>"$tmp/err") || rc=$?
kill "$swapper"; wait "$swapper" 2>/dev/null || true
swapper=
[ "$(mode "$secret")" = 600 ] || fail "the private file's mode became $(mode "$secret") through a planted link (script exit $rc)"
[ "$(cat "$secret")" = "root only" ] || fail "the private file was written through a planted link"
# 0, or 2 when the swapper removed the binary's temporary under it (the write then fails, said)
if [ "$rc" -ne 0 ] && ! { [ "$rc" -eq 2 ] && grep -q "cannot write" "$tmp/err"; }; then
  fail "the script under the swapping check exited $rc: $(cat "$tmp/err")"
fi
echo "a link planted during the check: the private file stays 0600 and unchanged"
grep -q 'writable by every user' "$tmp/err" || fail "no warning about a directory others may write: $(cat "$tmp/err")"

# Without an attacker, in a directory only root may write: a regular 0644 file with the metrics,
# the verdict's line on stdout, no temporary left, no warning.
rm -rf "$textdir"
mkdir -m 0755 "$textdir"
rc=0
out=$(GPU_PREFLIGHT=$bin "$textfile" "$textdir" --root "$fixture" 2>"$tmp/err") || rc=$?
[ "$rc" -eq 0 ] || fail "textfile script on healthy-4gpu exited $rc: $(cat "$tmp/err")"
prom=$textdir/gpu-preflight.prom
if [ ! -f "$prom" ] || [ -L "$prom" ]; then fail "gpu-preflight.prom is not a regular file"; fi
[ "$(mode "$prom")" = 644 ] || fail "gpu-preflight.prom has mode $(mode "$prom"), not 644"
grep -q '^gpu_preflight_ready 1$' "$prom" || fail "gpu-preflight.prom lacks gpu_preflight_ready 1"
"$bin" check --root "$fixture" --format prometheus | grep -v '_seconds' >"$tmp/stdout.prom" || true
grep -v '_seconds' "$prom" | diff -q - "$tmp/stdout.prom" >/dev/null || fail "--prom-out differs from --format prometheus"
case $out in PASS*) ;; *) fail "stdout is not the one-line verdict: $out" ;; esac
[ "$(find "$textdir" -mindepth 1 | wc -l)" -eq 1 ] || fail "something besides gpu-preflight.prom was left: $(ls -A "$textdir")"
[ ! -s "$tmp/err" ] || fail "unexpected stderr: $(cat "$tmp/err")"

# Exit 2 (the checker cannot run): the previous file stays as it was.
cp "$prom" "$tmp/before"
rc=0
GPU_PREFLIGHT=$bin "$textfile" "$textdir" --root "$tmp/no-such-snapshot" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" -eq 2 ] || fail "an unusable --root exited $rc, not 2"
cmp -s "$prom" "$tmp/before" || fail "exit 2 changed gpu-preflight.prom"
grep -q 'left as it was' "$tmp/err" || fail "exit 2 without the script's message: $(cat "$tmp/err")"

# A link planted at gpu-preflight.prom itself is refused, not written through.
rm -f "$prom"
ln -s "$secret" "$prom"
rc=0
GPU_PREFLIGHT=$bin "$textfile" "$textdir" --root "$fixture" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" -eq 2 ] || fail "a link at gpu-preflight.prom: exit $rc, not 2"
grep -q 'it is a symbolic link' "$tmp/err" || fail "a link at gpu-preflight.prom: $(cat "$tmp/err")"
if [ "$(mode "$secret")" != 600 ] || [ "$(cat "$secret")" != "root only" ]; then
  fail "written through the link at gpu-preflight.prom"
fi
echo PASS
