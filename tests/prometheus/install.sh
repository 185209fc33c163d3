# shellcheck shell=bash
# Sourced by the Prometheus tests: makes sure Debian's PACKAGES are installed (root and apt-get
# needed), otherwise exits 77, ctest's "skipped", with the reason.
gpf_need_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "SKIP: ${missing[*]} not installed, and installing needs root and apt-get"
    exit 77
  fi
  echo "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! { timeout 120 apt-get update -qq &&
         timeout 300 apt-get install -y -qq -o DPkg::Lock::Timeout=120 --no-install-recommends "${missing[@]}" >/dev/null; }; then
    echo "SKIP: could not install ${missing[*]}"
    exit 77
  fi
}
