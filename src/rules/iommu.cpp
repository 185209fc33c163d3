// Rules whose id starts with "iommu.": the IOMMU translating GPU DMA (peer-to-peer traffic through
// the root complex).
#include "common.hpp"

namespace gpf {

std::span<const Rule> iommu_rules() {
  static const Rule rows[] = {
      {.id = "iommu.gpu-dma-fault",
       .stage = Stage::gpu,
       .severity = Severity::warn,
       .severity_from = "info in a virtual machine, where the guest cannot change the host's IOMMU",
       .title = "The IOMMU blocked no DMA of a GPU the driver runs",
       .remedy =
           "Boot with iommu=pt (add it to GRUB_CMDLINE_LINUX, update-grub, reboot) so the GPUs' DMA is not translated; "
           "until then run multi-GPU jobs with NCCL_P2P_DISABLE=1",
       .source = "https://github.com/torvalds/linux/blob/master/drivers/iommu/amd/iommu.c",
       .explanation =
           "The IOMMU logged a fault for a GPU's DMA (AMD-Vi \"Event logged [IO_PAGE_FAULT ... "
           "device=bb:dd.f]\", Intel \"DMAR: [DMA Read] Request device [bb:dd.f] fault\"): an "
           "address the GPU used was not mapped for it. On a GPU the driver runs this is what "
           "breaks peer-to-peer copies and GPUDirect RDMA: transfers return zeros or hang, and "
           "NCCL stalls. When the same GPU failed to initialise the fault is quoted with "
           "rminit.adapter-failed instead. Confirm by hand: `dmesg | grep -e IO_PAGE_FAULT -e "
           "DMAR` and `cat /proc/cmdline`. Warn (info in a virtual machine): the GPU is kept, "
           "its peer traffic is not safe.",
       .evidence = "The current boot's DMAR/AMD-Vi fault lines naming the GPU; /proc/cmdline; the "
                   "cpuinfo hypervisor flag.",
       .cases = {fires("cause-iommu-fault-p2p", "0000:07:00.0"), silent("cause-legacy-branch")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         std::vector<Hit> hits;
         for (const auto& [bus, events] : c.facts.log.gpu_events) {
           if (!listed(c.facts, bus)) {
             continue;
           }
           EventPtrs faults;
           bool failed_init = false;
           for (const auto& e : events) {
             if (e.kind == LogEventKind::dma_setup && e.detail == "iommu") {
               faults.push_back(&e);
             }
             failed_init = failed_init || ((e.kind == LogEventKind::rm_init_failed ||
                                            e.kind == LogEventKind::rm_init_minor) &&
                                           !e.before_driver_load);
           }
           if (faults.empty() || failed_init) {
             continue; // rminit.adapter-failed quotes them as its cause
           }
           Hit hit{fmt::format("{}: {}: its peer-to-peer and RDMA transfers are not safe",
                               c.job.label(bus), describe(faults)),
                   evidence_of(faults), bus};
           const auto& t = c.facts.topology.iommu;
           if (t.cmdline) {
             hit.evidence.push_back("/proc/cmdline: " + quote_evidence(*t.cmdline, 300));
           }
           if (t.hypervisor == true) {
             hit.severity = Severity::info;
             hit.evidence.emplace_back("/proc/cpuinfo flags: hypervisor");
             hit.remedy = "The faults come from the hypervisor's DMA remapping for the "
                          "passed-through GPU: run multi-GPU jobs with NCCL_P2P_DISABLE=1 and "
                          "report the GPU to the provider (on your own hypervisor, check its "
                          "vfio/IOMMU group assignment)";
           } else if (t.cmdline_passthrough) {
             hit.remedy = fmt::format(
                 "The kernel already runs with IOMMU passthrough, yet the GPU's DMA faulted: "
                 "check the BIOS's IOMMU and ACS settings and the GPU's IOMMU group (`ls "
                 "/sys/bus/pci/devices/{}/iommu_group/devices`); until then run multi-GPU jobs "
                 "with NCCL_P2P_DISABLE=1",
                 bus);
           }
           hits.push_back(std::move(hit));
         }
         return hits;
       }},
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
       .reads = {ProbeId::iommu},
       .cases = {fires("topo-iommu-translated"), silent("topo-mig-uuid")},
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
               "This is a virtual machine and its IOMMU translates the DMA of {}: peer-to-peer between passed-through GPUs depends on the host's IOMMU and ACS settings, which the guest can neither see nor change",
               counted(translated.size(), "GPU"));
           hit.remedy =
               "If multi-GPU jobs hang or are slow here, run with NCCL_P2P_DISABLE=1 and ask the provider for an instance type with GPU peer-to-peer support";
         } else {
           hit.message = fmt::format(
               "The IOMMU translates the DMA of {} (not passthrough) on bare metal: peer-to-peer traffic is redirected through the root complex, which makes NCCL slow or hang",
               counted(translated.size(), "GPU"));
         }
         return {hit};
       }},
  };
  return rows;
}

} // namespace gpf
