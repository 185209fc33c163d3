# shellcheck shell=bash
# Sourced by the real-driver tests: fetch_nonfree CACHE PACKAGE... downloads Debian 12 non-free
# packages into CACHE/debs and unpacks them into CACHE/root, with a private apt configuration (the
# system's apt sources and state are never touched). Returns 77 (ctest's "skipped") with the reason
# on stdout where they cannot be fetched: no apt-get or keyring, or no network. A test never
# passes without them.
fetch_nonfree() {
  local cache=$1
  shift
  local d=$cache/apt
  if ! command -v apt-get >/dev/null || [ ! -e /usr/share/keyrings/debian-archive-keyring.gpg ]; then
    echo "SKIPPED: no apt-get or Debian archive keyring to fetch $*"
    return 77
  fi
  mkdir -p "$d/lists/partial" "$d/parts" "$d/cache/archives/partial" "$cache/debs" "$cache/root"
  cat >"$d/sources.sources" <<SOURCES
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  local o=(-o "Dir::Etc::SourceList=$d/sources.sources" -o "Dir::Etc::SourceParts=$d/parts"
    -o "Dir::State::Lists=$d/lists" -o "Dir::Cache=$d/cache" -o APT::Sandbox::User=root)
  if ! { timeout 300 apt-get "${o[@]}" update -qq &&
    (cd "$cache/debs" && timeout 300 apt-get "${o[@]}" download -qq "$@"); } >"$cache/fetch.log" 2>&1; then
    echo "SKIPPED: $* could not be downloaded from Debian non-free:"
    tail -5 "$cache/fetch.log"
    return 77
  fi
  local pkg deb
  for pkg in "$@"; do
    for deb in "$cache/debs/${pkg}"_*.deb; do
      dpkg-deb -x "$deb" "$cache/root"
    done
  done
}
