#pragma once
// What the PCIe/IOMMU facts say about a pair of GPUs: the bridges between them, which of those
// redirect peer-to-peer traffic (ACS), and the likely causes of a peer-to-peer hang. Shared by the
// topology rules and the CUDA probe's multi-GPU finding, so that the cause is worked out once.
#include "gpf/rules/rule.hpp"

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

// "switch downstream port", "root port", ... from the PCI Express capability; "bridge" if unknown.
std::string port_kind(const PciBridge& bridge);

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

// One line per cause the facts show for a peer-to-peer failure between GPUs a and b (ACS redirect
// on a bridge between them; the IOMMU translating their DMA on bare metal). Empty when none.
std::vector<std::string> p2p_causes(const Facts& f, const std::string& a, const std::string& b);

} // namespace gpf
