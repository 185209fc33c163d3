#!/usr/bin/env bash
# Writes the man page: docs/man/gpu-preflight.1.in with @VERSION@, @OPTIONS@ and @COMMANDS@
# filled from the binary's CLI11 --help output (top level and each subcommand).
#   gen-manpage.sh GPU_PREFLIGHT_BINARY TEMPLATE OUTPUT
set -euo pipefail
bin=$1
template=$2
out=$3

# Escapes text for roff: backslashes, hyphens, and a leading dot or quote.
roff() {
  local s=${1//\\/\\e}
  s=${s//-/\\-}
  [[ $s == [.\']* ]] && s="\\&$s"
  printf '%s\n' "$s"
}

# Reads one CLI11 help text on stdin; prints a .TP entry per option and positional (-h only with
# the argument "with-help"). CLI11 puts the description at column 30, or on the next lines when
# the name is longer.
entries() {
  local section="" line name="" desc="" with_help=${1:-}
  flush() {
    if [ -n "$name" ] && { [ "$with_help" = with-help ] || [[ $name != "-h,--help"* ]]; }; then
      local flag=${name%% *} arg=""
      [[ $name == *" "* ]] && arg=${name#* }
      echo ".TP"
      if [ -n "$arg" ]; then
        printf '\\fB%s\\fR \\fI%s\\fR\n' "$(roff "${flag//,/, }")" "$(roff "$arg")"
      else
        printf '\\fB%s\\fR\n' "$(roff "${flag//,/, }")"
      fi
      roff "$desc"
    fi
    name="" desc=""
  }
  while IFS= read -r line; do
    case $line in
      Options: | Positionals:) flush; section=entries; continue ;;
      Subcommands:) flush; section=""; continue ;;
      "") flush; continue ;;
    esac
    [ "$section" = entries ] || continue
    if [[ $line =~ ^\ {2}([^ ].*[^ ])\ {2,}([^ ].*)$ ]]; then
      flush
      name=${BASH_REMATCH[1]} desc=${BASH_REMATCH[2]}
    elif [[ $line =~ ^\ {2}([^ ].*)$ ]]; then
      flush
      name=${BASH_REMATCH[1]}
    elif [[ $line =~ ^\ +([^ ].*)$ ]]; then
      desc="${desc:+$desc }${BASH_REMATCH[1]}"
    fi
  done
  flush
}

commands() {
  local name
  "$bin" --help | sed -n '/^Subcommands:/,/^$/p' | sed -n 's/^  \([a-z][a-z-]*\) \{2,\}.*$/\1/p' |
    while read -r name; do
      echo ".SS $name"
      # the description, whole: the first line of the command's own help
      roff "$("$bin" "$name" --help | head -n 1)"
      if [ "$name" = check ]; then
        # the default command: its options are the OPTIONS above
        echo "Takes the options listed under OPTIONS, after its name or before it."
      else
        "$bin" "$name" --help | entries
      fi
    done
}

version=$("$bin" --version)
version=${version##* }
options=$("$bin" --help | entries with-help)
cmds=$(commands)
if [ -z "$options" ] || [ -z "$cmds" ]; then
  echo "gen-manpage: no options or commands parsed from $bin --help" >&2
  exit 1
fi
tmp="$out.tmp"
while IFS= read -r line; do
  case $line in
    @OPTIONS@) printf '%s\n' "$options" ;;
    @COMMANDS@) printf '%s\n' "$cmds" ;;
    *) printf '%s\n' "${line//@VERSION@/$version}" ;;
  esac
done <"$template" >"$tmp"
mv "$tmp" "$out"
