#!/usr/bin/env bash
# The README's and docs' recipes run as written (ctest label docs):
#   recipes-test.sh GPU_PREFLIGHT_BINARY SOURCE_DIR
# Every command line of a ```sh block in README.md, docs/*.md and docs/integrations/*.md (and every
# gpu-preflight line of a ```yaml CI block) runs in bash, in a scratch directory, twice: on the
# ready example snapshot docs/examples/healthy-8gpu and on the broken one docs/examples/broken-node.
# `gpu-preflight` there is a wrapper that adds `--root SNAPSHOT` when the line names no --root;
# `python` and `torchrun` are stand-ins that record that the job started and its
# CUDA_VISIBLE_DEVICES. Each line must:
#   - start with gpu-preflight (or eval "$(gpu-preflight, tar, jq: the `runnable` list), run it when
#     it names it, and every run of it exit 0 or 1 (2 is a usage or checker error);
#   - exit 0 or 1 itself;
#   - on the broken node, start no job; on the ready node, start the job it names (train.py), with
#     CUDA_VISIBLE_DEVICES set when the line exports it (--format env, exec);
#   - with --format env on the broken node, still say why on the terminal (eval hides stdout).
# A text block of documented output marked <!-- recipe: output of: CMD --> must match CMD's output
# (tests/docs/doc-blocks.py match). What cannot run here is skipped visibly: a block marked
# <!-- recipe: skip (why) --> in the markdown, or a line in skip_lines below.
set -euo pipefail
bin=$(readlink -f "$1")
src=$(readlink -f "$2")
here=$(cd "$(dirname "$0")" && pwd)
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }

tmp=$(mktemp -d /tmp/gpf-recipes-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# Only lines that start with one of these run (nothing else is run on this machine): any other
# line fails the test until its block is marked skip in the markdown or it is in skip_lines.
# shellcheck disable=SC2016 # the recipes' own $(...), as text
runnable=("gpu-preflight " "gpu-preflight" 'eval "$(gpu-preflight ' "sudo gpu-preflight " "tar czf " "jq ")
# Lines of runnable blocks that cannot run here: the line's start, then why.
skip_lines=(
  "kubectl logs |needs a Kubernetes cluster (the pod's log)"
  "sudo chown |hands root's snapshot to the user: the scratch run is one user"
)
# Host paths in recipes, and the scratch directory's stand-ins for them.
rewrites=(
  "sudo |"                                        # the scratch run needs no root
  "/etc/gpu-preflight/site.json|site.json"         # the rules file of docs/user-rules.md
  "/opt/nccl/lib/libnccl.so.2|nccl/libnccl.so.2"   # an NCCL the replay does not load
)
# The recipes that must be among those run (a marker must not hide them).
# shellcheck disable=SC2016
required=(
  'eval "$(gpu-preflight check --format env)" && torchrun --nproc-per-node=gpu train.py'
  'gpu-preflight check && python train.py'
  'gpu-preflight exec torchrun train.py'
)

# The scratch directory each block starts from.
tpl=$tmp/template
mkdir -p "$tpl/bin" "$tpl/reports" "$tpl/SNAPSHOT" "$tpl/configs" "$tpl/nccl"
ln -s "$src/docs" "$tpl/docs"
ln -s "$src/tests" "$tpl/tests"
cat >"$tpl/bin/gpu-preflight" <<'EOF'
#!/usr/bin/env bash
# The checker on the snapshot $GPF_RECIPE_ROOT unless the line names a --root; logs its status.
root=(--root "$GPF_RECIPE_ROOT")
# Commands that read no host take no --root (an option given to a command that ignores it is
# exit 2); the command may follow options (`--rules site.json rules`). explain-log reads the host
# only with --check.
explain_log=0 checked=0
for a in "$@"; do
  case $a in
  --root | --root=* | summarize | diff | rules | explain | completion | help | --help | --version) root=() ;;
  explain-log) explain_log=1 ;;
  --check) checked=1 ;;
  --) break ;;
  esac
done
[ "$explain_log" = 1 ] && [ "$checked" = 0 ] && root=()
rc=0
"$GPF_RECIPE_BIN" "${root[@]}" "$@" || rc=$?
printf '%s %s\n' "$rc" "$*" >>"$GPF_RECIPE_LOG"
exit "$rc"
EOF
for job in python torchrun; do
  cat >"$tpl/bin/$job" <<'EOF'
