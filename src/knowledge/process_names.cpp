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

bool nvidia_management_daemon(std::string_view comm) {
  return std::any_of(std::begin(k_daemons), std::end(k_daemons),
                     [comm](const NvidiaDaemon& d) { return comm_names(comm, d.program); });
}

} // namespace gpf
