#!/usr/bin/env bash
# Loads the generated completion script into a real bash or zsh and completes a few command lines:
# the script parses, registers itself for gpu-preflight, and offers commands, options, option
# values, rule ids (explain, --disable, --severity), directories and files, and after exec the
# command to run and its own arguments.
#   completion-test.sh bash|zsh GPU_PREFLIGHT_BINARY
# Exit 77 (skipped) when zsh is not installed and cannot be.
set -uo pipefail
shell=$1
bin=$2
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
if ! command -v "$shell" >/dev/null; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y -qq --no-install-recommends "$shell" \
      >/dev/null 2>&1
  fi
  command -v "$shell" >/dev/null || {
    echo "SKIP: $shell is not installed (apt-get install $shell)"
    exit 77
  }
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
script=$tmp/script
"$bin" completion "$shell" >"$script" || fail "completion $shell exited $?"
cd "$tmp" || fail "cd $tmp"
mkdir snapdir bin
: >afile
# a command for exec to offer (found on PATH, as the shell's own command completion finds it)
printf '#!/bin/sh\n' >bin/gpfdemo-run && chmod +x bin/gpfdemo-run

# One completed line per word list, then "--".
expected='check
--
--format
--
text
json
env
line
prometheus
--
text
json
markdown
--
gpu.fallen-off-bus
--
snapdir
--
afile
--
bash
--
gpu.fallen-off-bus
--
gpu.fallen-off-bus=info
gpu.fallen-off-bus=warn
gpu.fallen-off-bus=fail
--'
# exec: its options, then the command (the shell's command names), then that command's own words
# (bash: its default completion, here nothing; zsh: _normal on the command line from there).
case $shell in
bash) expected_exec='--format
--
gpfdemo-run
--
gpfdemo-run
--
--' ;;
zsh) expected_exec='--format
--
commands:gpfdemo-r
--
normal:gpfdemo-r:1
--
normal:gpfdemo-run:2
--' ;;
esac
expected="$expected
$expected_exec"

case $shell in
bash)
  bash -n "$script" || fail "the bash script does not parse"
  got=$(bash --norc --noprofile -c '
    source "$1" || exit 3
    complete -p gpu-preflight | grep -q -- "-F _gpu_preflight" || exit 4
    comp() {
      COMP_WORDS=("$@")
      COMP_CWORD=$(($# - 1))
      COMPREPLY=()
      _gpu_preflight
      printf "%s\n" "${COMPREPLY[@]}" --
    }
    comp gpu-preflight chec
    comp gpu-preflight --form
    comp gpu-preflight --format ""
    comp gpu-preflight rules --format ""
    comp gpu-preflight explain gpu.fallen
    comp gpu-preflight check --root sn
    comp gpu-preflight --dmesg af
    comp gpu-preflight completion ba
    comp gpu-preflight --disable gpu.fallen
    comp gpu-preflight check --severity gpu.fallen
    PATH="$PWD/bin:$PATH"
    comp gpu-preflight exec --form
    comp gpu-preflight exec gpfdemo-r
    comp gpu-preflight exec --min-gpus 2 -- gpfdemo-r
    comp gpu-preflight exec gpfdemo-run --f
  ' _ "$script") || fail "bash: loading or completing failed ($?)"
  ;;
zsh)
  zsh -n "$script" || fail "the zsh script does not parse"
  # Registered when sourced after compinit, and when autoloaded from $fpath as _gpu-preflight.
  mkdir fp && cp "$script" fp/_gpu-preflight
  zsh -f -c '
    autoload -U compinit && compinit -u -D -d "$2/zcompdump" || exit 3
    source "$1" || exit 4
    [[ ${_comps[gpu-preflight]-} == _gpu_preflight ]] || exit 5
  ' _ "$script" "$tmp" || fail "zsh: sourcing after compinit did not register the completer ($?)"
  zsh -f -c '
    fpath=("$1/fp" $fpath)
    autoload -U compinit && compinit -u -D -d "$1/zcompdump2" || exit 3
    [[ ${_comps[gpu-preflight]-} == _gpu-preflight ]] || exit 5
  ' _ "$tmp" || fail "zsh: the file in \$fpath was not picked up by compinit ($?)"
  # The completer itself, with compadd and _files standing in for the completion widget's.
  got=$(zsh -f -c '
    compdef() { :; }
    compadd() {
      while [[ $1 != -- ]]; do shift; done
      shift
      local w
      for w in "$@"; do [[ $w == ${PREFIX}* ]] && print -r -- $w; done
    }
    _files() {
      local f
      if [[ $1 == -/ ]]; then
        for f in ${PREFIX}*(N/); do print -r -- $f; done
      else
        for f in ${PREFIX}*(N); do print -r -- $f; done
      fi
    }
    _command_names() { print -r -- "commands:$PREFIX"; }
    _normal() { print -r -- "normal:${words[1]}:$CURRENT"; }
    source "$1" || exit 4
    comp() {
      words=("$@")
      CURRENT=$#
      PREFIX=${words[CURRENT]}
      _gpu_preflight
      print -r -- --
    }
    comp gpu-preflight chec
    comp gpu-preflight --form
    comp gpu-preflight --format ""
    comp gpu-preflight rules --format ""
    comp gpu-preflight explain gpu.fallen
    comp gpu-preflight check --root sn
    comp gpu-preflight --dmesg af
    comp gpu-preflight completion ba
    comp gpu-preflight --disable gpu.fallen
    comp gpu-preflight check --severity gpu.fallen
    comp gpu-preflight exec --form
    comp gpu-preflight exec gpfdemo-r
    comp gpu-preflight exec --min-gpus 2 -- gpfdemo-r
    comp gpu-preflight exec gpfdemo-run --f
  ' _ "$script") || fail "zsh: loading or completing failed ($?)"
  ;;
*)
  fail "usage: completion-test.sh bash|zsh BINARY"
  ;;
esac
[ "$got" = "$expected" ] || fail "$shell completed:
$got
expected:
$expected"
echo "PASS: the $shell completion loads and completes"
