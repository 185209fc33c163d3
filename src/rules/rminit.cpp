// Rules whose id starts with "rminit.": RmInitAdapter failures: a GPU the driver could not
// initialise.
#include "causes.hpp"
#include "common.hpp"

namespace gpf {

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
           "The driver logs RmInitAdapter failed! (0xAA:0xBB:N) when it cannot initialise a GPU; AA names the stage (RM_INIT_*), BB the NV_STATUS. The reason is often a few lines away in the same boot, found by the GPU's bus id in one table of causes (src/rules/causes.hpp): its PCIe link went down (Surprise Down, Link Down or a fatal AER error on the GPU or a port above it), the PCI core could not bring it out of D3cold, an invalid or unassigned BAR (BAR1 is 0M, no space for the BAR, Cannot reserve BAR), or an IOMMU/vfio fault naming the GPU. Those lines are quoted with the finding, and the likely cause and its remedy follow from where the check runs: in a virtual machine the hypervisor's pass-through is at fault; on bare metal the slot, the firmware (Above 4G decoding, Resizable BAR) or the kernel's IOMMU settings.",
       .evidence =
           "The RmInitAdapter line; the same boot's link (AER, pciehp), power-state, BAR, DMAR/AMD-Vi and vfio lines naming the GPU or, for a link, a port above it (the PCIe path); the cpuinfo hypervisor flag decides VM or bare metal.",
       .reads = {ProbeId::kernel_log},
       .events = log_events({LogEventKind::rm_init_failed, LogEventKind::rm_init_minor}),
       .cases = {fires("cause-d3cold-rminit", "0000:01:00.0"), silent("cause-iommu-fault-p2p")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         auto hits = gpu_events_rule(c, {Effect::gpu_unusable, true, false, rm_init_remedy});
         for (auto& hit : hits) {
           if (hit.gpu && hit.effect == Effect::gpu_unusable) {
             link_causes(c.facts, hit, *hit.gpu);
           }
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
