// Probe "shm": the size of /dev/shm (statvfs through the Host; a snapshot's statvfs.json) and its
// proc/mounts line, the memlock limit of this process (proc/self/limits: `gpu-preflight exec`
// hands the same limits to the job). Whether RDMA devices, for which the limit matters, exist is
// the rdma probe's fact. Facts: NCCL troubleshooting (/dev/shm in containers, memlock),
// https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html
#include "gpf/probes/probes.hpp"
#include "gpf/probes/topology_parsers.hpp"
#include "gpf/util/text.hpp"

namespace gpf {
namespace {
constexpr std::string_view k_shm = "dev/shm";
} // namespace

ProbeStatus probe_shm(const Host& host, const ProbeOptions&, Facts& facts) {
  ProbeStatus status;
  ShmFacts& shm = facts.topology.shm;
  shm.ran = true;
  const auto space = host.filesystem_space(k_shm);
  if (!space) {
    status.fail(std::string(k_shm) + ": " + space.error().message);
  } else if (!space->recorded) {
    status.skip("the snapshot records no size for /dev/shm (statvfs.json)");
  } else if (!space->exists) {
    shm.exists = false;
  } else {
    shm.size_bytes = space->size_bytes;
    shm.available_bytes = space->available_bytes;
  }
  if (auto mounts = host.read_file("proc/mounts")) {
    // the mount point as proc/mounts prints it: the root-relative path from the root. Appended,
    // not `"/" + std::string(...)`: GCC 12 at -O3 reports a false -Wrestrict inside that operator.
    std::string mount_point = "/";
    mount_point += k_shm;
    if (auto line = find_mount_line(mounts->data, mount_point)) {
      shm.mount_line = to_valid_utf8(*line);
    }
  }
  if (auto limits = host.read_file("proc/self/limits", 16 * 1024)) {
    if (auto memlock = parse_memlock_limit(limits->data)) {
      shm.memlock_line = to_valid_utf8(memlock->line);
      shm.memlock_soft = memlock->soft;
      shm.memlock_unlimited = memlock->unlimited;
    }
  }
  return status;
}

namespace {
const ProbeRegistration k_row{{"shm", "shared-memory size", 900, probe_shm}};
} // namespace

} // namespace gpf
