#!/usr/bin/env bash
# The Slurm integration on a real one-node cluster (ctest label "slurm"):
#   run-slurm-test.sh GPU_PREFLIGHT_BINARY SOURCE_DIR
# Installs Debian's slurm-wlm and munge when missing, starts munged, slurmctld and slurmd on
# 127.0.0.1 from a generated configuration in a temporary directory, and checks
# contrib/slurm/healthcheck.sh and prolog.sh against fixture snapshots:
#   - a failing snapshot drains the node with a "gpu-preflight: ..." reason; a passing one resumes it
#   - a node an admin drained stays drained, with the admin's reason, whatever the check says
#   - slurmd itself runs the health check (HealthCheckProgram, HealthCheckInterval, reconfigure)
#   - a job whose Prolog fails never runs; with a passing Prolog the same job runs
#   - contrib/slurm/fleet-check.sh runs the check through srun and its summary names the node
# Needs root (package install, daemons as SlurmUser=root); otherwise exits 77, which ctest reports
# as skipped. Every wait is bounded; daemons are stopped by their pid files and the temporary
# directory removed on any exit.
set -euo pipefail

k_skip=77
bin=$(readlink -f "$1")
src=$(readlink -f "$2")
fixtures=$src/tests/fixtures
failing=$fixtures/missing-uvm
passing=$fixtures/healthy-4gpu
expected_reason="gpu-preflight: FAIL devnode.nvidia-uvm-missing"

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: the Slurm test needs root (it installs slurm-wlm and munge and runs the daemons as root)"
  exit $k_skip
fi

