#!/usr/bin/env python3
"""Writes a large host snapshot for bench/topology.sh: 8 GPUs behind PCIe switches (the healthy
fixture's layout), NUM_PCI other PCI devices, NUM_PROCS processes none of which is a NVIDIA daemon
(so the process scan reads the whole table), IOMMU groups, statvfs.json, firmware files.
Usage: gen_topology_host.py OUT_DIR [--bare]  (--bare: the same host without the topology inputs)"""
import os
import shutil
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "fixtures"))
import generate  # noqa: E402
from generate_topology import H100, Tree, complete_host, pci_config  # noqa: E402

NUM_PCI = 300
NUM_PROCS = 2000


def host(bare):
    files = generate.base(8)
    if bare:
        return files
    files = complete_host(files, bus_ids=generate.BUSES, device_ids=[H100[1]] * 8,
                          processes=["systemd"] + ["python3"] * (NUM_PROCS - 1))
    tree = Tree(files)
    for n in range(NUM_PCI):
        root = f"pci0000:{0xe0 + n // 32:02x}"
        tree.device(f"sys/devices/{root}/0000:{0xe0 + n // 32:02x}:{n % 32:02x}.0", 0x15B3, 0x101D, 0x020000,
                    pci_config(0x15B3, 0x101D, 0x020000, port_type=0))
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
