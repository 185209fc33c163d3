// NCCL's WARN families (include/gpf/knowledge/nccl_warnings.hpp). The message starts are the
// format strings' fixed beginnings in NVIDIA/nccl at k_nccl_warn_tag (WARN(...) calls of the files
// each row's source names); the rules are gpu-preflight's judgement of what on the node can cause
// them.
#include "gpf/knowledge/nccl_warnings.hpp"

#include <algorithm>

namespace gpf {
namespace {

constexpr NcclWarnFamily k_families[] = {
    {"shared-memory",
     "shared memory",
     {"Error while creating shared memory segment",
      "Error while attaching to shared memory segment", "Error: failed to extend", "", "", ""},
     "shm.too-small",
     "NCCL could not create or grow its /dev/shm segment: /dev/shm is too small or full (64 MiB in "
     "a default Docker container)",
     "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/os/linux.cc"},
    {"ib-verbs",
     "InfiniBand verbs",
     {"NET/IB", "Call to ibv_", "ibv_post_send() failed", "ibv_post_recv() failed",
      "Call to ibv_poll_cq()", ""},
     "limits.memlock-low ib.port-not-active ib.port-disabled rdma.peer-memory-missing "
     "rdma.peermem-version pcie.acs-redirect",
     "NCCL's InfiniBand/RoCE transport failed: memory registration (the locked-memory limit, the "
     "GPUDirect peer-memory module), a port or link that is down, or a peer it could not reach",
     "https://github.com/NVIDIA/nccl/tree/v2.30.7-1/src/transport/net_ib ; "
     "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/misc/ibvwrap.cc"},
    {"sockets",
     "sockets",
     {"NET/Socket", "Net : ", "socketProgress: Connection closed by remote peer", "", "", ""},
     "nccl.call-failed",
     "NCCL's socket transport or bootstrap failed: no usable network interface "
     "(NCCL_SOCKET_IFNAME), an address that does not resolve, or a peer that closed the "
     "connection (often another rank that died first)",
     "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/misc/socket.cc ; "
     "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/bootstrap.cc"},
    {"p2p-ipc",
     "P2P / CUDA IPC",
     {"failed to peer with device", "cudaIpcGetMemHandle failed", "", "", "", ""},
     "cuda.multi-gpu-failed pcie.acs-redirect iommu.not-passthrough",
     "NCCL could not enable peer access between two GPUs or share a buffer between processes: "
     "the PCIe path (ACS redirection, an IOMMU in translation mode) or a GPU that failed",
     "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/transport/p2p.cc"},
    {"cuda-calls",
     "CUDA calls",
     {"Cuda failure", "", "", "", "", ""},
     "cuda.gpu-failed xid.reset-required nvml.gpu-unreachable cuda.driver-too-old",
     "A CUDA call inside NCCL failed; the quoted CUDA error says whether it is the node (a GPU that "
     "failed or fell off the bus, a driver too old) or the job (out of memory, an illegal address)",
     "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/include/checks.h ; "
     "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/include/cudawrap.h"},
    {"plugins",
     "network plugins",
     {"Failed to initialize any NET plugin", "NCCL_DEVICE_UNPACK plugin has incompatible version",
      "", "", "", ""},
     "ib.port-not-active rdma.peer-memory-missing",
     "NCCL found no network plugin it could start (not even its own IB or socket transport), or a "
     "plugin built for another NCCL",
     "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/plugin/net.cc"},
    {"timeouts-aborts",
     "timeouts and aborts",
     {"Comm ", "commReclaim: ", "", "", "", ""},
     "nccl.all-reduce-hung cuda.multi-gpu-hung",
     "A communicator was aborted or reclaimed, usually after a timeout or another rank's failure: "
     "look for the first WARN of another family before it",
     "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/proxy.cc ; "
     "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/init.cc"},
};

constexpr std::string_view k_marker = "NCCL WARN ";

} // namespace

std::span<const NcclWarnFamily> nccl_warn_families() {
  return k_families;
}

const NcclWarnFamily* nccl_warn_family(std::string_view line) {
  const auto at = line.find(k_marker);
  if (at == std::string_view::npos) {
    return nullptr;
  }
  const std::string_view message = line.substr(at + k_marker.size());
  for (const auto& family : k_families) {
    for (const auto start : family.starts) {
      if (!start.empty() && message.substr(0, start.size()) == start) {
        return &family;
      }
    }
  }
  return nullptr;
}

} // namespace gpf
