#pragma once
// The host memory the checker's own memory cgroup still allows, read through the Host (the live
// host, or a snapshot's copies under --root): the bandwidth step's pinned buffers are sized to fit
// it (docs/cuda-probe.md#memory). Facts: cgroup v2 memory.max and memory.current, v1
// memory.limit_in_bytes and memory.usage_in_bytes, /proc/self/cgroup
// (https://docs.kernel.org/admin-guide/cgroup-v2.html,
// https://docs.kernel.org/admin-guide/cgroup-v1/memory.html).
#include "gpf/host/host.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpf::cuda {

struct MemoryRoom {
  std::uint64_t bytes = 0; // the limit less the usage, the smallest over the cgroup's ancestry
  std::string evidence;    // "sys/fs/cgroup/job/memory.max: 2147483648 (memory.current 1048576)"
};

// The cgroup of this process from proc/self/cgroup's text: the v2 path ("0::/path"), else the v1
// memory controller's ("N:...memory...:/path"), with the directory under sys/fs/cgroup that holds
// its files; nullopt when neither is there.
struct CgroupPath {
  bool v2 = true;
  std::string path; // "/system.slice/job.service"
};
std::optional<CgroupPath> parse_self_cgroup(std::string_view text);

// nullopt when no limit applies (none set, "max", or the files cannot be read).
std::optional<MemoryRoom> cgroup_memory_room(const Host& host);

} // namespace gpf::cuda
