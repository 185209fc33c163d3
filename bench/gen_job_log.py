#!/usr/bin/env python3
"""Writes a realistic training-job log of about SIZE bytes for bench/explain_log.sh.

Ordinary output of a multi-GPU PyTorch job (NCCL INFO lines, step and loss lines, progress bars,
warnings, a traceback now and then) with one error line of each kind the pattern table knows
about 1 in 200,000 lines, and at the end the NCCL /dev/shm failure. Deterministic (fixed seed) so
runs compare like with like.

usage: gen_job_log.py SIZE_BYTES OUT_FILE
"""
import random
import sys

CHATTER = [
    "node{n}:{p}:{p} [{g}] NCCL INFO Channel {c:02d}/0 : {g}[{g}] -> {h}[{h}] via P2P/IPC",
    "node{n}:{p}:{p} [{g}] NCCL INFO Connected all rings",
    "node{n}:{p}:{p} [{g}] NCCL INFO comm 0x7f{p:x} rank {g} nranks 8 cudaDev {g} busId {b}000 - Init COMPLETE",
    "[rank{g}]: step {s} loss {l:.4f} lr 3.0e-04 grad_norm {l:.3f} tokens/s {p}",
    "Epoch {c}:  {q}%|#####     | {s}/{p} [{c:02d}:{h:02d}<{g:02d}:{c:02d}, {l:.2f}it/s, loss={l:.3f}]",
    "/opt/conda/lib/python3.10/site-packages/torch/utils/checkpoint.py:460: UserWarning: torch.utils.checkpoint: please pass in use_reentrant=True or use_reentrant=False explicitly.",
    "INFO:root:Saving checkpoint to /checkpoints/run-{p}/step-{s}.pt",
    "wandb: logging step {s}: train/loss={l:.4f} train/lr=0.0003",
    "  File \"/workspace/train.py\", line {c}, in <module>",
    "[2026-12-01 10:{c:02d}:{h:02d},{p:03d}] [INFO] [logging.py:96:log_dist] [Rank {g}] step={s}, skipped=0, lr=[0.0003], mom=[(0.9, 0.95)]",
]
RARE = [
    "RuntimeError: CUDA error: uncorrectable ECC error encountered",
    "Failed to initialize NVML: Driver/library version mismatch",
    "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total capacity)",
    "[ 1843.308145] NVRM: Xid (PCI:0000:b3:00): 79, pid=1234, name=python3, GPU has fallen off the bus.",
]
LAST = "node1:42:42 [3] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device"


def main() -> int:
    size, out = int(sys.argv[1]), sys.argv[2]
    rnd = random.Random(33)
    written = 0
    lines = []
    with open(out, "w") as f:
        while written < size - len(LAST) - 1:
            if rnd.randrange(200000) == 0:
                line = rnd.choice(RARE)
            else:
                line = rnd.choice(CHATTER).format(
                    n=rnd.randrange(64), p=rnd.randrange(1, 99999), g=rnd.randrange(8),
                    h=rnd.randrange(8), c=rnd.randrange(60), b=rnd.randrange(16, 255),
                    s=rnd.randrange(1, 500000), l=rnd.random() * 4, q=rnd.randrange(100))
            lines.append(line)
            written += len(line) + 1
            if len(lines) >= 4096:
                f.write("\n".join(lines) + "\n")
                lines.clear()
        if lines:
            f.write("\n".join(lines) + "\n")
        f.write(LAST + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
