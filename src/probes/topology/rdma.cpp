// Probe "rdma": the RDMA devices (InfiniBand HCAs, RoCE NICs) in sys/class/infiniband, the state,
// physical state, rate and link layer of each port, the PCI function and PCIe path of each device,
// and the device nearest to each GPU on the PCIe tree; the version of the GPUDirect RDMA
// peer-memory module nvidia_peermem in sys/module. Facts: Linux ABI
// sysfs-class-infiniband,
// https://www.kernel.org/doc/Documentation/ABI/stable/sysfs-class-infiniband
#include "gpf/probes/probes.hpp"
#include "gpf/probes/topology_parsers.hpp"
#include "gpf/util/text.hpp"

#include <fmt/format.h>

namespace gpf {
namespace {

constexpr std::string_view k_class = "sys/class/infiniband";
constexpr std::size_t k_attr_cap = 256;
constexpr std::size_t k_max_ports = 64;

// The attribute's text; nullopt when absent; the first unreadable one is recorded in error.
std::optional<std::string> read_attr(const Host& host, const std::string& path,
                                     std::string& error) {
  auto text = host.read_attribute(path, k_attr_cap);
  if (!text) {
    if (error.empty()) {
      error = path + ": " + text.error().message;
    }
    return std::nullopt;
  }
  return *text;
}

IbPort read_port(const Host& host, const std::string& dir, unsigned number) {
  IbPort port;
  port.port = number;
  if (auto t = read_attr(host, dir + "/state", port.error)) {
    if (auto s = parse_ib_state(*t)) {
      port.state_code = s->code;
      port.state = s->name;
    } else {
      port.state = quote_evidence(*t, 64);
    }
  }
  if (auto t = read_attr(host, dir + "/phys_state", port.error)) {
    if (auto s = parse_ib_state(*t)) {
      port.phys_state_code = s->code;
      port.phys_state = s->name;
    } else {
      port.phys_state = quote_evidence(*t, 64);
    }
  }
  if (auto t = read_attr(host, dir + "/rate", port.error)) {
    port.rate = parse_ib_rate(*t);
    port.rate_text = quote_evidence(*t, 64);
  }
  if (auto t = read_attr(host, dir + "/link_layer", port.error)) {
    port.link_layer = quote_evidence(*t, 64);
  }
  return port;
}

// A PCI function's NUMA node; nullopt when it cannot be told (no attribute, unreadable, garbage).
std::optional<int> read_numa(const Host& host, const std::string& pci_dir) {
  auto text = host.read_attribute(pci_dir + "/numa_node", 32);
  if (!text || !*text) {
    return std::nullopt;
  }
  const std::string_view t = **text;
  if (t == "-1") {
    return -1;
  }
  if (auto v = parse_uint(t); v && *v < 4096) {
    return static_cast<int>(*v);
  }
  return std::nullopt;
}

PciDistance distance(const GpuPciPath& gpu, const RdmaDevice& nic) {
  if (gpu.root != nic.root || gpu.root.empty()) {
    return PciDistance::apart;
  }
  std::size_t k = 0;
  while (k < gpu.bridges.size() && k < nic.bridges.size() && gpu.bridges[k] == nic.bridges[k]) {
    ++k;
  }
  return k >= 2   ? PciDistance::switch_shared
         : k == 1 ? PciDistance::root_port
                  : PciDistance::host_bridge;
}

} // namespace

ProbeStatus probe_rdma(const Host& host, const ProbeOptions&, Facts& facts) {
  ProbeStatus status;
  RdmaFacts& rdma = facts.topology.rdma;
  std::string module_error;
  rdma.peermem_version = read_attr(host, "sys/module/nvidia_peermem/version", module_error);
  if (!module_error.empty()) {
    status.fail(module_error);
  }
  if (host.absent(k_class)) {
    return module_error.empty()
               ? status.skip(fmt::format("/{} does not exist (no RDMA driver loaded)", k_class))
               : status;
  }
  auto names = host.list_dir(k_class);
  if (!names) {
    return status.fail_also(std::string(k_class) + ": " + names.error().message);
  }
  rdma.ran = true;
  std::vector<std::string> problems;
  for (const auto& name : *names) {
    RdmaDevice dev;
    dev.name = name;
    const std::string entry = std::string(k_class) + "/" + name;
    auto dir = host.resolve_link(entry);
    dev.path = dir && *dir ? **dir : entry;
    const auto parsed = parse_sysfs_pci_path(dev.path);
    if (!parsed.devices.empty()) {
      dev.bus_id = parsed.devices.back();
      dev.root = parsed.root;
      dev.bridges.assign(parsed.devices.begin(), parsed.devices.end() - 1);
      if (const auto pci_dir = sysfs_prefix_through(dev.path, dev.bus_id); !pci_dir.empty()) {
        dev.numa_node = read_numa(host, pci_dir);
      }
    }
    const std::string ports_dir = dev.path + "/ports";
    if (auto ports = host.list_dir(ports_dir)) {
      for (const auto& p : *ports) {
        const auto number = parse_uint(p);
        if (!number || dev.ports.size() >= k_max_ports) {
          continue;
        }
        dev.ports.push_back(read_port(host, ports_dir + "/" + p, static_cast<unsigned>(*number)));
        if (!dev.ports.back().error.empty()) {
          problems.push_back(dev.ports.back().error);
        }
      }
    } else if (!host.absent(ports_dir)) {
      problems.push_back(ports_dir + ": " + ports.error().message);
    }
    rdma.devices.push_back(std::move(dev));
  }
  // the nearest RDMA device of each GPU: deepest shared PCIe bridge, then the first by name
  for (const auto& gpu : facts.topology.pcie.gpus) {
    if (!gpu.error.empty() || gpu.path.empty()) {
      continue;
    }
    const RdmaDevice* best = nullptr;
    PciDistance best_distance = PciDistance::apart;
    for (const auto& dev : rdma.devices) {
      if (dev.bus_id.empty()) {
        continue;
      }
      const auto d = distance(gpu, dev);
      if (!best || d < best_distance) {
        best = &dev;
        best_distance = d;
      }
    }
    if (best) {
      rdma.nearest.push_back({gpu.bus_id, best->name, best->bus_id, best_distance,
                              read_numa(host, gpu.path), best->numa_node});
    }
  }
  if (!problems.empty()) {
    status.fail_also(fmt::format("{}", fmt::join(problems, "; ")));
  }
  return status;
}

namespace {
const ProbeRegistration k_row{{"rdma", "InfiniBand/RoCE ports", 1300, probe_rdma}};
} // namespace

} // namespace gpf
