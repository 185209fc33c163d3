#pragma once
// Names of the topology facts, as the rules' messages and the reports print them.
#include "gpf/facts/topology_facts.hpp"

#include <string>
#include <string_view>

namespace gpf {

// "switch downstream port", "root port", ... from the PCI Express capability; "bridge" if unknown.
std::string port_kind(const PciBridge& bridge);

// "switch", "root port", "host bridge", "apart": how near a NIC is to a GPU.
std::string_view pci_distance_name(PciDistance d);

} // namespace gpf
