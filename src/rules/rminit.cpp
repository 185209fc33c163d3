// Rules whose id starts with "rminit.": RmInitAdapter failures: a GPU the driver could not
// initialise.
#include "common.hpp"

namespace gpf {
namespace {

// Beside an RmInitAdapter failure, the same boot's lines that say why the GPU's DMA/BAR set-up
// failed (an invalid or unassigned BAR, an IOMMU or vfio fault naming the GPU) become evidence,
// and the likely cause leads the message and the remedy: in a virtual machine (the cpuinfo
// hypervisor flag) the hypervisor's PCI pass-through did not map the BAR; on bare metal the
// firmware did not place it.
void add_dma_cause(const RuleContext& c, Hit& hit) {
  if (!hit.gpu || hit.effect != Effect::gpu_unusable) {
    return;
  }
  const auto it = c.facts.log.gpu_events.find(*hit.gpu);
  if (it == c.facts.log.gpu_events.end()) {
    return;
  }
  EventPtrs why;
  bool bar = false;
  bool iommu = false;
  for (const auto& e : it->second) {
    if (e.kind == LogEventKind::bar_invalid ||
        (e.kind == LogEventKind::dma_setup && e.detail != "iommu")) {
      bar = true;
      why.push_back(&e);
    } else if (e.kind == LogEventKind::dma_setup) {
      iommu = true;
      why.push_back(&e);
    }
  }
  if (why.empty()) {
    return;
  }
  for (auto& line : evidence_of(why)) {
    hit.evidence.push_back(std::move(line));
  }
  const std::optional<bool> vm = c.facts.topology.iommu.hypervisor;
  std::string cause;
  std::string remedy;
  if (bar) {
    if (vm == true) {
      cause = "the hypervisor's PCI pass-through did not map the GPU's BAR (this is a virtual "
              "machine: cpuinfo has the hypervisor flag)";
      remedy = "The GPU's PCI BAR was not mapped by the hypervisor's pass-through: on a cloud "
               "instance, stop and start it so it lands on other hardware and report the GPU to "
               "the provider; on your own hypervisor, give the VM a 64-bit MMIO window large "
               "enough for the GPU's BARs, then reboot the VM";
    } else if (vm == false) {
      cause = "the firmware did not place the GPU's large BAR (bare metal)";
      remedy = "Enable \"Above 4G decoding\" (and Resizable BAR where offered) in the BIOS/UEFI "
               "set-up, or boot the kernel with pci=realloc, then reboot";
    } else {
      cause = "the GPU's PCI BAR was not mapped";
      remedy =
          "In a virtual machine, the hypervisor's PCI pass-through did not map the GPU's BAR "
          "(on a cloud instance, stop and start it and report the GPU to the provider); on "
          "bare metal, enable \"Above 4G decoding\" (and Resizable BAR) in the BIOS/UEFI set-up "
          "or boot with pci=realloc; then reboot";
    }
  } else if (iommu) {
    cause = vm == true ? "the IOMMU blocked the GPU's DMA (in a virtual machine: the hypervisor's "
                         "DMA remapping for the passed-through GPU)"
                       : "the IOMMU blocked the GPU's DMA";
    remedy = vm == true ? "The hypervisor's DMA remapping for the passed-through GPU failed: on a "
                          "cloud instance, stop and start it and report the GPU to the provider; "
                          "on your own hypervisor, check the GPU's vfio/IOMMU group assignment"
                        : "The IOMMU faulted on the GPU's DMA: boot with iommu=pt (or check "
                          "intel_iommu=/amd_iommu=), then reboot";
  }
  hit.message += fmt::format(" — likely cause: {}", cause);
  hit.remedy = remedy;
}

} // namespace

std::span<const Rule> rminit_rules() {
  static const Rule rows[] = {
      {.id = "rminit.adapter-failed",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .severity_from = "info for a failure logged before the last driver reload",
       .title = "No GPU failed to initialise (RmInitAdapter failed)",
       .remedy =
           "Reset the GPU or reboot; if it fails again, the stage named in the finding says where to look",
       .source = "docs/sources.md#rminitadapter-failures",
       .explanation =
           "The driver logs RmInitAdapter failed! (0xAA:0xBB:N) when it cannot initialise a GPU; AA names the stage (RM_INIT_*), BB the NV_STATUS. A DMA/BAR stage failure (0x26) usually has its reason a few lines away in the same boot: an invalid or unassigned BAR (BAR1 is 0M, no space for the BAR, Cannot reserve BAR), or an IOMMU/vfio fault naming the GPU. Those lines are quoted with the finding, and the likely cause follows from where the check runs: in a virtual machine the hypervisor's PCI pass-through did not map the BAR; on bare metal the firmware did not place it (Above 4G decoding, Resizable BAR).",
       .evidence =
           "The RmInitAdapter line; the same boot's BAR, DMAR/AMD-Vi and vfio lines naming the GPU; the cpuinfo hypervisor flag decides VM or bare metal.",
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         auto hits = gpu_events_rule(c, "rminit.adapter-failed",
                                     {Effect::gpu_unusable, true, false, rm_init_remedy});
         for (auto& hit : hits) {
           add_dma_cause(c, hit);
         }
         // "rm_init_adapter failed, device minor number N" without a bus id: the GPU with that
         // minor.
         for (const auto& e : c.facts.log.host_events) {
           if (e.kind != LogEventKind::rm_init_minor || !e.device_minor) {
             continue;
           }
           const auto gpu =
               std::find_if(c.facts.gpus.begin(), c.facts.gpus.end(),
                            [&](const GpuFacts& g) { return g.device_minor == e.device_minor; });
           if (gpu == c.facts.gpus.end()) {
             continue;
           }
           const EventPtrs one{&e};
           Hit hit{fmt::format("{}: {}", c.job.label(gpu->bus_id), describe(one)), evidence_of(one),
                   gpu->bus_id, e.before_driver_load ? Effect::none : Effect::gpu_unusable};
           if (e.before_driver_load) {
             hit.severity = Severity::info;
             hit.message += " — before the last driver reload; no longer counted";
           }
           hits.push_back(std::move(hit));
         }
         return hits;
       }},
  };
  return rows;
}

} // namespace gpf
