#!/usr/bin/env bash
# The kernel log from a real systemd journal: builds, at test time, a snapshot whose ring buffer is
# denied (dmesg.error) and whose var/log/journal holds a real .journal file written by
# systemd-journal-remote from the journal export format (https://systemd.io/JOURNAL_EXPORT_FORMATS/)
# with kernel entries of two boots, then checks that only the current boot's Xid is found, that
# the source is named, and that a journal that cannot be read either is reported with every source.
#   journal-snapshot-test.sh GPU_PREFLIGHT_BINARY SOURCE_DIR
# Exits 77 (ctest: skipped) only when systemd-journal-remote is not installed.
set -euo pipefail

k_skip=77
bin=$(readlink -f "$1")
src=$(readlink -f "$2")
remote=""
for candidate in /lib/systemd/systemd-journal-remote /usr/lib/systemd/systemd-journal-remote; do
  [ -x "$candidate" ] && remote=$candidate && break
done
if [ -z "$remote" ]; then
  echo "SKIP: systemd-journal-remote is not installed (apt-get install systemd-journal-remote)"
  exit $k_skip
fi

tmp=$(mktemp -d /tmp/gpf-journal-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

old_boot=11111111111111111111111111111111
cur_boot=0123456789abcdef0123456789abcdef
# entry REALTIME_S MONOTONIC_US BOOT MESSAGE: one kernel-transport entry in export format.
entry() {
  printf '__CURSOR=s=x;i=%s\n__REALTIME_TIMESTAMP=%s000000\n__MONOTONIC_TIMESTAMP=%s\n' "$2" "$1" "$2"
  printf '_BOOT_ID=%s\n_TRANSPORT=kernel\nPRIORITY=3\nSYSLOG_IDENTIFIER=kernel\nMESSAGE=%s\n\n' "$3" "$4"
}
{
  entry 1764460800 0 $old_boot "Linux version 5.15.0-91-generic (buildd@lcy02) #101-Ubuntu SMP"
  entry 1764460900 100000000 $old_boot "NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
  # another program's message in the current boot: not the kernel's, never read
  printf '__CURSOR=s=x;i=y\n__REALTIME_TIMESTAMP=1764547200500000\n__MONOTONIC_TIMESTAMP=500000\n'
  printf '_BOOT_ID=%s\n_TRANSPORT=syslog\nSYSLOG_IDENTIFIER=gpud\nMESSAGE=NVRM: Xid (PCI:0000:2a:00): 79, GPU has fallen off the bus.\n\n' $cur_boot
  entry 1764547200 0 $cur_boot "Linux version 5.15.0-91-generic (buildd@lcy02) #101-Ubuntu SMP"
  entry 1764547260 60000000 $cur_boot "NVRM: Xid (PCI:0000:18:00): 48, pid=1234, name=python3, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 0, subpartition 0."
} >"$tmp/export.txt"

snap=$tmp/snap
cp -a "$src/tests/fixtures/log-not-readable" "$snap"
mkdir -p "$snap/var/log/journal/0123456789abcdef0123456789abcdef" "$snap/proc/sys/kernel/random"
"$remote" -o "$snap/var/log/journal/0123456789abcdef0123456789abcdef/system.journal" "$tmp/export.txt"
echo "01234567-89ab-cdef-0123-456789abcdef" >"$snap/proc/sys/kernel/random/boot_id"

fail() { echo "FAIL: $*" >&2; exit 1; }
# field REPORT PYTHON_EXPRESSION: prints the expression over the parsed report r.
field() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }

# 1. Ring buffer denied, journal readable: the current boot's Xid 48 only.
rc=0
"$bin" check --root "$snap" --format json >"$tmp/r1.json" || rc=$?
[ $rc -le 1 ] || fail "exit $rc"
source=$(field "$tmp/r1.json" "r['facts']['log']['source']")
[[ $source == "systemd journal"* ]] || fail "source is '$source', not the journal"
xids=$(field "$tmp/r1.json" "sorted(e.get('xid') for evs in r['facts']['log']['gpu_events'].values() for e in evs)")
[ "$xids" = "[48]" ] || fail "current-boot Xids are $xids, expected [48]"
grep -q '"log.not-readable"' "$tmp/r1.json" && fail "log.not-readable although the journal was read"
grep -q 'fallen off the bus' "$tmp/r1.json" && fail "the earlier boot's (or gpud's) Xid 79 leaked into the report"
states=$(field "$tmp/r1.json" "[(s['source'], s['state']) for s in r['facts']['log']['sources']]")
[[ $states == *"'error')"*"'used')"* ]] || fail "sources tried: $states"
echo "PASS: journal read for boot $cur_boot only: Xids $xids, sources $states"

