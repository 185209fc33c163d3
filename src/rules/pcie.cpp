// Rules whose id starts with "pcie.": PCIe between the GPUs a job uses together: ACS redirection
// and shared switches; the training and the AER error counters of every link above the GPUs.
#include "common.hpp"
#include "gpf/util/tenths.hpp"

#include <algorithm>
#include <iterator>

namespace gpf {
namespace {

constexpr std::string_view k_pci_sysfs_source =
    "https://github.com/torvalds/linux/blob/master/drivers/pci/pci-sysfs.c";
constexpr std::string_view k_aer_source =
    "https://www.kernel.org/doc/Documentation/ABI/testing/sysfs-bus-pci-devices-aer_stats";

std::string gpus_text(const RuleContext& c, const std::vector<std::string>& gpus) {
  std::vector<std::string> labels;
  for (const auto& g : gpus) {
    labels.push_back(c.job.label(g));
  }
  return join(labels);
}

std::string width_evidence(const std::string& dir, const PciLinkState* link) {
  if (!link) {
    return fmt::format("/{}: link unknown", dir);
  }
  const auto n = [](std::optional<unsigned> v) {
    return v ? std::to_string(*v) : std::string("absent");
  };
  return fmt::format("/{0}/current_link_width: {1}, /{0}/max_link_width: {2}", dir, n(link->width),
                     n(link->max_width));
}

std::string speed_evidence(const std::string& dir, const PciLinkState* link) {
  if (!link) {
    return fmt::format("/{}: link unknown", dir);
  }
  const auto t = [](const std::string& v) { return v.empty() ? std::string("absent") : v; };
  return fmt::format("/{0}/current_link_speed: {1}, /{0}/max_link_speed: {2}", dir,
                     t(link->speed_text), t(link->max_speed_text));
}

std::string gts(unsigned tenths) {
  return fmt::format("{} GT/s", tenths_text(tenths));
}

std::string aer_evidence(const std::string& dir, const AerCounts* aer) {
  const auto n = [](std::optional<std::uint64_t> v) {
    return v ? std::to_string(*v) : std::string("absent");
  };
  return fmt::format("/{0}/aer_dev_fatal: TOTAL_ERR_FATAL {1}; aer_dev_nonfatal: "
                     "TOTAL_ERR_NONFATAL {2}; aer_dev_correctable: TOTAL_ERR_COR {3}",
                     dir, n(aer->fatal), n(aer->nonfatal), n(aer->correctable));
}

std::uint64_t value(const AerCounts* aer, std::optional<std::uint64_t> AerCounts::*member) {
  return aer && aer->*member ? *(aer->*member) : 0;
}

} // namespace

std::span<const Rule> pcie_rules() {
  static const Rule
      rows
          [] =
              {
                  {.id = "pcie.acs-redirect",
                   .stage = Stage::host,
                   .severity = Severity::warn,
                   .title =
                       "No PCIe bridge between GPUs the job uses together redirects peer-to-peer traffic (ACS)",
                   .remedy =
                       "Disable ACS on the bridges in the evidence (BIOS, or `setpci -s BDF ECAP_ACS+0x6.w=0000` as root at boot), or run with NCCL_P2P_DISABLE=1 at a bandwidth cost",
                   .source =
                       "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html",
                   .explanation =
                       "PCIe Access Control Services on a switch port or root port can force peer-to-peer requests and completions up to the root complex (ReqRedir, CmpltRedir, EgressCtrl). GPU-to-GPU copies then cross the CPU's root complex and, with an IOMMU, its translation: slow at best, a hang of NCCL's first collective at worst. NVIDIA's NCCL guide asks for ACS off on bridges between GPUs. Only bridges below the deepest bridge two GPUs share are judged: the ones above both never see their peer traffic.",
                   .evidence =
                       "The `config` file (binary configuration space) of each bridge on the sysfs path of each GPU the job uses: the ACS extended capability (ID 0x000D) and its control register.",
                   .reads = {ProbeId::pcie},
                   .cases = {fires("topo-acs-redirect"), silent("topo-acs-off")},
                   .check = [](const RuleContext& c) -> std::vector<Hit> {
                     const auto& t = c.facts.topology;
                     const PcieTree tree = place_gpus(t, job_gpus(c));
                     std::vector<std::string> all;
                     for (const auto& p : tree.placed) {
                       all.push_back(p.bus_id);
                     }
                     std::sort(all.begin(), all.end());
                     std::vector<Hit> hits;
                     for (const auto& [bus, below] : tree.under) {
                       const auto found = t.pcie.bridges.find(bus);
                       if (!tree.between_some_pair(bus) || found == t.pcie.bridges.end() ||
                           !found->second.config.acs ||
                           !found->second.config.acs->redirects_p2p()) {
                         continue;
                       }
                       const PciBridge& bridge = found->second;
                       std::vector<std::string>
                           others; // the GPUs of pairs whose traffic it redirects
                       std::set_difference(all.begin(), all.end(), below.begin(), below.end(),
                                           std::back_inserter(others));
                       const std::string pair_text =
                           fmt::format("between {} {} and {}", plural(below.size(), "GPU"),
                                       join_some(below), join_some(others));
                       Hit hit{
                           fmt::format(
                               "ACS redirect is enabled on {} {} above {} {}: peer-to-peer traffic {} is sent up to the root complex instead of across the switch (slow, and a hang when the root complex or the IOMMU does not pass it on)",
                               port_kind(bridge), bus, plural(below.size(), "GPU"),
                               join_some(below), pair_text),
                           {acs_evidence(bridge)}};
                       hit.remedy = fmt::format(
                           "Disable ACS on {0}: in the BIOS (PCIe ACS / \"ACS Control\" off), or as root at every boot with `setpci -s {0} ECAP_ACS+0x6.w=0000`; "
                           "until then NCCL_P2P_DISABLE=1 avoids peer-to-peer copies at a bandwidth cost. "
                           "Keep ACS if the host passes GPUs to VMs (it isolates them)",
                           bus);
                       hits.push_back(std::move(hit));
                     }
                     return hits;
                   }},
                  {.id = "pcie.acs-not-checked",
                   .stage = Stage::host,
                   .severity = Severity::info,
                   .title = "ACS could be read on the bridges between the GPUs",
                   .remedy =
                       "Run gpu-preflight (or `gpu-preflight snapshot`) as root: only root can read PCI configuration space beyond the first 64 bytes",
                   .source =
                       "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html",
                   .explanation =
                       "Without root, sysfs returns only the first 64 bytes of a device's configuration space, so the ACS capability (in the extended space) cannot be read. That is reported as not checked, never as 'no ACS'. A looping or truncated capability list is reported the same way.",
                   .evidence =
                       "The length and capability lists of the `config` files of the bridges between the GPUs.",
                   .cases = {fires("topo-acs-unreadable"), silent("topo-acs-off")},
                   .check = [](const RuleContext& c) -> std::vector<Hit> {
                     const auto& t = c.facts.topology;
                     const PcieTree tree = place_gpus(t, job_gpus(c));
                     std::vector<std::string> unknown;
                     for (const auto& [bus, below] : tree.under) {
                       const auto it = t.pcie.bridges.find(bus);
                       if (tree.between_some_pair(bus) && it != t.pcie.bridges.end() &&
                           it->second.config.acs_state == AcsState::unknown) {
                         unknown.push_back(bus);
                       }
                     }
                     if (unknown.empty()) {
                       return {};
                     }
                     std::vector<std::string> evidence;
                     std::size_t dropped = 0;
                     for (const auto& bus : unknown) {
                       add_capped(evidence, acs_evidence(t.pcie.bridges.at(bus)), dropped);
                     }
                     if (dropped > 0) {
                       evidence.push_back(fmt::format("... and {} more bridges", dropped));
                     }
                     return {
                         {fmt::format(
                              "ACS on {} between the GPUs was not checked: their extended configuration space could not be read",
                              counted(unknown.size(), "bridge")),
                          std::move(evidence)}};
                   }},
                  {.id = "pcie.gpu-pairs-share-switch",
                   .stage = Stage::host,
                   .severity = Severity::info,
                   .title = "Which GPUs share a PCIe switch or port",
                   .remedy =
                       "Nothing to do; put the GPUs that exchange the most data (e.g. a tensor-parallel group) under one switch",
                   .source =
                       "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html",
                   .explanation =
                       "GPUs under one PCIe switch exchange peer-to-peer traffic inside the switch; pairs under different root ports or host bridges go through the CPU's root complex (or the inter-socket link). Useful for placing tensor-parallel groups; not a problem in itself.",
                   .evidence =
                       "The sysfs paths of the GPUs (sys/bus/pci/devices/* links into sys/devices/...) and the PCI Express port types of their bridges.",
                   .cases = {fires("healthy-4gpu"), silent("compat-cuda130-v100")},
                   .check = [](const RuleContext& c) -> std::vector<Hit> {
                     const auto& t = c.facts.topology;
                     const PcieTree tree = place_gpus(t, job_gpus(c));
                     if (tree.known_pairs() == 0) {
                       return {};
                     }
                     const auto groups = tree.shared_groups(); // deepest shared bridge -> GPUs
                     const std::size_t apart = tree.pairs_apart();
                     std::vector<std::string> evidence;
                     for (const auto& [bus, members] : groups) {
                       const auto it = t.pcie.bridges.find(bus);
                       const std::string kind =
                           it == t.pcie.bridges.end() ? "bridge" : port_kind(it->second);
                       evidence.push_back(
                           fmt::format("{} {}: GPUs {}", kind, bus, join_some(members)));
                     }
                     if (apart > 0) {
                       evidence.push_back(fmt::format(
                           "{} {} no PCIe bridge: their traffic crosses the CPU's root complex",
                           counted(apart, "GPU pair"), apart == 1 ? "shares" : "share"));
                     }
                     return {
                         {groups.empty()
                              ? std::string(
                                    "No two GPUs share a PCIe switch or port: peer-to-peer traffic crosses the root complex")
                              : fmt::format("{} of GPUs {} a PCIe switch or port",
                                            counted(groups.size(), "group"),
                                            groups.size() == 1 ? "shares" : "share"),
                          std::move(evidence)}};
                   }},
                  {.id = "pcie.link-downtrained",
                   .stage = Stage::host,
                   .severity = Severity::warn,
                   .title =
                       "Every PCIe link above the GPUs trained at the width both of its ends support",
                   .remedy =
                       "Reseat the GPU (or the riser, cable or switch board named in the evidence) and check the slot's lane bifurcation in the BIOS; `sudo lspci -vv -s BDF` shows LnkCap and LnkSta",
                   .source = k_pci_sysfs_source,
                   .explanation =
                       "Each PCIe link trains to a width when the host starts. A link that trains narrower than both of its ends support (x8 where both can do x16) has a fraction of its bandwidth for as long as the host runs: host-to-GPU copies and data loading through it are slower, with no error anywhere. It usually means a badly seated card or riser, a damaged cable or connector, or a BIOS bifurcation setting. The check walks every link from the root port down to each GPU, including the links of the PCIe switches between them; the internal bus of a switch is no link. The GPU stays usable.",
                   .evidence =
                       "current_link_width and max_link_width of both ends of each link (sysfs, the device directories of the GPUs and of the bridges above them).",
                   .cases = {fires("pcie-link-gpu-x8", "0000:18:00.0"), silent("pcie-link-absent")},
                   .check = [](const RuleContext& c) -> std::
                                                         vector<Hit> {
                                                           std::vector<Hit> hits;
                                                           for (const auto& hop :
                                                                pcie_hops(c.facts.topology,
                                                                          job_gpus(c))) {
                                                             const auto got = hop.width();
                                                             const auto could = hop.could_width();
                                                             // The predicate
                                                             // nvml.pcie-width-degraded shares.
                                                             if (!got || !could ||
                                                                 !LinkWidth{*got, *could}
                                                                      .downtrained()) {
                                                               continue;
                                                             }
                                                             Hit hit{
                                                                 fmt::format(
                                                                     "PCIe link {} trained x{} of x{}: {}% of its bandwidth, above {}",
                                                                     hop.name(), *got, *could,
                                                                     *got * 100 / *could,
                                                                     gpus_text(c, hop.gpus)),
                                                                 {width_evidence(hop.upper_path,
                                                                                 hop.upper_link),
                                                                  width_evidence(hop.lower_path,
                                                                                 hop.lower_link)}};
                                                             if (hop.gpus.size() == 1) {
                                                               hit.gpu = hop.gpus.front();
                                                             }
                                                             hit.remedy = fmt::format(
                                                                 "Reseat {1} (and the riser or cable between it and {0}) and check the lane bifurcation of that slot in the BIOS; "
                                                                 "`sudo lspci -vv -s {1}` should then show LnkSta Width x{2}. The GPU stays usable meanwhile, at lower host-to-GPU bandwidth",
                                                                 hop.upper, hop.lower, *could);
                                                             hits.push_back(std::move(hit));
                                                           }
                                                           return hits;
                                                         }},
                  {.id = "pcie.link-slow",
                   .stage = Stage::host,
                   .severity = Severity::info,
                   .title = "Which PCIe links above the GPUs run below their top speed",
                   .remedy =
                       "Nothing to do on an idle host (links slow down to save power); if the link stays slow while the GPU copies data, reseat the card and check the slot's PCIe generation setting in the BIOS",
                   .source = k_pci_sysfs_source,
                   .explanation =
                       "A PCIe link's speed (its generation) changes at run time: an idle GPU drops its link to 2.5 GT/s and trains it back up under load. A speed below the maximum read while the host is idle says nothing by itself, so it is information only; a link that stays at a lower generation under load loses most of its bandwidth.",
                   .evidence =
                       "current_link_speed and max_link_speed of both ends of each link above the GPUs (sysfs).",
                   .cases = {fires("pcie-link-uplink-x8"), silent("pcie-link-absent")},
                   .check = [](const RuleContext& c) -> std::vector<Hit> {
                     std::vector<std::string> evidence;
                     std::vector<std::string> names;
                     std::size_t dropped = 0;
                     for (const auto& hop : pcie_hops(c.facts.topology, job_gpus(c))) {
                       const auto got = hop.speed();
                       const auto could = hop.could_speed();
                       if (!got || !could || *got >= *could) {
                         continue;
                       }
                       names.push_back(
                           fmt::format("{} at {} of {}", hop.name(), gts(*got), gts(*could)));
                       add_capped(evidence, speed_evidence(hop.lower_path, hop.lower_link),
                                  dropped);
                     }
                     if (names.empty()) {
                       return {};
                     }
                     if (dropped > 0) {
                       evidence.push_back(fmt::format("... and {} more links", dropped));
                     }
                     return {{fmt::format("{} run below their top speed (normal while idle): {}",
                                          counted(names.size(), "PCIe link"), join(names)),
                              std::move(evidence)}};
                   }},
                  {.id = "pcie.aer-errors",
                   .stage = Stage::host,
                   .severity = Severity::warn,
                   .severity_from = "info when a link counted only correctable errors",
                   .title = "No PCIe link above the GPUs counted AER errors since boot",
                   .remedy =
                       "Reseat the card, riser or cable of the link in the evidence; if errors keep counting, have the slot, riser or GPU replaced",
                   .source = k_aer_source,
                   .explanation =
                       "PCIe Advanced Error Reporting counts the errors each port saw since boot (aer_dev_fatal, aer_dev_nonfatal, aer_dev_correctable; only their TOTAL_ERR_* lines are the same on every kernel). A device's error is often counted by its link partner instead of the faulty device, so counts are attributed to the link, both ends together. Uncorrectable errors (fatal, non-fatal) lose or corrupt transactions and often precede a GPU falling off the bus: a warning for the GPUs behind that link. Correctable errors are retried by the link layer and cost bandwidth only; they are information. The root ports' aer_rootport_total_err_* counters sum their whole subtree and are not added.",
                   .evidence =
                       "The TOTAL_ERR_* lines of aer_dev_* of both ends of each link (sysfs).",
                   .cases = {fires("pcie-aer-bridge", "0000:2a:00.0"), silent("pcie-link-absent")},
                   .check = [](const RuleContext& c) -> std::vector<Hit> {
                     std::vector<Hit> hits;
                     for (const auto& hop : pcie_hops(c.facts.topology, job_gpus(c))) {
                       const std::uint64_t fatal = value(hop.upper_aer, &AerCounts::fatal) +
                                                   value(hop.lower_aer, &AerCounts::fatal);
                       const std::uint64_t nonfatal = value(hop.upper_aer, &AerCounts::nonfatal) +
                                                      value(hop.lower_aer, &AerCounts::nonfatal);
                       const std::uint64_t cor = value(hop.upper_aer, &AerCounts::correctable) +
                                                 value(hop.lower_aer, &AerCounts::correctable);
                       if (fatal + nonfatal + cor == 0) {
                         continue;
                       }
                       std::vector<std::string> evidence;
                       if (hop.upper_aer && hop.upper_aer->known()) {
                         evidence.push_back(aer_evidence(hop.upper_path, hop.upper_aer));
                       }
                       if (hop.lower_aer && hop.lower_aer->known()) {
                         evidence.push_back(aer_evidence(hop.lower_path, hop.lower_aer));
                       }
                       Hit hit{
                           fmt::format(
                               "PCIe link {} counted {} fatal, {} non-fatal and {} correctable AER {} since boot, above {}",
                               hop.name(), fatal, nonfatal, cor,
                               plural(fatal + nonfatal + cor, "error"), gpus_text(c, hop.gpus)),
                           std::move(evidence)};
                       if (hop.gpus.size() == 1) {
                         hit.gpu = hop.gpus.front();
                       }
                       if (fatal + nonfatal == 0) {
                         hit.severity = Severity::info;
                         hit.remedy = fmt::format(
                             "Nothing to do unless the count grows quickly (compare with a later run); {} correctable {} {} retried by the link",
                             cor, plural(cor, "error"), cor == 1 ? "is" : "are");
                       } else {
                         hit.remedy = fmt::format(
                             "Reseat the card or riser between {} and {}; the uncorrectable errors can corrupt transfers and often precede a GPU falling off the bus. "
                             "If they recur after a reboot, have the slot, riser or GPU replaced",
                             hop.upper, hop.lower);
                       }
                       hits.push_back(std::move(hit));
                     }
                     return hits;
                   }},
              };
  return rows;
}

} // namespace gpf
