// Rules whose id starts with "limits.": resource limits (locked memory) that RDMA and NCCL need.
#include "common.hpp"

namespace gpf {

std::span<const Rule> limits_rules() {
  static const Rule rows[] = {
      {.id = "limits.memlock-low",
       .stage = Stage::host,
       .severity = Severity::warn,
       .severity_from = "info where no InfiniBand/RoCE port is active (RDMA devices exist but no "
                        "job traffic can use them now)",
       .title = "The locked-memory limit is unlimited where RDMA devices exist",
       .remedy =
           "Raise the limit for the job: `docker run --ulimit memlock=-1`, LimitMEMLOCK=infinity in its systemd unit, or `* - memlock unlimited` in /etc/security/limits.conf",
       .source = "docs/sources.md#multi-gpu-hazards",
       .explanation =
           "GPUDirect RDMA and InfiniBand verbs pin (lock) memory; with a low RLIMIT_MEMLOCK memory registration fails "
           "(NCCL: \"Call to ibv_reg_mr failed with error Cannot allocate memory\", then the job falls back to sockets or aborts). "
           "NVIDIA's container guidance is --ulimit memlock=-1. "
           "A warning where an InfiniBand or RoCE port is active (ACTIVE, LinkUp): NCCL will use it and fail; "
           "information where RDMA devices exist but none of their ports is active. Not reported without RDMA devices.",
       .evidence =
           "Max locked memory in /proc/self/limits (the checker's limits, which `gpu-preflight exec` hands to the job) and the entries of /sys/class/infiniband.",
       .reads = {ProbeId::shm},
       .cases = {fires("ib-memlock-low"), silent("ib-hgx-healthy")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& shm = c.facts.topology.shm;
         const auto rdma_devices = c.facts.topology.rdma.device_names();
         if (rdma_devices.empty() || shm.memlock_unlimited || !shm.memlock_soft ||
             !shm.memlock_line) {
           return {};
         }
         std::vector<std::string> active; // "mlx5_0 port 1 (InfiniBand)"
         for (const auto& d : c.facts.topology.rdma.devices) {
           for (const auto& p : d.ports) {
             if (p.active()) {
               active.push_back(
                   fmt::format("{} port {} ({})", d.name, p.port,
                               p.link_layer.empty() ? "link layer unknown" : p.link_layer));
             }
           }
         }
         Hit hit{
             active.empty()
                 ? fmt::format(
                       "The locked-memory limit is {} while RDMA devices exist (no port of theirs is active now): GPUDirect RDMA and InfiniBand transports pin memory and fail under a low limit",
                       bytes_text(*shm.memlock_soft))
                 : fmt::format(
                       "The locked-memory limit is {} while {} active: NCCL will use {} and its memory registration fails under this limit (\"ibv_reg_mr ... Cannot allocate memory\")",
                       bytes_text(*shm.memlock_soft),
                       active.size() == 1
                           ? "an InfiniBand/RoCE port is"
                           : fmt::format("{} InfiniBand/RoCE ports are", active.size()),
                       active.size() == 1 ? "it" : "them"),
             {"/proc/self/limits: " + quote_evidence(*shm.memlock_line, 200),
              "/sys/class/infiniband: " + quote_evidence(join(rdma_devices), 200)}};
         if (active.empty()) {
           hit.severity = Severity::info;
         } else {
           hit.evidence.push_back("active ports: " + quote_evidence(join(active), 200));
         }
         return {std::move(hit)};
       }},
  };
  return rows;
}

} // namespace gpf
