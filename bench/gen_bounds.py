#!/usr/bin/env python3
"""Writes one snapshot per row of docs/reliability.md's table of bounds, each the healthy-4gpu
fixture with that one input at (or far beyond) its cap, for bench/bounds.sh. Prints one line per
case: NAME<TAB>DIRECTORY<TAB>WHAT. Usage: gen_bounds.py OUT_DIR FIXTURES_DIR"""
import os
import shutil
import struct
import sys

MIB = 1 << 20


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(data if isinstance(data, bytes) else data.encode())


def lines_to(size, line):
    return line * (size // len(line) + 1)


def ld_cache(n, length):
    """A new-format ld.so.cache of n entries whose keys and paths all name one string."""
    strings = 48 + n * 24
    head = b"glibc-ld.so.cache1.1" + struct.pack("<II", n, length + 1) + b"\x02\0\0\0" + bytes(16)
    entry = struct.pack("<IIII", 0x0303, strings, strings, 0) + bytes(8)
    return head + entry * n + b"/" + b"a" * (length - 1) + b"\0"


def wide_json(size):
    """A JSON object whose one array holds as many empty arrays as fit in size bytes."""
    count = (size - 16) // 3
    return '{"gpus": [' + "[]," * (count - 1) + "[]]}"


CASES = [
    ("environ", "`environ`, 4 MiB of variables (cap 1 MiB)",
     lambda d: write(f"{d}/environ", lines_to(4 * MIB, "GPF_BENCH_VARIABLE=" + "v" * 60 + "\n"))),
    ("driver-version", "`proc/driver/nvidia/version`, 4 MiB (cap 64 KiB)",
     lambda d: write(f"{d}/proc/driver/nvidia/version", lines_to(4 * MIB, "NVRM version: x\n"))),
    ("cmdline", "`proc/cmdline`, 4 MiB (cap 64 KiB)",
     lambda d: write(f"{d}/proc/cmdline", "ro " * (4 * MIB // 3) + "\n")),
    ("osrelease", "`proc/sys/kernel/osrelease`, 4 MiB (cap 4 KiB)",
     lambda d: write(f"{d}/proc/sys/kernel/osrelease", "6" * (4 * MIB) + "\n")),
    ("cuda-json", "`cuda.json`, 8 MiB of 2.8 M elements (cap 8 MiB)",
     lambda d: write(f"{d}/cuda.json", wide_json(8 * MIB - 64))),
    ("nvml-json", "`nvml.json`, 8 MiB of 2.8 M elements (cap 8 MiB)",
     lambda d: write(f"{d}/nvml.json", wide_json(8 * MIB - 64))),
    ("ld-so-cache", "`etc/ld.so.cache`, 698873 entries naming one 4 KiB string (16 MiB)",
     lambda d: write(f"{d}/etc/ld.so.cache", ld_cache(698873, 4000))),
    ("dpkg-status", "`var/lib/dpkg/status`, 64 MiB of stanzas, NVSwitch host with Fabric Manager (cap 32 MiB)",
     lambda d: (write(f"{d}/dev/nvidia-nvswitch0", ""),  # read on NVSwitch hosts running FM
                write(f"{d}/proc/2000/comm", "nv-fabricmanage\n"),  # comm keeps 15 bytes
                write(f"{d}/var/lib/dpkg/status",
                      lines_to(64 * MIB, "Package: gpf-bench\nStatus: install ok installed\nVersion: 1\n\n")))),
    ("pci-config", "a bridge's PCI `config`, 4 MiB (cap 4 KiB)",
     lambda d: write(f"{d}/sys/devices/pci0000:15/0000:15:01.0/config", "\0" * (4 * MIB))),
    ("sysfs-attribute", "a bridge's sysfs `vendor`, 4 MiB (cap 64 B)",
     lambda d: write(f"{d}/sys/devices/pci0000:15/0000:15:01.0/vendor", "0x1000" * (4 * MIB // 6))),
    ("comm", "`proc/1/comm`, 4 MiB (cap 64 B)",
     lambda d: write(f"{d}/proc/1/comm", "s" * (4 * MIB) + "\n")),
    ("long-line", "one Xid line of 4 MiB in `dmesg.txt` (lines cut at 64 KiB, evidence at 1 KiB)",
     lambda d: write(f"{d}/dmesg.txt", "[    5.000000] NVRM: Xid (PCI:0000:18:00): 79, " + "x" * (4 * MIB) + "\n")),
    ("kernel-log", "kernel log `dmesg.txt`, 256 MiB of Xid lines (read cap 256 MiB)",
     lambda d: write(f"{d}/dmesg.txt", lines_to(256 * MIB, "[    5.000000] NVRM: Xid (PCI:0000:18:00): 79, "
                                                "pid=1234, name=python3, GPU has fallen off the bus.\n"))),
]


def fd_table(d):
    """A process holding 6000 descriptors (cap 4096 examined)."""
    write(f"{d}/proc/4242/comm", "python3\n")
    os.makedirs(f"{d}/proc/4242/fd", exist_ok=True)
    for n in range(6000):
        os.symlink("/dev/null", f"{d}/proc/4242/fd/{n}")


CASES.append(("process-fds", "`proc/4242/fd`, 6000 descriptors (cap 4096 examined)", fd_table))


def dkms_tree(d):
    """65,000 driver versions under var/lib/dkms/nvidia, each built for one kernel (the newest 16
    versions read)."""
    base = f"{d}/var/lib/dkms/nvidia"
    for n in range(65000):
        module = f"{base}/{n // 1000}.{n % 1000}.1/6.8.0-45-generic/x86_64/module"
        os.makedirs(module)
        open(f"{module}/nvidia.ko", "wb").close()


CASES.append(("dkms-tree", "`var/lib/dkms/nvidia`, 65,000 versions (the newest 16 read)", dkms_tree))


def newline_free_log(d):
    """dmesg.txt of 250 MiB without a newline: words and blanks."""
    with open(f"{d}/dmesg.txt", "wb") as fh:
        chunk = b"[    5.000000] NVRM: no newline here " * (MIB // 38)
        for _ in range(250 * MIB // len(chunk)):
            fh.write(chunk)


def newline_free_run(d):
    """dmesg.txt of 250 MiB without a newline or a blank."""
    with open(f"{d}/dmesg.txt", "wb") as fh:
        for _ in range(250):
            fh.write(b"x" * MIB)


CASES.append(("newline-free-log", "`dmesg.txt`, 250 MiB without a newline (words and blanks)",
              newline_free_log))
CASES.append(("newline-free-run", "`dmesg.txt`, 250 MiB without a newline or a blank",
              newline_free_run))


def main():
    out, fixtures = sys.argv[1], sys.argv[2]
    for name, what, make in CASES:
        d = os.path.join(out, name)
        if os.path.isdir(d):
            shutil.rmtree(d)
        shutil.copytree(os.path.join(fixtures, "healthy-4gpu"), d, symlinks=True)
        make(d)
        print(f"{name}\t{d}\t{what}")


if __name__ == "__main__":
    main()
