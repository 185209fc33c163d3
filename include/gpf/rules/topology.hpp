#pragma once
// What the PCIe/IOMMU facts say about a pair of GPUs: the bridges between them, which of those
// redirect peer-to-peer traffic (ACS), and the likely causes of a peer-to-peer hang. Shared by the
// topology rules and the CUDA probe's multi-GPU finding, so that the cause is worked out once.
#include "gpf/facts/topology_names.hpp"
#include "gpf/rules/rule.hpp"

#include <map>
#include <string>
#include <vector>

namespace gpf {

// The GPUs a job started now would use together: usable (after the GPU stage) and admitted by
// CUDA_VISIBLE_DEVICES, in PCI order.
std::vector<std::string> job_gpus(const RuleContext& c);

// The PCIe path of GPU bus_id, nullptr when the pcie probe did not find it.
const GpuPciPath* find_gpu_path(const TopologyFacts& t, const std::string& bus_id);

// The bridges peer-to-peer traffic between GPUs a and b passes: those below the deepest bridge
// both share (all of them when the GPUs sit under different host bridges). Empty when either
// path is unknown.
std::vector<std::string> bridges_between(const TopologyFacts& t, const std::string& a,
                                         const std::string& b);

// The deepest bridge both GPUs sit under, or "" when they share none (or a path is unknown).
std::string shared_bridge(const TopologyFacts& t, const std::string& a, const std::string& b);

// The given GPUs placed in the PCIe tree in one pass over their paths, so that what holds for
// every pair of them is read off the bridges in O(GPUs x depth), never a loop over pairs (2000
// GPUs are 2 million pairs). GPUs whose path is unknown are left out, as bridges_between does.
struct PcieTree {
  struct Placed {
    std::string bus_id;
    const GpuPciPath* path;
  };
  std::vector<Placed> placed;                            // in the given order
  std::map<std::string, std::vector<std::string>> under; // bridge -> GPUs below it, sorted
  // Traffic between some pair of the GPUs passes this bridge: GPUs below it and some not.
  bool between_some_pair(const std::string& bridge) const;
  // Bridges that are the deepest one some pair of GPUs shares, each with the GPUs of such pairs.
  std::map<std::string, std::vector<std::string>> shared_groups() const;
  // Pairs with both paths known and at least one bridge between or above them, and of those the
  // pairs that share no bridge.
  std::size_t known_pairs() const;
  std::size_t pairs_apart() const;
};
PcieTree place_gpus(const TopologyFacts& t, const std::vector<std::string>& gpus);

// "/sys/devices/.../0000:16:02.0/config: ACS control 0x001d at 0x148 (SrcValid+ TransBlk- ReqRedir+
// CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-)", the lspci names of the control bits.
std::string acs_evidence(const PciBridge& bridge);

// Bridges between a and b whose ACS control redirects peer-to-peer requests or completions.
std::vector<const PciBridge*> acs_redirects_between(const TopologyFacts& t, const std::string& a,
                                                    const std::string& b);

// Whether the IOMMU translates the DMA of GPU bus_id: its group's type is "DMA"/"DMA-FQ"; without
// it, another GPU group's type (the default domain type is system-wide); without any, an IOMMU with
// groups and no iommu=pt/off on the command line. nullopt = unknown.
std::optional<bool> iommu_translates(const TopologyFacts& t, const std::string& bus_id);

// One PCIe link on the path above one or more GPUs: the port at its upper end (a root port or a
// switch downstream port) and the one at its lower end (a switch upstream port or the GPU), each
// with what it reports of the link and its AER counters. The internal bus of a switch (upstream to
// downstream port) is no link. Without the ports' types (config space unreadable without root),
// links are told by position: a path runs root port, then (upstream, downstream) pairs, then the
// GPU.
struct PcieHop {
  std::string upper; // bus id
  std::string lower;
  std::string upper_path; // root-relative sysfs directory
  std::string lower_path;
  const PciLinkState* upper_link = nullptr; // nullptr: unknown port
  const PciLinkState* lower_link = nullptr;
  const AerCounts* upper_aer = nullptr;
  const AerCounts* lower_aer = nullptr;
  std::vector<std::string> gpus; // the given GPUs whose path crosses this link
  // The width the link trained at (the lower end's view, else the upper's) and the widest both
  // ends support; the same for the speed (tenths of GT/s).
  std::optional<unsigned> width() const;
  std::optional<unsigned> could_width() const;
  std::optional<unsigned> speed() const;
  std::optional<unsigned> could_speed() const;
  std::string name() const { return upper + " ↔ " + lower; } // "0000:17:00.0 ↔ 0000:18:00.0"
};

// The links on the paths of the given GPUs, from the root down, each once.
std::vector<PcieHop> pcie_hops(const TopologyFacts& t, const std::vector<std::string>& gpus);

// One line per cause the facts show for a peer-to-peer failure between GPUs a and b (ACS redirect
// on a bridge between them; the IOMMU translating their DMA on bare metal). Empty when none.
std::vector<std::string> p2p_causes(const Facts& f, const std::string& a, const std::string& b);

} // namespace gpf