step() { echo; echo "=== $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# --- packages -------------------------------------------------------------------------------
missing=()
for p in slurm-wlm munge; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null; then
    echo "SKIP: ${missing[*]} missing and no apt-get to install them"
    exit $k_skip
  fi
  step "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  timeout 120 apt-get update -qq
  timeout 300 apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- temporary cluster ----------------------------------------------------------------------
tmp=$(mktemp -d /tmp/gpf-slurm-XXXXXX)
chmod 0700 "$tmp"
node=$(hostname -s)
export SLURM_CONF=$tmp/slurm.conf

stop_pidfile() {
  local f=$1 pid
  [ -s "$f" ] || return 0
  pid=$(cat "$f")
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}
cleanup() {
  local rc=$?
  set +e
  if [ $rc -ne 0 ] && [ $rc -ne $k_skip ]; then
    for log in slurmctld.log slurmd.log munged.log hc-runs.log prolog-runs.log; do
      [ -f "$tmp/$log" ] && { echo "--- $log (last 40 lines)"; tail -n 40 "$tmp/$log"; }
    done
  fi
  timeout 10 scancel --quiet --full "--partition=gpftest" >/dev/null 2>&1
  stop_pidfile "$tmp/slurmd.pid"
  stop_pidfile "$tmp/slurmctld.pid"
  stop_pidfile "$tmp/munged.pid"
  rm -rf "$tmp"
  exit $rc
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# wait_for SECONDS WHAT COMMAND...: polls COMMAND until it succeeds, fails the test after SECONDS.
wait_for() {
  local limit=$1 what=$2 start=$SECONDS
  shift 2
  until "$@" >/dev/null 2>&1; do
    [ $((SECONDS - start)) -lt "$limit" ] || fail "timed out after ${limit} s waiting for: $what"
    sleep 0.5
  done
}

# A free TCP port on 127.0.0.1 above 20000 (nothing answering on it).
free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 30000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
}
ctld_port=$(free_port)
slurmd_port=$(free_port)
[ "$ctld_port" != "$slurmd_port" ] || slurmd_port=$((ctld_port + 1))

step "munged on $tmp/munge.sock"
dd if=/dev/urandom of="$tmp/munge.key" bs=1024 count=1 status=none
chmod 0400 "$tmp/munge.key"
munged --force --key-file="$tmp/munge.key" --socket="$tmp/munge.sock" --pid-file="$tmp/munged.pid" \
  --log-file="$tmp/munged.log" --seed-file="$tmp/munged.seed"
wait_for 10 "munge socket" test -S "$tmp/munge.sock"

# The checks the daemons run read their snapshot from a file, so a test step can switch it.
echo "$passing" >"$tmp/hc-root"
echo "$passing" >"$tmp/prolog-root"
for kind in hc prolog; do
  script=healthcheck.sh
  [ $kind = prolog ] && script=prolog.sh
  cat >"$tmp/$kind-wrapper.sh" <<WRAP
#!/usr/bin/env bash
# Slurm starts this with an almost empty environment: everything the check needs is set here.
echo "\$(date +%T) node=\${SLURMD_NODENAME:-unset} job=\${SLURM_JOB_ID:-none} root=\$(cat $tmp/$kind-root)" >>$tmp/$kind-runs.log
export GPU_PREFLIGHT=$bin GPU_PREFLIGHT_CONFIG=/dev/null GPU_PREFLIGHT_LOG_DIR=$tmp/log-slurm
export GPU_PREFLIGHT_ROOT=\$(cat $tmp/$kind-root) SLURM_CONF=$SLURM_CONF
[ -f $tmp/$kind-settings ] && . $tmp/$kind-settings
exec $src/contrib/slurm/$script
WRAP
  chmod 0755 "$tmp/$kind-wrapper.sh"
done

write_conf() {
  cat >"$SLURM_CONF" <<CONF
ClusterName=gpftest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$tmp/munge.sock
CredType=cred/munge
SlurmUser=root
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/linear
MpiDefault=none
ReturnToService=2
Prolog=$tmp/prolog-wrapper.sh
$1
NodeName=$node NodeAddr=127.0.0.1 $hardware State=UNKNOWN
PartitionName=gpftest Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
}
# The node's layout as slurmd sees it (CPUs, sockets, cores, threads), so it registers cleanly.
hardware=$(slurmd -C | sed -n '1s/^NodeName=[^ ]* //; 1s/ *RealMemory=.*//p')
write_conf ""
mkdir -p "$tmp/state" "$tmp/spool"

step "slurmctld (port $ctld_port) and slurmd (port $slurmd_port) for node $node"
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
state_of() { timeout 10 scontrol show node "$node" | sed -n 's/^ *State=\([^ ]*\).*/\1/p'; }
reason_of() { timeout 10 scontrol show node "$node" | sed -n 's/^ *Reason=\(.*\) \[[^]]*\] *$/\1/p'; }
node_is() { [ "$(state_of)" = "$1" ]; }
reason_is() { [ "$(reason_of)" = "$1" ]; }
wait_for 30 "node $node idle" node_is IDLE

# run_hc ROOT EXPECTED_EXIT: runs the health check as Slurm would (root, no terminal).
run_hc() {
  local rc=0
  GPU_PREFLIGHT=$bin GPU_PREFLIGHT_CONFIG=/dev/null GPU_PREFLIGHT_LOG_DIR=$tmp/log GPU_PREFLIGHT_ROOT=$1 \
    timeout 60 "$src/contrib/slurm/healthcheck.sh" </dev/null || rc=$?
  [ "$rc" -eq "$2" ] || fail "healthcheck.sh on $1 exited $rc, expected $2"
}

step "scontrol show node $node (before the drain)"
timeout 10 scontrol show node "$node"

step "health check on a failing snapshot drains the node"
run_hc "$failing" 1
node_is IDLE+DRAIN || fail "state $(state_of), expected IDLE+DRAIN"
reason_is "$expected_reason" || fail "reason '$(reason_of)', expected '$expected_reason'"
grep -q '"id": "devnode.nvidia-uvm-missing"' "$tmp/log/healthcheck.json" || fail "no JSON report in $tmp/log"

step "scontrol show node $node (after the drain)"
timeout 10 scontrol show node "$node"
timeout 10 sinfo -R

step "failing again keeps the drain; passing resumes the node"
run_hc "$failing" 1
node_is IDLE+DRAIN || fail "state $(state_of) after a second failing run"
run_hc "$passing" 0
[[ $(state_of) != *DRAIN* ]] || fail "state $(state_of) after a passing run, expected no DRAIN"
[ -z "$(reason_of)" ] || fail "reason '$(reason_of)' left after resume"
# slurmctld may mark a resumed node NOT_RESPONDING until its next ping.
wait_for 30 "node $node idle after the resume" node_is IDLE
grep -q '"verdict": "pass"' "$tmp/log/healthcheck.json" || fail "the JSON report is not the passing one"

step "a node an admin drained stays drained, with the admin's reason"
admin_reason="admin: DIMM replacement"
timeout 10 scontrol update NodeName="$node" State=DRAIN Reason="$admin_reason"
run_hc "$passing" 0
node_is IDLE+DRAIN || fail "the passing check changed an admin-drained node to $(state_of)"
reason_is "$admin_reason" || fail "admin reason replaced by '$(reason_of)'"
run_hc "$failing" 1
reason_is "$admin_reason" || fail "the failing check replaced the admin reason with '$(reason_of)'"
timeout 10 scontrol update NodeName="$node" State=RESUME
wait_for 10 "node $node idle after the admin's resume" node_is IDLE

step "slurmd runs the health check itself (HealthCheckProgram, reconfigure)"
echo "$failing" >"$tmp/hc-root"
write_conf "HealthCheckProgram=$tmp/hc-wrapper.sh
HealthCheckInterval=2
HealthCheckNodeState=ANY"
timeout 15 scontrol reconfigure
wait_for 45 "slurmd's health check to drain the node" reason_is "$expected_reason"
echo "$passing" >"$tmp/hc-root"
wait_for 45 "slurmd's health check to resume the node" node_is IDLE
echo "health check runs by slurmd:"
cat "$tmp/hc-runs.log"
grep -q "node=$node" "$tmp/hc-runs.log" || echo "(slurmd did not pass SLURMD_NODENAME; hostname -s was used)"

step "a job runs when the Prolog passes"
# Only the Prolog acts from here: slurmd stops running the health check.
write_conf ""
timeout 15 scontrol reconfigure
sleep 1
timeout 15 sbatch --quiet -o /dev/null -N1 --wrap "touch $tmp/ran-passing"
wait_for 30 "the job to run" test -e "$tmp/ran-passing"
grep -q '"verdict": "pass"' "$tmp/log-slurm/prolog.json" || fail "the Prolog kept no passing JSON report"

# submit_refused NAME: submits a job that would create $tmp/NAME; waits for the failing Prolog to
# take the node out of service; checks the job never ran and is back in the queue; cancels it.
submit_refused() {
  local job
  job=$(timeout 15 sbatch --parsable -o /dev/null -N1 --wrap "touch $tmp/$1")
  wait_for 30 "the failing Prolog to drain the node" node_is IDLE+DRAIN
  sleep 2
  timeout 10 scontrol show job "$job" | grep -E 'JobState|Restarts'
  timeout 10 scontrol show node "$node" | grep -E 'State=|Reason='
  [ ! -e "$tmp/$1" ] || fail "job $job ran although the Prolog failed"
  timeout 10 squeue -h -j "$job" -o %T | grep -qx PENDING || fail "job $job is not back in the queue"
  timeout 10 scancel "$job"
}

step "a failing Prolog stops the job; Slurm drains the node (GPU_PREFLIGHT_PROLOG_DRAIN=0)"
echo "$failing" >"$tmp/prolog-root"
echo "export GPU_PREFLIGHT_PROLOG_DRAIN=0" >"$tmp/prolog-settings"
submit_refused ran-failing-1
reason_is "Prolog error" || fail "reason '$(reason_of)', expected Slurm's 'Prolog error'"
grep -q '"id": "devnode.nvidia-uvm-missing"' "$tmp/log-slurm/prolog.json" || fail "the Prolog kept no JSON report"
run_hc "$passing" 0
reason_is "Prolog error" || fail "the health check resumed a node Slurm drained"
timeout 10 scontrol update NodeName="$node" State=RESUME
wait_for 30 "node $node idle after the admin's resume" node_is IDLE

step "a failing Prolog stops the job and drains the node with its own reason (default)"
rm "$tmp/prolog-settings"
submit_refused ran-failing-2
reason_is "$expected_reason" || fail "reason '$(reason_of)', expected '$expected_reason'"
run_hc "$passing" 0
wait_for 30 "the passing health check to resume the node" node_is IDLE

step "fleet-check.sh: the check on every node through srun, then summarize"
echo "$passing" >"$tmp/prolog-root"
# The live check on the node (no GPU here: not ready), so the report carries the node's own name.
rc=0
GPU_PREFLIGHT=$bin GPU_PREFLIGHT_FLEET_DIR=$tmp/fleet GPU_PREFLIGHT_FLEET_TIME=2 \
  timeout 120 "$src/contrib/slurm/fleet-check.sh" -N1 -p gpftest -- --no-cuda --no-nvml \
  >"$tmp/fleet.txt" 2>"$tmp/fleet.err" || rc=$?
cat "$tmp/fleet.txt" "$tmp/fleet.err"
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "fleet-check.sh exited $rc"
grep -q "^gpu-preflight summary: 1 node from 1 report" "$tmp/fleet.txt" || fail "no summary of one node"
verdict=$(grep -o '"verdict": "[a-z]*"' "$tmp/fleet/task-0.json" | head -n 1 | cut -d'"' -f4)
# a node not passing is in its cause's group: a failing one in the drain command, a warning one
# (ready) in the group's row; a passing one is counted
case $verdict in
  fail) named="^    nodename=$node\$" ;;
  warn) named="^  nodes: $node\$" ;;
  *) named="^ready: 1 of 1; not ready: 0\$" ;;
