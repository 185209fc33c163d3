// Probe "services": the NVIDIA daemons a multi-GPU start needs (nv-fabricmanager on NVSwitch
// systems, nvidia-persistenced for fast CUDA start-up) from the process table (proc/<pid>/comm),
// the NVSwitch device nodes (dev/nvidia-nvswitch<N>), and the installed Fabric Manager version
// from the Debian package database (var/lib/dpkg/status; RPM databases are not read), and IMEX
// (nvidia-imex, the channel device's major in proc/devices, dev/nvidia-caps-imex-channels/*).
// Runs after "pcie" (NVSwitches on the PCI bus). Facts:
// https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/ (NVSwitch systems need
// nvidia-fabricmanager); IMEX channels: NVreg_ImexChannelCount in
// https://github.com/NVIDIA/open-gpu-kernel-modules/blob/595.45.04/kernel-open/nvidia/nv-reg.h
#include "gpf/knowledge/process_names.hpp"
#include "gpf/probes/probes.hpp"
#include "gpf/probes/topology_parsers.hpp"
#include "gpf/util/text.hpp"

#include <algorithm>

namespace gpf {
namespace {
constexpr std::string_view k_fabric_manager = "nv-fabricmanager";
constexpr std::string_view k_persistenced = "nvidia-persistenced";
constexpr std::string_view k_imex = "nvidia-imex";
constexpr std::string_view k_imex_device = "nvidia-caps-imex-channels";
constexpr std::string_view k_imex_dir = "dev/nvidia-caps-imex-channels";
constexpr std::string_view k_dpkg_status = "var/lib/dpkg/status";
constexpr std::size_t k_dpkg_cap = 32u << 20;

bool is_pid(std::string_view name) {
  return !name.empty() && name.find_first_not_of("0123456789") == std::string_view::npos;
}

bool numbered(std::string_view name, std::string_view prefix) {
  return starts_with(name, prefix) && name.size() > prefix.size() &&
         name.find_first_not_of("0123456789", prefix.size()) == std::string_view::npos;
}

// The IMEX channel device: its proc/devices line ("Character devices:" section: "<major> <name>")
// and the channel nodes under dev/.
void read_imex_devices(const Host& host, ServiceFacts& services) {
  if (auto devices = host.read_file("proc/devices", 64u << 10)) {
    services.proc_devices_read = true;
    for (const auto line : split_lines(devices->data)) {
      const auto text = trim(line);
      const auto blank = text.find(' ');
      if (blank == std::string_view::npos || trim(text.substr(blank + 1)) != k_imex_device) {
        continue;
      }
      services.imex_devices_line = std::string(text);
      if (auto major = parse_uint(text.substr(0, blank)); major && *major < (1u << 12)) {
        services.imex_major = static_cast<unsigned>(*major);
      }
      break;
    }
  }
  if (auto channels = host.list_dir(k_imex_dir)) {
    for (const auto& name : *channels) {
      if (numbered(name, "channel")) {
        services.imex_channels.push_back(std::string(k_imex_dir) + "/" + name);
      }
    }
    std::sort(services.imex_channels.begin(), services.imex_channels.end());
  }
}
} // namespace

ProbeStatus probe_services(const Host& host, const ProbeOptions&, Facts& facts) {
  ProbeStatus status;
  ServiceFacts& services = facts.topology.services;
  services.ran = true;
  if (auto dev = host.list_dir("dev")) {
    for (const auto& name : *dev) {
      if (numbered(name, "nvidia-nvswitch")) {
        services.nvswitch_nodes.push_back("dev/" + name);
      }
    }
  }
  if (!host.is_directory("proc")) {
    return status.skip("/proc does not exist");
  }
  read_imex_devices(host, services);
  auto pids = host.list_dir("proc");
  if (!pids) {
    return status.fail("proc: " + pids.error().message);
  }
  if (auto init = host.read_file("proc/1/comm", 64)) {
    services.init_comm = std::string(trim(to_valid_utf8(init->data)));
  }
  for (const auto& name : *pids) {
    if (!is_pid(name)) {
      continue;
    }
    services.process_table = true;
    auto comm = host.read_file("proc/" + name + "/comm", 64);
    if (!comm) {
      continue; // the process exited meanwhile, or is hidden (hidepid)
    }
    const int pid = static_cast<int>(parse_uint(name).value_or(0));
    const std::string text(trim(to_valid_utf8(comm->data)));
    if (comm_names(text, k_fabric_manager)) {
      services.fabric_manager.push_back({pid, text});
    } else if (comm_names(text, k_persistenced)) {
      services.persistenced.push_back({pid, text});
    } else if (comm_names(text, k_imex)) {
      services.imex.push_back({pid, text});
    }
    if (!services.fabric_manager.empty() && !services.persistenced.empty() &&
        !services.imex.empty()) {
      break; // all found: the rest of the table cannot change an answer
    }
  }
  if (!services.process_table) {
    status.skip("proc lists no processes");
  }
  const bool nvswitch = !services.nvswitch_nodes.empty() || !facts.topology.pcie.nvswitches.empty();
  if (nvswitch && !services.fabric_manager.empty()) {
    if (auto status_file = host.read_file(k_dpkg_status, k_dpkg_cap)) {
      if (auto fm = dpkg_fabric_manager(status_file->data)) {
        services.fabric_manager_version = fm->version;
        services.fabric_manager_version_source =
            std::string("/") + std::string(k_dpkg_status) + ": " + fm->evidence;
      }
    }
  }
  return status;
}

namespace {
const ProbeRegistration k_row{{"services", "daemons", 1000, probe_services}};
} // namespace

} // namespace gpf
