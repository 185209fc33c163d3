#!/usr/bin/env bash
# gpu-preflight against NVIDIA's own libcuda.so.1 and libnvidia-ml.so.1 (Debian 12 non-free,
# 535.261.03) on a machine without a GPU: the CUDA and NVML children load the real libraries, whose
# cuInit answers CUDA_ERROR_NO_DEVICE (100) and nvmlInit_v2 NVML_ERROR_DRIVER_NOT_LOADED (9), and
# the report says so with the findings that fit. As root with strace, the real libraries' attempts
# on /dev/char (they re-create /dev/char/195:255) must fail inside the children's read-only /dev.
# The packages are fetched without touching the system's apt configuration and cached in
# CACHE_DIR; where they cannot be fetched the test is skipped (exit 77) with the reason, never
# passed.
# usage: real-nvidia-libs-test.sh BINARY FIXTURES_DIR CACHE_DIR
set -euo pipefail
bin=$1 fixtures=$2 cache=$3
mkdir -p "$cache"
libdir=$cache/root/usr/lib/x86_64-linux-gnu/nvidia/current

# shellcheck source=tests/real/fetch-nonfree.sh
. "$(dirname "$0")/fetch-nonfree.sh"
if [ ! -e "$libdir/libcuda.so.1" ] || [ ! -e "$libdir/libnvidia-ml.so.1" ]; then
  fetch_nonfree "$cache" libcuda1 libnvidia-ml1 || exit $?
fi
echo "libraries in $libdir:"; find "$libdir" -maxdepth 1 -name '*.so*' -printf '  %f\n'

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() {
  "$@" --root "$fixtures/cuda-4gpu" --libcuda "$libdir/libcuda.so.1" \
    --libnvml "$libdir/libnvidia-ml.so.1" --format json >"$out/report.json" || [ $? -le 1 ]
}

run "$bin"
python3 - "$out/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cuda, nvml = r["facts"]["cuda"], r["facts"]["nvml"]
ids = {f["id"] for f in r["findings"]}
checks = [
    ("CUDA: the real library was loaded", cuda["library_path"].endswith("libcuda.so.535.261.03")),
    ("CUDA: cuDriverGetVersion is 12020", cuda["driver_version"] == 12020),
    ("CUDA: cuInit answers 100 CUDA_ERROR_NO_DEVICE",
     cuda["init"].get("error_code") == 100 and cuda["init"].get("error_name") == "CUDA_ERROR_NO_DEVICE"),
    ("NVML: the real library was loaded", nvml["library_path"].endswith("libnvidia-ml.so.535.261.03")),
    ("NVML: nvmlInit answers 9 Driver Not Loaded", nvml["init_code"] == 9 and nvml["init_text"] == "Driver Not Loaded"),
    ("NVML: no required entry point missing", nvml["missing_symbols"] == []),
    ("finding nvml.init-failed", "nvml.init-failed" in ids),
    ("the CUDA child is isolated or says why not", cuda["isolation"] is not None),
    ("the NVML child is isolated or says why not", nvml["isolation"] is not None),
]
print(f"stage times: CUDA {cuda['wall_ms']:.0f} ms, NVML {nvml['wall_ms']:.0f} ms")
bad = [name for name, ok in checks if not ok]
for name, ok in checks:
    print(("ok   " if ok else "FAIL ") + name)
if bad:
    print(json.dumps({"cuda": {k: cuda[k] for k in ("library_path", "driver_version", "init", "isolation")},
                      "nvml": {k: nvml[k] for k in ("library_path", "init_code", "init_text", "missing_symbols",
                                                    "missing_optional_symbols", "isolation")},
                      "findings": sorted(ids)}, indent=1))
    sys.exit(1)
PY

# What the real libraries try on /dev, and what they got: inside the children's read-only /dev
# every attempt to create or remove something fails.
if [ "$(id -u)" = 0 ] && command -v strace >/dev/null; then
  isolated=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["facts"]["nvml"]["isolation"]["isolated"])' "$out/report.json")
  if [ "$isolated" != True ]; then
    echo "SKIPPED (strace part): the children could not be isolated here"
  else
    run strace -f -ff -qq -o "$out/trace" -e trace=unlink,unlinkat,symlink,symlinkat,mknod,mknodat,mkdir,mkdirat "$bin"
    cat "$out"/trace.* | grep '"/dev/' | sed 's/(AT_FDCWD, /(/' | sort | uniq -c | sed 's/^/trace: /' || true
    # "= ? <unavailable>": the child was killed inside the call (its stage ended: the whole process
    # group goes), which on the read-only /dev cannot have created anything either.
    if cat "$out"/trace.* | grep '"/dev/' | grep -v -e 'EROFS' -e 'ENOENT' -e '= ? <unavailable>' |
      grep -q .; then
      echo "FAIL: a real library changed /dev (a call on /dev succeeded)"
      exit 1
    fi
    echo "ok   every create/remove on /dev by the real libraries failed (EROFS/ENOENT)"
  fi
fi