esac
if [ "$verdict" != pass ]; then
  grep -Eq "^${verdict^^} [^ ]+: 1 node( |\$)" "$tmp/fleet.txt" ||
    fail "the summary has no $verdict group of one node"
fi
grep -Eq "$named" "$tmp/fleet.txt" || fail "the summary does not name node $node with its verdict $verdict"
expected_rc=0
[ "$verdict" = fail ] && expected_rc=1
[ "$rc" -eq "$expected_rc" ] || fail "fleet-check.sh exited $rc for a $verdict node"
# JSON summary
GPU_PREFLIGHT=$bin GPU_PREFLIGHT_SUMMARY=json timeout 120 "$src/contrib/slurm/fleet-check.sh" -N1 -p gpftest \
  -- --no-cuda --no-nvml >"$tmp/fleet.json" || true
grep -q "\"node\": \"$node\"" "$tmp/fleet.json" || fail "the JSON summary does not name node $node"
# A node whose checker prints nothing (here: exits 3 at once) is named, and the run is an error.
# shellcheck disable=SC2016 # $1 and $@ are the wrapper's own
printf '#!/bin/sh\n[ "$1" = check ] && exit 3\nexec "%s" "$@"\n' "$bin" >"$tmp/silent-checker"
chmod 755 "$tmp/silent-checker"
rc=0
GPU_PREFLIGHT=$tmp/silent-checker timeout 120 "$src/contrib/slurm/fleet-check.sh" -N1 -p gpftest \
  >"$tmp/silent.txt" 2>"$tmp/silent.err" || rc=$?
cat "$tmp/silent.err"
[ "$rc" -eq 2 ] || fail "fleet-check.sh exited $rc for a node that returned no report, expected 2"
grep -q "^fleet-check: node $(uname -n) (task-0) returned no report\$" "$tmp/silent.err" ||
  fail "fleet-check.sh did not name node $(uname -n), which returned no report"

echo
echo "PASS: Slurm health check, Prolog and fleet-check on a real one-node cluster"
