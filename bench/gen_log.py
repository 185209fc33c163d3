#!/usr/bin/env python3
"""Writes a realistic plain-dmesg kernel log of about SIZE bytes for bench/log_scan.sh.

Ordinary chatter (storage, network, containers, audit, USB, memory) with rare NVIDIA lines
(application Xids, about 2 in 100,000 lines): an earlier boot, a `Linux version` boot marker at
40 % of the file, then the current boot. Timestamps are monotonic within each boot. Deterministic
(fixed seed) so runs compare like with like.

usage: gen_log.py SIZE_BYTES OUT_FILE
"""
import random
import sys

CHATTER = [
    "nvme nvme0: I/O 123 QID 4 timeout, completion polled",
    "EXT4-fs (nvme0n1p2): re-mounted. Opts: errors=remount-ro. Quota mode: none.",
    "audit: type=1400 audit({t}:{n}): apparmor=\"DENIED\" operation=\"open\" profile=\"snap.lxd\" name=\"/proc/{n}/environ\" pid={n} comm=\"lxd\" requested_mask=\"r\" denied_mask=\"r\" fsuid=0 ouid=0",
    "docker0: port {p}(veth{h}) entered blocking state",
    "docker0: port {p}(veth{h}) entered forwarding state",
    "eth0: renamed from veth{h}",
    "IPv6: ADDRCONF(NETDEV_CHANGE): veth{h}: link becomes ready",
    "mlx5_core 0000:{b}:00.0: mlx5_fw_tracer_handle_traces:735:(pid {n}): FWTracer: Events were lost",
    "usb 1-1.{p}: new high-speed USB device number {p} using xhci_hcd",
    "usb 1-1.{p}: New USB device found, idVendor=0bda, idProduct=8153, bcdDevice=30.00",
    "perf: interrupt took too long (2503 > 2500), lowering kernel.perf_event_max_sample_rate to 79750",
    "TCP: request_sock_TCP: Possible SYN flooding on port 8080. Sending cookies.  Check SNMP counters.",
    "xfs filesystem being remounted at /var/lib/kubelet/pods/{h}/volumes supports timestamps until 2038 (0x7fffffff)",
    "overlayfs: upperdir is in-use as upperdir/workdir of another mount, accessing files from both mounts will result in undefined behavior.",
    "cgroup: fork rejected by pids controller in /kubepods.slice/kubepods-burstable.slice/pod{h}.slice",
    "Memory cgroup out of memory: Killed process {n} (python3) total-vm:{n}kB, anon-rss:{n}kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:{p}kB oom_score_adj:0",
    "kauditd_printk_skb: {p} callbacks suppressed",
    "systemd-journald[{n}]: Data hash table of /var/log/journal/{h}/system.journal has a fill level at 75.0, suggesting rotation.",
    "ixgbe 0000:{b}:00.1 enp{p}s0f1: NIC Link is Up 10 Gbps, Flow Control: RX/TX",
    "bond0: (slave enp{p}s0f0): link status definitely up, 25000 Mbps full duplex",
    "NFS: state manager: check lease failed on NFSv4 server 10.0.0.{p} with error 13",
    "device veth{h} entered promiscuous mode",
    "br-{h}: port {p}(veth{h}) entered disabled state",
    "EDAC MC0: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0 (channel:1 slot:0 page:0x{h} offset:0x0 grain:32 syndrome:0x0)",
    "watchdog: BUG: soft lockup - CPU#{p} stuck for 22s! [kworker/{p}:1:{n}]",
    "Out of memory: Killed process {n} (java) total-vm:{n}kB, anon-rss:{n}kB",
    "invalid opcode: 0000 [#1] SMP NOPTI in environment check of the convert helper",
    "random: crng reseeded on system resumption",
    "pcieport 0000:{b}:01.0: AER: Corrected error received: 0000:{b}:00.0",
    "infiniband mlx5_0: mlx5_ib_add: mlx5 device found with {p} ports, server mode",
]
NVIDIA_EARLY = [
    "nvidia: loading out-of-tree module taints kernel.",
    "nvidia-nvlink: Nvlink Core is being initialized, major device number 237",
    "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  550.54.14  Release Build  (dvs-builder@U16-I3-B03-4-3)  Thu Feb 22 01:25:25 UTC 2024",
    "nvidia-uvm: Loaded the UVM driver, major device number 235.",
]
RARE = [
    "NVRM: Xid (PCI:0000:{g}:00): 13, pid={n}, name=python3, Graphics SM Warp Exception on (GPC 1, TPC 0, SM 0): Out Of Range Address",
    "NVRM: Xid (PCI:0000:{g}:00): 31, pid={n}, name=python3, Ch 00000008, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f12_34560000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ",
    "NVRM: Xid (PCI:0000:{g}:00): 43, pid={n}, name=python3, Ch 00000010",
]
GPUS = ["18", "2a", "3a", "5d", "9a", "ab", "ba", "db"]


def fill(template: str, rng: random.Random) -> str:
    return template.format(t=rng.randrange(1_600_000_000, 1_800_000_000), n=rng.randrange(1000, 99999),
                           p=rng.randrange(1, 32), h=f"{rng.getrandbits(32):08x}", b=f"{rng.randrange(256):02x}",
                           g=rng.choice(GPUS))


def main() -> None:
    size = int(sys.argv[1])
    out = sys.argv[2]
    rng = random.Random(20260501)
    # Message bodies are drawn from a pre-filled pool so generating a gigabyte stays quick; only
    # the timestamps are formatted per line.
    pool = [fill(rng.choice(CHATTER), rng) for _ in range(16384)]
    rare = [fill(rng.choice(RARE), rng) for _ in range(64)]
    boot_at = int(size * 0.4)
    written = 0
    ts = 0.0
    boot = 0
    batch = []
    with open(out, "w", encoding="utf-8", newline="\n") as f:

        def emit(text: str) -> None:
            nonlocal written
            line = f"[{ts:12.6f}] {text}\n"
            batch.append(line)
            written += len(line)

        def start_boot() -> None:
            nonlocal ts
            ts = 0.0
            emit(f"Linux version 5.15.0-{100 + boot}-generic (buildd@lcy02-amd64-001) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) "
                 f"11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #{110 + boot}-Ubuntu SMP")
            ts += 0.000001
            emit("Command line: BOOT_IMAGE=/vmlinuz root=UUID=0b3e ro quiet splash")
            for text in NVIDIA_EARLY:
                ts += 3.1
                emit(text)

        start_boot()
        rand = rng.random
        pick = rng.randrange
        npool = len(pool)
        while written < size:
            for _ in range(4096):
                ts += rand() * 0.01
                emit(rare[pick(64)] if rand() < 0.00002 else pool[pick(npool)])
            if boot == 0 and written >= boot_at:
                boot = 1
                emit("reboot: Restarting system")
                start_boot()
            f.write("".join(batch))
            batch.clear()


if __name__ == "__main__":
    main()
