// Probe "pcie": the PCIe path above each of the driver's GPUs and the ACS control bits of every
// bridge on it; NVSwitches (NVIDIA devices of class 0x0680). Reads sys/bus/pci/devices/* (links
// into sys/devices/...), then vendor/class/device and `config` of the devices that matter through
// their resolved sysfs directories, so a snapshot holds links plus plain files. Only the small
// cached attributes are read for every device; `config` is read for bridges above GPUs only.
// Facts: NCCL troubleshooting (PCI Access Control Services),
// https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html
#include "gpf/probes/probes.hpp"
#include "gpf/probes/topology_parsers.hpp"
#include "gpf/util/text.hpp"

#include <fmt/format.h>

#include <map>

namespace gpf {
namespace {

constexpr std::string_view k_pci_devices = "sys/bus/pci/devices";
constexpr std::size_t k_attr_cap = 64;
constexpr std::size_t k_config_cap = 4096;
constexpr std::uint32_t k_vendor_nvidia = 0x10DE;
constexpr std::uint32_t k_class_bridge_other =
    0x0680; // NVSwitch: "Bridge: NVIDIA Corporation Device ..."

std::optional<std::uint32_t> read_hex(const Host& host, const std::string& path) {
  auto content = host.read_file(path, k_attr_cap);
  return content ? parse_sysfs_hex(content->data) : std::nullopt;
}

// The sysfs directory of a device: the link's target resolved inside the root; a plain
// directory (a hand-made snapshot) is its own path.
std::string device_dir(const Host& host, const std::string& entry) {
  if (auto target = host.read_link(entry)) {
    if (auto joined = join_link_target(entry, *target)) {
      return *joined;
    }
  }
  return entry;
}

// The directory of the component `bus_id` on a device path.
std::string prefix_through(const std::string& path, const std::string& bus_id) {
  const auto at = path.find("/" + bus_id);
  return at == std::string::npos ? std::string() : path.substr(0, at + 1 + bus_id.size());
}

void read_bridge(const Host& host, const std::string& dir, const std::string& bus_id,
                 PcieFacts& pcie) {
  if (pcie.bridges.count(bus_id) != 0) {
    return;
  }
  PciBridge bridge;
  bridge.bus_id = bus_id;
  bridge.path = dir;
  if (auto config = host.read_file(dir + "/config", k_config_cap)) {
    bridge.config = parse_pci_config(config->data);
  } else {
    bridge.error = dir + "/config: " + config.error().message;
    bridge.config.note = config.error().message;
  }
  pcie.bridges.emplace(bus_id, std::move(bridge));
}

} // namespace

ProbeStatus probe_pcie(const Host& host, const ProbeOptions&, Facts& facts) {
  ProbeStatus status;
  PcieFacts& pcie = facts.topology.pcie;
  if (!host.is_directory(k_pci_devices)) {
    return status.skip(std::string(k_pci_devices) + " does not exist");
  }
  auto names = host.list_dir(k_pci_devices);
  if (!names) {
    return status.fail(std::string(k_pci_devices) + ": " + names.error().message);
  }
  pcie.ran = true;
  std::map<std::string, std::string> dirs; // bus id -> sysfs directory
  std::map<std::string, std::uint16_t> device_ids;
  for (const auto& name : *names) {
    if (!is_pci_address(name)) {
      continue;
    }
    ++pcie.devices_seen;
    const std::string bus = to_lower(name);
    const std::string dir = device_dir(host, std::string(k_pci_devices) + "/" + name);
    dirs[bus] = dir;
    if (read_hex(host, dir + "/vendor") != k_vendor_nvidia) {
      continue;
    }
    if (auto id = read_hex(host, dir + "/device")) {
      device_ids[bus] = static_cast<std::uint16_t>(*id);
    }
    if (auto cls = read_hex(host, dir + "/class"); cls && (*cls >> 8) == k_class_bridge_other) {
      pcie.nvswitches.push_back(bus);
    }
  }

  std::vector<std::string> problems;
  for (const auto& gpu : facts.gpus) {
    GpuPciPath path;
    path.bus_id = gpu.bus_id;
    const auto it = dirs.find(gpu.bus_id);
    if (it == dirs.end()) {
      path.error = fmt::format("{}/{} does not exist", k_pci_devices, gpu.bus_id);
      problems.push_back(path.error);
      pcie.gpus.push_back(std::move(path));
      continue;
    }
    path.path = it->second;
    if (auto id = device_ids.find(gpu.bus_id); id != device_ids.end()) {
      path.device_id = id->second;
    }
    const auto parsed = parse_sysfs_pci_path(path.path);
    path.root = parsed.root;
    if (parsed.devices.empty() || parsed.devices.back() != gpu.bus_id) {
      path.error = fmt::format("{} does not end in the GPU's address", path.path);
    } else {
      path.bridges.assign(parsed.devices.begin(), parsed.devices.end() - 1);
    }
    for (const auto& bridge : path.bridges) {
      read_bridge(host, prefix_through(path.path, bridge), bridge, pcie);
    }
    const std::string group_link = path.path + "/iommu_group";
    if (auto target = host.read_link(group_link)) {
      if (auto joined = join_link_target(group_link, *target)) {
        path.iommu_group = joined->substr(joined->rfind('/') + 1);
      }
    }
    pcie.gpus.push_back(std::move(path));
  }
  for (const auto& [bus, bridge] : pcie.bridges) {
    if (!bridge.error.empty()) {
      problems.push_back(bridge.error);
    }
  }
  if (!problems.empty()) {
    status.fail(fmt::format("{}", fmt::join(problems, "; ")));
  }
  return status;
}

} // namespace gpf
