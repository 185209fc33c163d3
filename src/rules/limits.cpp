// Rules whose id starts with "limits.": resource limits (locked memory) that RDMA and NCCL need.
#include "common.hpp"

namespace gpf {

std::span<const Rule> limits_rules() {
  static const Rule rows[] = {
      {.id = "limits.memlock-low",
       .stage = Stage::host,
       .severity = Severity::info,
       .title = "The locked-memory limit is unlimited where RDMA devices exist",
       .remedy =
           "Raise the limit for the job: `docker run --ulimit memlock=-1`, LimitMEMLOCK=infinity in its systemd unit, or `* - memlock unlimited` in /etc/security/limits.conf",
       .source = "docs/sources.md#multi-gpu-hazards",
       .explanation =
           "GPUDirect RDMA and InfiniBand verbs pin (lock) memory; with a low RLIMIT_MEMLOCK memory registration fails. NVIDIA's container guidance is --ulimit memlock=-1. Reported only where RDMA devices exist.",
       .evidence =
           "Max locked memory in /proc/self/limits (the checker's limits, which `gpu-preflight exec` hands to the job) and the entries of /sys/class/infiniband.",
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& shm = c.facts.topology.shm;
         const auto rdma_devices = c.facts.topology.rdma.device_names();
         if (rdma_devices.empty() || shm.memlock_unlimited || !shm.memlock_soft ||
             !shm.memlock_line) {
           return {};
         }
         return {
             {fmt::format(
                  "The locked-memory limit is {} while RDMA devices exist: GPUDirect RDMA and InfiniBand transports pin memory and fail under a low limit",
                  bytes_text(*shm.memlock_soft)),
              {"/proc/self/limits: " + quote_evidence(*shm.memlock_line, 200),
               "/sys/class/infiniband: " + quote_evidence(join(rdma_devices), 200)}}};
       }},
  };
  return rows;
}

} // namespace gpf
