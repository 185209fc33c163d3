// NVIDIA's management daemons, each with the public page that describes it.
#include "gpf/knowledge/process_names.hpp"

#include "gpf/util/text.hpp"

#include <algorithm>

namespace gpf {
namespace {

constexpr NvidiaDaemon k_daemons[] = {
    {"nvidia-persistenced", "keeps the driver initialised between jobs",
     "https://docs.nvidia.com/deploy/driver-persistence/"},
    {"nv-fabricmanager", "Fabric Manager, which sets up NVSwitch systems",
     "https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/"},
    {"nvidia-imex", "IMEX, which shares GPU memory between the nodes of a multi-node NVLink domain",
     "https://docs.nvidia.com/multi-node-nvlink-systems/imex-guide/"},
    {"nv-hostengine", "DCGM's host engine",
     "https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/"},
    {"dcgm-exporter", "DCGM's Prometheus exporter", "https://github.com/NVIDIA/dcgm-exporter"},
    {"nvidia-smi", "NVIDIA's command-line management tool",
     "https://docs.nvidia.com/deploy/nvidia-smi/"},
};

} // namespace

bool comm_names(std::string_view comm, std::string_view program) {
  constexpr std::size_t k_comm_max = 15; // TASK_COMM_LEN 16 with the NUL
  return !program.empty() && trim(comm) == program.substr(0, k_comm_max);
}

std::span<const NvidiaDaemon> nvidia_management_daemons() {
  return k_daemons;
}

const NvidiaDaemon* nvidia_daemon_executable(std::string_view exe) {
  // Where a package installs them; a directory no user can write to (a copy under /home or /tmp
  // named nvidia-persistenced is no daemon).
  static constexpr std::string_view k_system_dirs[] = {
      "/usr/bin", "/usr/sbin", "/bin", "/sbin", "/usr/local/bin", "/usr/local/sbin"};
  constexpr std::string_view k_deleted = " (deleted)"; // the file was replaced by an upgrade
  if (exe.size() > k_deleted.size() && exe.substr(exe.size() - k_deleted.size()) == k_deleted) {
    exe.remove_suffix(k_deleted.size());
  }
  const auto slash = exe.rfind('/');
  if (slash == std::string_view::npos) {
    return nullptr;
  }
  const std::string_view dir = exe.substr(0, slash);
  const std::string_view base = exe.substr(slash + 1);
  if (std::find(std::begin(k_system_dirs), std::end(k_system_dirs), dir) ==
      std::end(k_system_dirs)) {
    return nullptr;
  }
  const auto* d = std::find_if(std::begin(k_daemons), std::end(k_daemons),
                               [base](const NvidiaDaemon& row) { return row.program == base; });
  return d == std::end(k_daemons) ? nullptr : d;
}

bool nvidia_management_daemon(std::string_view comm) {
  return std::any_of(std::begin(k_daemons), std::end(k_daemons),
                     [comm](const NvidiaDaemon& d) { return comm_names(comm, d.program); });
}

} // namespace gpf
