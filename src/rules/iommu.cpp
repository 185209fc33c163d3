// Rules whose id starts with "iommu.": the IOMMU translating GPU DMA (peer-to-peer traffic through
// the root complex).
#include "common.hpp"

namespace gpf {

std::span<const Rule> iommu_rules() {
  static const Rule rows[] = {
      {.id = "iommu.not-passthrough",
       .stage = Stage::host,
       .severity = Severity::warn,
       .severity_from = "info in a virtual machine, where the guest cannot change the host's IOMMU",
       .title = "The IOMMU does not translate GPU DMA on a multi-GPU host",
       .remedy =
           "Boot with iommu=pt (add it to GRUB_CMDLINE_LINUX, update-grub, reboot), or turn VT-d/AMD-Vi off in the BIOS if nothing needs the IOMMU; "
           "NCCL_P2P_DISABLE=1 works around it at a bandwidth cost",
       .source = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html",
       .explanation =
           "An IOMMU that translates the GPUs' DMA (group type DMA or DMA-FQ) makes peer-to-peer traffic go through the root complex for address translation; NCCL then runs slowly or hangs. NVIDIA's NCCL guide recommends iommu=pt (passthrough) or VT-d/AMD-Vi off on bare metal. In a virtual machine the guest sees the hypervisor's virtual IOMMU and cannot fix the host, so the finding explains instead of warning.",
       .evidence =
           "The type of each GPU's IOMMU group (sys/kernel/iommu_groups/N/type), else the IOMMU groups and units with the kernel command line (iommu=pt, iommu.passthrough=1, *iommu=off); the hypervisor flag of /proc/cpuinfo.",
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto gpus = job_gpus(c);
         const auto& t = c.facts.topology;
         if (gpus.size() < 2) {
           return {};
         }
         std::vector<std::string> translated;
         std::vector<std::string> evidence;
         std::set<std::string> groups_seen;
         for (const auto& g : gpus) {
           if (iommu_translates(t, g) != true) {
             continue;
           }
           translated.push_back(g);
           const auto* path = find_gpu_path(t, g);
           if (path && path->iommu_group && groups_seen.insert(*path->iommu_group).second &&
               evidence.size() < k_max_lines / 2) {
             if (auto type = t.iommu.group_type.find(*path->iommu_group);
                 type != t.iommu.group_type.end()) {
               evidence.push_back(fmt::format("/sys/kernel/iommu_groups/{}/type: {} — {}",
                                              *path->iommu_group, type->second, c.job.label(g)));
             }
           }
         }
         if (translated.empty()) {
           return {};
         }
         if (t.iommu.groups) {
           evidence.push_back(fmt::format("/sys/kernel/iommu_groups: {} groups", *t.iommu.groups));
         }
         if (t.iommu.cmdline) {
           evidence.push_back("/proc/cmdline: " + quote_evidence(*t.iommu.cmdline, 300));
         }
         Hit hit;
         hit.evidence = std::move(evidence);
         if (t.iommu.hypervisor == true) {
           hit.severity = Severity::info;
           hit.evidence.push_back("/proc/cpuinfo flags: hypervisor");
           hit.message = fmt::format(
               "This is a virtual machine and its IOMMU translates the DMA of {} GPU(s): peer-to-peer between passed-through GPUs depends on the host's IOMMU and ACS settings, which the guest can neither see nor change",
               translated.size());
           hit.remedy =
               "If multi-GPU jobs hang or are slow here, run with NCCL_P2P_DISABLE=1 and ask the provider for an instance type with GPU peer-to-peer support";
         } else {
           hit.message = fmt::format(
               "The IOMMU translates the DMA of {} GPU(s) (not passthrough) on bare metal: peer-to-peer traffic is redirected through the root complex, which makes NCCL slow or hang",
               translated.size());
         }
         return {hit};
       }},
  };
  return rows;
}

} // namespace gpf
