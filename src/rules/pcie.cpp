// Rules whose id starts with "pcie.": PCIe between the GPUs a job uses together: ACS redirection
// and shared switches.
#include "common.hpp"

namespace gpf {

std::span<const Rule> pcie_rules() {
  static const Rule rows[] = {
      {.id = "pcie.acs-redirect",
       .stage = Stage::host,
       .severity = Severity::warn,
       .title =
           "No PCIe bridge between GPUs the job uses together redirects peer-to-peer traffic (ACS)",
       .remedy =
           "Disable ACS on the bridges in the evidence (BIOS, or `setpci -s BDF ECAP_ACS+0x6.w=0000` as root at boot), or run with NCCL_P2P_DISABLE=1 at a bandwidth cost",
       .source = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html",
       .explanation =
           "PCIe Access Control Services on a switch port or root port can force peer-to-peer requests and completions up to the root complex (ReqRedir, CmpltRedir, EgressCtrl). GPU-to-GPU copies then cross the CPU's root complex and, with an IOMMU, its translation: slow at best, a hang of NCCL's first collective at worst. NVIDIA's NCCL guide asks for ACS off on bridges between GPUs. Only bridges below the deepest bridge two GPUs share are judged: the ones above both never see their peer traffic.",
       .evidence =
           "The `config` file (binary configuration space) of each bridge on the sysfs path of each GPU the job uses: the ACS extended capability (ID 0x000D) and its control register.",
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto gpus = job_gpus(c);
         const auto& t = c.facts.topology;
         std::map<std::string, std::set<std::string>>
             peers; // bridge -> GPUs whose traffic it redirects
         for (std::size_t i = 0; i < gpus.size(); ++i) {
           for (std::size_t j = i + 1; j < gpus.size(); ++j) {
             for (const PciBridge* bridge : acs_redirects_between(t, gpus[i], gpus[j])) {
               peers[bridge->bus_id].insert(gpus[i]);
               peers[bridge->bus_id].insert(gpus[j]);
             }
           }
         }
         std::vector<Hit> hits;
         for (const auto& [bus, involved] : peers) {
           const PciBridge& bridge = t.pcie.bridges.at(bus);
           std::vector<std::string> below;
           std::vector<std::string> others;
           for (const auto& g : involved) {
             const auto* path = find_gpu_path(t, g);
             const bool under = path && std::find(path->bridges.begin(), path->bridges.end(),
                                                  bus) != path->bridges.end();
             (under ? below : others).push_back(g);
           }
           const std::string pair_text =
               others.empty() ? fmt::format("between GPUs {}", join(below))
                              : fmt::format("between GPU(s) {} and {}", join(below), join(others));
           Hit hit{
               fmt::format(
                   "ACS redirect is enabled on {} {} above GPU(s) {}: peer-to-peer traffic {} is sent up to the root complex instead of across the switch (slow, and a hang when the root complex or the IOMMU does not pass it on)",
                   port_kind(bridge), bus, join(below), pair_text),
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
       .source = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html",
       .explanation =
           "Without root, sysfs returns only the first 64 bytes of a device's configuration space, so the ACS capability (in the extended space) cannot be read. That is reported as not checked, never as 'no ACS'. A looping or truncated capability list is reported the same way.",
       .evidence =
           "The length and capability lists of the `config` files of the bridges between the GPUs.",
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto gpus = job_gpus(c);
         const auto& t = c.facts.topology;
         std::set<std::string> unknown;
         for (std::size_t i = 0; i < gpus.size(); ++i) {
           for (std::size_t j = i + 1; j < gpus.size(); ++j) {
             for (const auto& bus : bridges_between(t, gpus[i], gpus[j])) {
               const auto it = t.pcie.bridges.find(bus);
               if (it != t.pcie.bridges.end() && it->second.config.acs_state == AcsState::unknown) {
                 unknown.insert(bus);
               }
             }
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
                  "ACS on {} bridge(s) between the GPUs was not checked: their extended configuration space could not be read",
                  unknown.size()),
              std::move(evidence)}};
       }},
      {.id = "pcie.gpu-pairs-share-switch",
       .stage = Stage::host,
       .severity = Severity::info,
       .title = "Which GPUs share a PCIe switch or port",
       .remedy =
           "Nothing to do; put the GPUs that exchange the most data (e.g. a tensor-parallel group) under one switch",
       .source = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html",
       .explanation =
           "GPUs under one PCIe switch exchange peer-to-peer traffic inside the switch; pairs under different root ports or host bridges go through the CPU's root complex (or the inter-socket link). Useful for placing tensor-parallel groups; not a problem in itself.",
       .evidence =
           "The sysfs paths of the GPUs (sys/bus/pci/devices/* links into sys/devices/...) and the PCI Express port types of their bridges.",
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto gpus = job_gpus(c);
         const auto& t = c.facts.topology;
         std::map<std::string, std::set<std::string>> groups; // deepest shared bridge -> GPUs
         std::size_t apart = 0;
         std::size_t known_pairs = 0;
         for (std::size_t i = 0; i < gpus.size(); ++i) {
           for (std::size_t j = i + 1; j < gpus.size(); ++j) {
             const auto between = bridges_between(t, gpus[i], gpus[j]);
             const auto shared = shared_bridge(t, gpus[i], gpus[j]);
             if (between.empty() && shared.empty()) {
               continue; // a path is unknown
             }
             ++known_pairs;
             if (shared.empty()) {
               ++apart;
             } else {
               groups[shared].insert(gpus[i]);
               groups[shared].insert(gpus[j]);
             }
           }
         }
         if (known_pairs == 0) {
           return {};
         }
         std::vector<std::string> evidence;
         for (const auto& [bus, members] : groups) {
           const auto it = t.pcie.bridges.find(bus);
           const std::string kind = it == t.pcie.bridges.end() ? "bridge" : port_kind(it->second);
           evidence.push_back(
               fmt::format("{} {}: GPUs {}", kind, bus, join({members.begin(), members.end()})));
         }
         if (apart > 0) {
           evidence.push_back(fmt::format(
               "{} GPU pair(s) share no PCIe bridge: their traffic crosses the CPU's root complex",
               apart));
         }
         return {
             {groups.empty()
                  ? std::string(
                        "No two GPUs share a PCIe switch or port: peer-to-peer traffic crosses the root complex")
                  : fmt::format("{} group(s) of GPUs share a PCIe switch or port", groups.size()),
              std::move(evidence)}};
       }},
  };
  return rows;
}

} // namespace gpf
