// Probe "pcie": the PCIe path above each of the driver's GPUs and the ACS control bits of every
// bridge on it; NVSwitches (NVIDIA devices of class 0x0680). Reads sys/bus/pci/devices/* (links
// into sys/devices/...), then vendor/class/device and `config` of the devices that matter through
// their resolved sysfs directories, so a snapshot holds links plus plain files. Only the small
// cached attributes are read for every device; `config` is read for bridges above GPUs only, as
// are the link attributes and AER statistics of the GPUs and those bridges.
// Facts: NCCL troubleshooting (PCI Access Control Services),
// https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html; link attributes:
// https://github.com/torvalds/linux/blob/master/drivers/pci/pci-sysfs.c; AER statistics:
// https://www.kernel.org/doc/Documentation/ABI/testing/sysfs-bus-pci-devices-aer_stats
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
constexpr std::size_t k_aer_cap = 4096; // ~20 lines of "Name count"
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
  auto dir = host.resolve_link(entry);
  return dir && *dir ? **dir : entry;
}

// One sysfs attribute: nullopt when absent; an unreadable one is added to errors.
std::optional<std::string> read_attr(const Host& host, const std::string& path, std::size_t cap,
                                     std::vector<std::string>& errors) {
  auto text = host.read_attribute(path, cap);
  if (!text) {
    errors.push_back(path + ": " + text.error().message);
    return std::nullopt;
  }
  return *text;
}

// The port's link (sysfs link attributes) and its AER counters (aer_dev_*), where the kernel has
// them. Facts: Linux ABI, sysfs-bus-pci and sysfs-bus-pci-devices-aer_stats.
void read_link_and_aer(const Host& host, const std::string& dir, PciLinkState& link, AerCounts& aer,
                       std::vector<std::string>& errors) {
  if (auto t = read_attr(host, dir + "/current_link_width", k_attr_cap, errors)) {
    link.width = parse_link_width(*t);
  }
  if (auto t = read_attr(host, dir + "/max_link_width", k_attr_cap, errors)) {
    link.max_width = parse_link_width(*t);
  }
  if (auto t = read_attr(host, dir + "/current_link_speed", k_attr_cap, errors)) {
    link.speed = parse_link_speed(*t);
    link.speed_text = *t;
  }
  if (auto t = read_attr(host, dir + "/max_link_speed", k_attr_cap, errors)) {
    link.max_speed = parse_link_speed(*t);
    link.max_speed_text = *t;
  }
  if (auto t = read_attr(host, dir + "/aer_dev_fatal", k_aer_cap, errors)) {
    aer.fatal = parse_aer_total(*t, "TOTAL_ERR_FATAL");
  }
  if (auto t = read_attr(host, dir + "/aer_dev_nonfatal", k_aer_cap, errors)) {
    aer.nonfatal = parse_aer_total(*t, "TOTAL_ERR_NONFATAL");
  }
  if (auto t = read_attr(host, dir + "/aer_dev_correctable", k_aer_cap, errors)) {
    aer.correctable = parse_aer_total(*t, "TOTAL_ERR_COR");
  }
}

void read_bridge(const Host& host, const std::string& dir, const std::string& bus_id,
                 PcieFacts& pcie, std::vector<std::string>& errors) {
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
  read_link_and_aer(host, dir, bridge.link, bridge.aer, errors);
  pcie.bridges.emplace(bus_id, std::move(bridge));
}

} // namespace

ProbeStatus probe_pcie(const Host& host, const ProbeOptions&, Facts& facts) {
  ProbeStatus status;
  PcieFacts& pcie = facts.topology.pcie;
  if (!host.is_directory(k_pci_devices)) {
    return status.skip(fmt::format("/{} does not exist", k_pci_devices));
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
    const auto vendor = read_hex(host, dir + "/vendor");
    if (!vendor) {
      pcie.vendor_unreadable.push_back(bus);
      continue;
    }
    if (*vendor != k_vendor_nvidia) {
      continue;
    }
    pcie.nvidia_devices.push_back(bus);
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
      path.error = fmt::format("/{}/{} does not exist", k_pci_devices, gpu.bus_id);
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
      read_bridge(host, sysfs_prefix_through(path.path, bridge), bridge, pcie, problems);
    }
    read_link_and_aer(host, path.path, path.link, path.aer, problems);
    if (auto group = host.resolve_link(path.path + "/iommu_group"); group && *group) {
      path.iommu_group = (*group)->substr((*group)->rfind('/') + 1);
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

namespace {
const ProbeRegistration k_row{{"pcie", "PCIe topology", 700, probe_pcie}};
} // namespace

} // namespace gpf
