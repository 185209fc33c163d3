#!/usr/bin/env python3
"""Writes a large host snapshot for bench/links.sh: an HGX node (8 GPUs, each beside a ConnectX-7
under its PCIe switch, link attributes and AER statistics on every hop, 8 InfiniBand ports, 4
NVSwitches), NUM_PCI other PCI devices and NUM_PROCS processes with FDS_PER_PROC open files each
(8 of them hold a GPU). --bare: the same host without the inputs of the link probes (no link
attributes, AER files, InfiniBand class or fd tables).
Usage: gen_links_host.py OUT_DIR [--bare]"""
import json
import os
import shutil
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "fixtures"))
import generate  # noqa: E402
from generate_topology import H100, Link, Tree, complete_host, hgx_host, pci_config  # noqa: E402

NUM_PCI = 300
NUM_PROCS = 2000
FDS_PER_PROC = 6


def host(bare):
    procs = ["systemd", "nvidia-persistenced", "nv-fabricmanager"] + ["python3"] * (NUM_PROCS - 3)
    if bare:
        files = complete_host(generate.base(8), bus_ids=generate.BUSES, device_ids=[H100[1]] * 8, processes=procs)
    else:
        files = hgx_host(generate.base, generate.BUSES)
        files = complete_host(files, bus_ids=generate.BUSES, device_ids=[H100[1]] * 8, links=True,
                              processes=procs)
    tree = Tree(files)
    for n in range(NUM_PCI):
        root = f"pci0000:{0xe0 + n // 32:02x}"
        tree.device(f"sys/devices/{root}/0000:{0xe0 + n // 32:02x}:{n % 32:02x}.0", 0x15B3, 0x101D, 0x020000,
                    pci_config(0x15B3, 0x101D, 0x020000, port_type=0))
    if bare:
        return files
    manifest = {}
    for n in range(1, NUM_PROCS):
        pid = 1000 + 17 * n
        fd = f"proc/{pid}/fd"
        targets = ["/dev/null", f"socket:[{40000 + n}]", f"pipe:[{50000 + n}]", "anon_inode:[eventfd]",
                   "/var/log/train.log", "/usr/lib/x86_64-linux-gnu/libc.so.6"][:FDS_PER_PROC]
        for i, t in enumerate(targets):
            files[f"{fd}/{i}"] = Link(t)
        if 3 <= n < 11:  # eight workers, one per GPU
            files[f"{fd}/{FDS_PER_PROC}"] = Link(f"/dev/nvidia{n - 3}")
            manifest[f"{fd}/{FDS_PER_PROC}"] = {"type": "char", "major": 195, "minor": n - 3, "mode": "0666"}
            files[f"proc/{pid}/status"] = f"Name:\tpython3\nState:\tS (sleeping)\nPid:\t{pid}\n"
    files["devices.json"] = json.dumps(manifest, indent=1) + "\n"
    return files


def main():
    out = sys.argv[1]
    bare = "--bare" in sys.argv[2:]
    if os.path.isdir(out):
        shutil.rmtree(out)
    generate.write_tree(out, host(bare))
    return 0


if __name__ == "__main__":
    sys.exit(main())