# 2. No boot_id in the snapshot: the boot of the journal's last kernel message is the current one.
rm "$snap/proc/sys/kernel/random/boot_id"
rc=0
"$bin" check --root "$snap" --format json >"$tmp/r2.json" || rc=$?
xids=$(field "$tmp/r2.json" "sorted(e.get('xid') for evs in r['facts']['log']['gpu_events'].values() for e in evs)")
[ "$xids" = "[48]" ] || fail "without boot_id the Xids are $xids, expected [48]"
echo "PASS: without boot_id the last boot is read: Xids $xids"

# 3. A journal from an earlier boot only: this boot has no kernel messages there.
echo "fedcba98-7654-3210-fedc-ba9876543210" >"$snap/proc/sys/kernel/random/boot_id"
rc=0
"$bin" check --root "$snap" --format json >"$tmp/r3.json" || rc=$?
xids=$(field "$tmp/r3.json" "sorted(e.get('xid') for evs in r['facts']['log']['gpu_events'].values() for e in evs)")
[ "$xids" = "[]" ] || fail "a boot without messages found Xids $xids"
echo "PASS: a boot the journal does not hold finds nothing"

# 4. Journal unreadable too: log.not-readable names every source tried.
echo '{"var/log/journal": "Permission denied"}' >"$snap/unreadable.json"
rc=0
"$bin" check --root "$snap" --format json >"$tmp/r4.json" || rc=$?
ev=$(field "$tmp/r4.json" "[f['evidence'] for f in r['findings'] if f['id']=='log.not-readable']")
for want in "dmesg.txt: Permission denied" "var/log/journal: Permission denied" "var/log/kern.log: not present"; do
  [[ $ev == *"$want"* ]] || fail "log.not-readable evidence lacks '$want': $ev"
done
echo "PASS: nothing readable: log.not-readable names every source: $ev"

# 5. No libsystemd.so.0 on the host (a minimal image): the binary still runs, and the journal is
# not checked, with the loader's reason. As root, in a private mount namespace, /dev/null is
# bound over the library the loader would pick, so dlopen fails as on a host without it.
rm -f "$snap/unreadable.json"
# awk reads to the end: an early exit would kill ldconfig with SIGPIPE, which pipefail reports.
lib=$(ldconfig -p | awk '/libsystemd\.so\.0 .*x86-64|libsystemd\.so\.0 \(libc6\)/ && !found {print $NF; found = 1}')
if [ "$(id -u)" -ne 0 ] || [ -z "$lib" ] || ! unshare -m true 2>/dev/null; then
  echo "PASS (steps 1-4); step 5 skipped: needs root, unshare and libsystemd.so.0 in the loader's cache"
  exit 0
fi
rc=0
# shellcheck disable=SC2016 # the inner shell expands its own arguments
unshare -m sh -c 'mount --bind /dev/null "$1" && exec "$2" check --root "$3" --format json' sh \
  "$(readlink -f "$lib")" "$bin" "$snap" >"$tmp/r5.json" || rc=$?
[ $rc -le 1 ] || fail "without libsystemd: exit $rc"
journal=$(field "$tmp/r5.json" "[(s['state'], s['error']) for s in r['facts']['log']['sources'] if s['source'].startswith('systemd journal')]")
[[ $journal == *"'error'"*"libsystemd.so.0"* ]] || fail "without libsystemd the journal source is $journal"
grep -q '"log.not-readable"' "$tmp/r5.json" || fail "without libsystemd no log source was readable, yet no log.not-readable"
echo "PASS: without libsystemd the journal is not checked: $journal"
