// Rules whose id starts with "shm.": /dev/shm, which NCCL uses for intra-node transport.
#include "common.hpp"

namespace gpf {
namespace {

constexpr std::uint64_t k_shm_minimum = 1ull << 30;

} // namespace

std::span<const Rule> shm_rules() {
  static const Rule rows[] = {
      {.id = "shm.too-small",
       .stage = Stage::host,
       .severity = Severity::warn,
       .title = "/dev/shm holds at least 1 GiB when two or more GPUs are used",
       .remedy =
           "Give the container more shared memory: `docker run --shm-size=1g` (NVIDIA suggests --shm-size=1g --ulimit memlock=-1) or --ipc=host; "
           "in Kubernetes mount an emptyDir with medium: Memory at /dev/shm; "
           "or set NCCL_SHM_DISABLE=1 (DataLoader workers still need shared memory)",
       .source = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html",
       .explanation =
           "NCCL's shared-memory transport and PyTorch DataLoader workers allocate segments in /dev/shm. Docker gives containers 64 MB by default; NCCL then fails with 'No space left on device' while creating or extending /dev/shm/nccl-* segments, or hangs. Checked when two or more GPUs are used; 1 GiB is NVIDIA's suggested minimum (--shm-size=1g).",
       .evidence = "statvfs of /dev/shm (a snapshot's statvfs.json) and its /proc/mounts line.",
       .reads = {ProbeId::shm},
       .cases = {fires("topo-shm-small"), silent("topo-mig-uuid")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& shm = c.facts.topology.shm;
         const auto gpus = job_gpus(c);
         if (!shm.ran || gpus.size() < 2) {
           return {};
         }
         std::vector<std::string> evidence;
         std::string message;
         if (!shm.exists) {
           message = fmt::format(
               "/dev/shm does not exist and the job would use {} GPUs together: NCCL's shared-memory transport and DataLoader workers cannot work",
               gpus.size());
           evidence.push_back("/dev/shm: No such file or directory");
         } else if (shm.size_bytes && *shm.size_bytes < k_shm_minimum) {
           message = fmt::format(
               "/dev/shm is {} and the job would use {} GPUs together: NCCL needs shared-memory segments per rank and fails with \"No space left on device\" (or hangs) when it is full",
               bytes_text(*shm.size_bytes), gpus.size());
           evidence.push_back(fmt::format("statvfs(/dev/shm): size {} bytes, {} bytes available",
                                          *shm.size_bytes, shm.available_bytes.value_or(0)));
         } else {
           return {};
         }
         if (shm.mount_line) {
           evidence.push_back("/proc/mounts: " + quote_evidence(*shm.mount_line, 300));
         }
         return {{std::move(message), std::move(evidence)}};
       }},
  };
  return rows;
}

} // namespace gpf
