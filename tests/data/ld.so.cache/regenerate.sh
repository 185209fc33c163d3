#!/usr/bin/env bash
# Regenerates the ld.so.cache samples with glibc's own ldconfig (needs root: ldconfig -r chroots).
# The samples index tiny shared objects named like NVIDIA's driver libraries, so the parser is
# tested against caches glibc really writes, in its three formats (new, old, old+new "compat").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/etc" "$root/usr/lib/x86_64-linux-gnu" "$root/usr/local/cuda/compat"
echo 'int gpf_sample;' > "$root/empty.c"
lib() { # dir file soname
  gcc -shared -nostdlib -Wl,-soname,"$3" -o "$root/$1/$2" "$root/empty.c"
}
lib usr/lib/x86_64-linux-gnu libcuda.so.550.54.15 libcuda.so.1
lib usr/lib/x86_64-linux-gnu libnvidia-ml.so.550.54.15 libnvidia-ml.so.1
lib usr/local/cuda/compat libcuda.so.570.124.06 libcuda.so.1
printf '/usr/local/cuda/compat\n/usr/lib/x86_64-linux-gnu\n' > "$root/etc/ld.so.conf"
for format in new old compat; do
  ldconfig -r "$root" -c "$format" -C /etc/ld.so.cache
  cp "$root/etc/ld.so.cache" "$here/$format.bin"
done
ldconfig -r "$root" -C /etc/ld.so.cache -p > "$here/expected.txt"

# The cache of the compat-lib-mismatch fixture: driver libraries 550.90.07 in the multiarch dir.
rm -rf "$root/usr/local" "$root/usr/lib/x86_64-linux-gnu"/*
lib usr/lib/x86_64-linux-gnu libcuda.so.550.90.07 libcuda.so.1
lib usr/lib/x86_64-linux-gnu libnvidia-ml.so.550.90.07 libnvidia-ml.so.1
printf '/usr/lib/x86_64-linux-gnu\n' > "$root/etc/ld.so.conf"
ldconfig -r "$root" -C /etc/ld.so.cache
mkdir -p "$here/../../fixtures/compat-lib-mismatch/etc"
cp "$root/etc/ld.so.cache" "$here/../../fixtures/compat-lib-mismatch/etc/ld.so.cache"
