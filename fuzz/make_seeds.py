#!/usr/bin/env python3
"""Builds the libFuzzer seed corpora from the test fixtures and documentation examples.

usage: make_seeds.py SOURCE_DIR OUT_DIR   -> OUT_DIR/<target>/<sha1 of the seed>

Nothing here is committed: seeds are derived on every `make fuzz` so they follow the fixtures.
"""
import hashlib
import pathlib
import re
import sys

MAX_SEED = 256 * 1024

# fuzz_render.cpp's file order: each file is one FuzzedDataProvider string.
RENDER_FILES = [
    "proc/sys/kernel/osrelease", "proc/modules", "proc/driver/nvidia/version",
    "proc/driver/nvidia/params", "proc/driver/nvidia/registry",
    None, None,  # the first two GPUs' information files, whatever their bus ids
    "sys/module/nvidia/version", "environ", "dmesg.txt", "cuda.json", "devices.json",
    "statvfs.json", "proc/cmdline", "proc/mounts", "dev/nvidiactl", "dev/nvidia0",
]


def provider_string(data: bytes) -> bytes:
    # FuzzedDataProvider::ConsumeRandomLengthString: "\\\\" is one backslash, "\\" + other ends it.
    return data.replace(b"\\", b"\\\\") + b"\\x"


def main() -> int:
    src = pathlib.Path(sys.argv[1])
    out = pathlib.Path(sys.argv[2])
    fixtures = src / "tests" / "fixtures"
    seeds: dict[str, set[bytes]] = {}

    def add(target: str, data: bytes) -> None:
        if len(data) <= MAX_SEED:
            seeds.setdefault(target, set()).add(data)

    def each(pattern: str):
        for root in (fixtures, src / "docs" / "examples"):
            for path in sorted(root.glob(pattern)):
                if path.is_file():
                    yield path, path.read_bytes()

    by_name = {
        "*/proc/sys/kernel/osrelease": ["kernel_release"],
        "*/devices.json": ["devices_manifest"],
        "*/proc/driver/nvidia/version": ["driver_version"],
        "*/sys/module/nvidia/version": ["driver_version"],
        "*/proc/driver/nvidia/params": ["params"],
        "*/proc/driver/nvidia/registry": ["registry"],
        "*/proc/driver/nvidia/gpus/*/information": ["gpu_information"],
        "*/proc/modules": ["modules"],
        "*/environ": ["environ", "redactor"],
        "*/dmesg.txt": ["log_line", "redactor"],
        "*/proc/mounts": ["redactor"],
        "*/proc/cmdline": ["redactor"],
        "*/cuda.json": ["cuda_json", "redactor"],
        "*/etc/ld.so.cache": ["ld_cache"],
        "*/sys/devices/**/aer_dev_*": ["sysfs_links"],
        "*/sys/devices/**/*_link_*": ["sysfs_links"],
        "*/sys/devices/**/ports/*/*": ["sysfs_links"],
    }
    for pattern, targets in by_name.items():
        for _, data in each(pattern):
            for target in targets:
                add(target, data)
    for _, data in each("*/dmesg.txt"):
        add("log_scanner", b"\x07" + data)  # first byte: chunk size
        add("log_scanner", b"\x00" + data)
        add("explain_log", b"\x05" + data)
    for log in sorted((src / "tests" / "data" / "explain-log").glob("*.log")):
        add("explain_log", b"\x00" + log.read_bytes())
        add("explain_log", b"\x07" + log.read_bytes())
    for cache in sorted((src / "tests" / "data" / "ld.so.cache").glob("*.bin")):
        add("ld_cache", cache.read_bytes())

    # Log lines and JSON documents quoted in the unit tests and docs.
    literal = re.compile(rb'"((?:[^"\\\n]|\\.)*(?:NVRM|nvidia|Xid|kernel:)(?:[^"\\\n]|\\.)*)"')
    for test in sorted((src / "tests" / "unit").glob("kernel_log_*_test.cpp")):
        for match in literal.finditer(test.read_bytes()):
            line = match.group(1).replace(b"\\n", b"\n").replace(b'\\"', b'"')
            add("log_line", line)
            add("log_scanner", b"\x03" + line + b"\n")
    raw_json = re.compile(rb'R"\((\{.*?)\)"', re.S)
    for test in sorted((src / "tests" / "compat").glob("*rules*_test.cpp")):
        for match in raw_json.finditer(test.read_bytes()):
            add("user_rules", match.group(1))
    for match in raw_json.finditer((src / "tests" / "unit" / "cuda_json_test.cpp").read_bytes()):
        add("cuda_json", match.group(1))
    fenced = re.compile(rb"```json\n(.*?)```", re.S)
    for doc, target in (("user-rules.md", "user_rules"), ("cuda-json.md", "cuda_json")):
        for match in fenced.finditer((src / "docs" / doc).read_bytes()):
            add(target, match.group(1))

    # Whole snapshots for the renderer target.
    for snapshot in sorted(p for p in fixtures.iterdir() if p.is_dir()):
        infos = sorted((snapshot / "proc/driver/nvidia/gpus").glob("*/information"))
        parts = []
        for i, rel in enumerate(RENDER_FILES):
            path = (infos[i - 5] if len(infos) > i - 5 else None) if rel is None else snapshot / rel
            data = path.read_bytes() if path is not None and path.is_file() else b""
            parts.append(provider_string(data[:MAX_SEED // 4]))
        add("render", b"".join(parts))

    for target, items in seeds.items():
        directory = out / target
        directory.mkdir(parents=True, exist_ok=True)
        for data in items:
            (directory / hashlib.sha1(data).hexdigest()).write_bytes(data)
    for target in sorted(seeds):
        print(f"seeds {target}: {len(seeds[target])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
