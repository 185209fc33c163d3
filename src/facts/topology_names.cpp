// Names of the topology facts, for the rules' messages and the reports. PCI Express port types:
// PCI Express Base specification, PCI Express Capabilities register (Device/Port Type).
#include "gpf/facts/topology_names.hpp"

#include "gpf/util/enum_names.hpp"

namespace gpf {

std::string port_kind(const PciBridge& bridge) {
  if (!bridge.config.port_type) {
    return "bridge";
  }
  switch (*bridge.config.port_type) {
  case 4:
    return "root port";
  case 5:
    return "switch upstream port";
  case 6:
    return "switch downstream port";
  case 7:
    return "PCIe-to-PCI bridge";
  case 8:
    return "PCI-to-PCIe bridge";
  default:
    return "bridge";
  }
}

std::string_view pci_distance_name(PciDistance d) {
  static constexpr auto k_names =
      enum_names<PciDistance::apart>({"switch", "root port", "host bridge", "apart"});
  return k_names(d);
}

} // namespace gpf