#!/usr/bin/env bash
printf '%s CUDA_VISIBLE_DEVICES=%s %s\n' "$(basename "$0")" "${CUDA_VISIBLE_DEVICES-(unset)}" "$*" >>"$GPF_RECIPE_JOBS"
EOF
done
chmod +x "$tpl"/bin/*
: >"$tpl/train.py"
: >"$tpl/configs/base run.yaml"
: >"$tpl/nccl/libnccl.so.2"
cp -r "$src/docs/examples/broken-node" "$tpl/node17"
# A job log with the NCCL line of docs/explain-log.md's example.
echo '[3] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device' >"$tpl/slurm-1234.out"
cp "$tpl/slurm-1234.out" "$tpl/job.log"
for ex in healthy-8gpu broken-node; do
  "$bin" check --root "$src/docs/examples/$ex" --format json >"$tpl/reports/$ex.json" || true
done
timeout 30 python3 "$here/doc-blocks.py" list "$src" "$tpl" >"$tmp/blocks.tsv"

export GPF_RECIPE_BIN=$bin GPF_RECIPE_LOG GPF_RECIPE_JOBS GPF_RECIPE_ROOT

# run_line WHERE CMD SNAPSHOT DIR: one recipe line in DIR on SNAPSHOT, checked as above.
run_line() {
  local where=$1 cmd=$2 snap=$3 dir=$4 rc=0 line
  GPF_RECIPE_ROOT=$src/docs/examples/$snap
  GPF_RECIPE_LOG=$dir/.gpf-runs GPF_RECIPE_JOBS=$dir/.jobs
  : >"$GPF_RECIPE_LOG"
  : >"$GPF_RECIPE_JOBS"
  (cd "$dir" && PATH=$dir/bin:$PATH timeout 60 bash -c "$cmd") >"$dir/.out" 2>&1 || rc=$?
  if [ "$rc" -gt 1 ]; then
    fail "$where on $snap: exit $rc: $cmd"
    sed 's/^/    /' "$dir/.out" | tail -n 5 >&2
  fi
  if [[ $cmd == *gpu-preflight* ]] && [ ! -s "$GPF_RECIPE_LOG" ]; then
    fail "$where on $snap: gpu-preflight did not run: $cmd"
  fi
  while read -r line; do
    [ "${line%% *}" -le 1 ] || fail "$where on $snap: gpu-preflight ${line#* } exited ${line%% *}"
  done <"$GPF_RECIPE_LOG"
  # eval swallows the report: the reason a broken node refuses must still reach the terminal
  if [[ $cmd == *"--format env"* && $snap == broken-node ]] && ! grep -q 'devnode.nvidia-uvm-missing' "$dir/.out"; then
    fail "$where: on the broken node the terminal does not say why: $cmd"
  fi
  if [[ $cmd == *train.py* ]]; then
    if [ "$snap" = broken-node ]; then
      [ ! -s "$GPF_RECIPE_JOBS" ] || fail "$where: the job started on the broken node: $(cat "$GPF_RECIPE_JOBS")"
    elif [ ! -s "$GPF_RECIPE_JOBS" ]; then
      fail "$where: the job did not start on the ready node: $cmd"
    elif [[ $cmd == *"--format env"* || $cmd == *"gpu-preflight exec"* ]] &&
         ! grep -q 'CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 ' "$GPF_RECIPE_JOBS"; then
      fail "$where: the job did not get CUDA_VISIBLE_DEVICES=0,...,7: $(cat "$GPF_RECIPE_JOBS")"
    fi
  fi
  return 0
}

ran=0 skipped=0 outputs=0
ran_lines=$tmp/ran.txt
: >"$ran_lines"
while IFS=$'\t' read -r kind where text extra; do
  case $kind in
    error) fail "$where: $text" ;;
    skip) echo "SKIP $where: $text"; skipped=$((skipped + 1)) ;;
    file) echo "file $where: $text (written for the recipes)" ;;
    output)
      outputs=$((outputs + 1))
      dir=$tmp/output-$outputs
      cp -r "$tpl" "$dir"
      export GPF_RECIPE_ROOT=$src/docs/examples/healthy-8gpu GPF_RECIPE_LOG=$dir/.gpf-runs GPF_RECIPE_JOBS=$dir/.jobs
      rc=0
      (cd "$dir" && PATH=$dir/bin:$PATH timeout 60 bash -c "$text") >"$dir/.out" 2>&1 || rc=$?
      [ "$rc" -le 1 ] || fail "$where: exit $rc: $text"
      if why=$(python3 "$here/doc-blocks.py" match "$extra" "$dir/.out"); then
        echo "out  $where: matches the output of: $text"
      else
        fail "$where: the documented output of \`$text\` differs: $why"
      fi
      ;;
    run)
      cmd=$text
      for s in "${skip_lines[@]}"; do
        if [[ $cmd == "${s%%|*}"* ]]; then
          echo "SKIP $where: ${s#*|}: $cmd"
          skipped=$((skipped + 1))
          continue 2
        fi
      done
      ok=
      for p in "${runnable[@]}"; do
        if [ "$cmd" = "$p" ] || [[ $p == *" " && $cmd == "$p"* ]]; then ok=1; fi
      done
      if [ -z "$ok" ]; then
        fail "$where: not run (not a gpu-preflight line): mark its block <!-- recipe: skip (why) --> or add it to skip_lines: $cmd"
        continue
      fi
      for r in "${rewrites[@]}"; do
        cmd=${cmd//"${r%%|*}"/"${r#*|}"}
      done
      # The lines of one block run in order in one directory (a snapshot, then its replay).
      for snap in healthy-8gpu broken-node; do
        dir=$tmp/block-$extra-$snap
        [ -d "$dir" ] || cp -r "$tpl" "$dir"
        run_line "$where" "$cmd" "$snap" "$dir"
      done
      printf '%s\n' "$text" >>"$ran_lines"
      ran=$((ran + 1))
      echo "ran  $where: $cmd"
      ;;
    *) fail "doc-blocks.py: unknown record $kind" ;;
  esac
done <"$tmp/blocks.tsv"

for r in "${required[@]}"; do
  grep -qF -- "$r" "$ran_lines" || fail "the recipe \`$r\` was not run (skipped, or no longer in the docs?)"
done
[ "$ran" -ge 40 ] || fail "only $ran recipe lines ran"
[ "$outputs" -ge 1 ] || fail "no documented output was checked"
echo "$ran recipe lines ran on both example snapshots, $outputs documented outputs matched, $skipped skipped"
if [ "$failures" -gt 0 ]; then
  echo "FAIL: $failures problem(s)" >&2
  exit 1
fi
echo PASS
