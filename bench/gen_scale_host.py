#!/usr/bin/env python3
"""Writes a snapshot at the checker's scale limits: GPUS GPUs in the driver (information files,
device nodes), MIGS MIG instances named in CUDA_VISIBLE_DEVICES (each with its capability file),
a cuda.json replay of every GPU padded to just under the 8 MiB a cuda.json may have; with --pcie
also the sysfs PCIe tree of every GPU (eight under each switch: what the pcie.* pair rules read).
Usage: gen_scale_host.py DIR [--gpus N] [--migs N] [--cuda-json-bytes N] [--pcie]"""
import argparse
import json
import os
import pathlib
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures"))
from generate_topology import ACS_OFF, H100, Link, Tree  # noqa: E402


def bus_of(i: int) -> str:
    return f"{i // 256:04x}:{i % 256:02x}:00.0"


def uuid_of(i: int) -> str:
    return f"GPU-5ca1e000-0000-4000-8000-{i:012x}"


def write(path: pathlib.Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def write_pcie_tree(root: pathlib.Path, gpus: int) -> None:
    """Each group of eight GPUs behind a root port and a switch of its own host bridge (domains
    from 0x1000 up, apart from the GPUs' own bus ids)."""
    files = {}
    tree = Tree(files)
    for g in range(-(-gpus // 8)):
        dom = 0x1000 + g
        rp = tree.bridge(f"sys/devices/pci{dom:04x}:00", f"{dom:04x}:00:01.0", 4, ACS_OFF)
        up = tree.bridge(rp, f"{dom:04x}:01:00.0", 5, None)
        for n in range(min(8, gpus - 8 * g)):
            down = tree.bridge(up, f"{dom:04x}:02:{n:02x}.0", 6, ACS_OFF)
            tree.gpu(down, bus_of(8 * g + n), H100[1], 100 + 8 * g + n, "identity")
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Link):
            os.symlink(content.target, path)
        else:
            path.write_bytes(content.encode("latin-1"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--gpus", type=int, default=2000)
    ap.add_argument("--migs", type=int, default=20000)
    ap.add_argument("--cuda-json-bytes", type=int, default=(8 << 20) - 4096)
    ap.add_argument("--pcie", action="store_true")
    a = ap.parse_args()
    root = pathlib.Path(a.dir)
    write(root / "proc/sys/kernel/osrelease", "6.8.0-45-generic\n")
    write(root / "proc/modules", "nvidia_uvm 1 0 - Live 0x0\nnvidia 1 1 nvidia_uvm, Live 0x0\n")
    write(root / "proc/driver/nvidia/version",
          "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.14  Release Build  (b@h)  2024\n")
    write(root / "proc/driver/nvidia/params", "EnableGpuFirmware: 18\n")
    write(root / "proc/driver/nvidia/registry", 'Binary: ""\n')
    write(root / "dev/nvidiactl", "")
    write(root / "dev/nvidia-uvm", "")
    for i in range(a.gpus):
        write(root / f"proc/driver/nvidia/gpus/{bus_of(i)}/information",
              f"Model: \t\t NVIDIA Fake GPU\nGPU UUID: \t {uuid_of(i)}\nBus Location: \t {bus_of(i)}\n"
              f"Device Minor: \t {i}\nGPU Excluded:\t No\n")
        write(root / f"dev/nvidia{i}", "")
    entries = []
    per_gpu = max(1, -(-a.migs // max(a.gpus, 1)))
    for k in range(a.migs):
        gpu, gi = k // per_gpu, 1 + k % per_gpu
        entries.append(f"MIG-{uuid_of(gpu)}/{gi}/0")
        write(root / f"proc/driver/nvidia/capabilities/gpu{gpu}/mig/gi{gi}/ci0/access",
              "DeviceFileMinor: 1\nDeviceFileMode: 444\nDeviceFileModify: 1\n")
    if entries:  # none: no CUDA_VISIBLE_DEVICES, every GPU visible
        write(root / "environ", "CUDA_VISIBLE_DEVICES=" + ",".join(entries) + "\n")

    step = lambda name: {"name": name, "ok": True, "duration_ms": 0.01}
    devices = [{"index": i, "bus_id": bus_of(i), "uuid": uuid_of(i), "name": "NVIDIA Fake GPU",
                "compute_capability": "8.0", "cc_major": 8, "cc_minor": 0,
                "total_mem_bytes": 85520809984, "compute_mode": 0, "visible_as": uuid_of(i),
                "usable": True,
                "steps": [step(s) for s in ("load", "cuInit", "device_get", "primary_context",
                                            "alloc", "memset", "copy_roundtrip", "release")]}
               for i in range(a.gpus)]
    doc = {"schema_version": 1, "ran": True, "source": "live", "library": "libcuda.so.1",
           "library_path": "/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.14", "load_error": "",
           "missing_symbols": [], "missing_optional_symbols": [], "driver_version": 12040,
           "driver_cuda_version": "12.4", "device_order": "", "timeout_s": 30.0, "wall_ms": 1000.0,
           "deadline_hit": False, "child_error": "", "enumeration_complete": True,
           "init": step("cuInit"), "enumeration_steps": [step("load")], "devices": devices,
           "multi_gpu": {"ran": False, "ok": None, "devices": [], "steps": [], "peers": [],
                         "matrix": []}}
    text = json.dumps(doc)
    # pad with enumeration steps up to the largest cuda.json the probe accepts
    one = len(json.dumps(step("query device 0"))) + 2
    doc["enumeration_steps"] += [step(f"query device {k}") for k in
                                 range(max(0, (a.cuda_json_bytes - len(text)) // one - 1))]
    text = json.dumps(doc)
    while len(text) + 1 > a.cuda_json_bytes and len(doc["enumeration_steps"]) > 1:
        over = len(text) + 1 - a.cuda_json_bytes
        del doc["enumeration_steps"][-max(1, over // one):]
        text = json.dumps(doc)
    write(root / "cuda.json", text + "\n")
    if a.pcie:
        write_pcie_tree(root, a.gpus)
    print(f"{a.dir}: {a.gpus} GPUs, {a.migs} MIG entries, cuda.json {os.path.getsize(root / 'cuda.json')} bytes")


if __name__ == "__main__":
    main()
