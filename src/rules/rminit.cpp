// Rules whose id starts with "rminit.": RmInitAdapter failures: a GPU the driver could not
// initialise.
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
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         auto hits = gpu_events_rule(c, "rminit.adapter-failed",
                                     {Effect::gpu_unusable, true, false, rm_init_remedy});
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
           Hit hit{fmt::format("{}: {}", gpu_label(c, gpu->bus_id), describe(one)),
                   evidence_of(one), gpu->bus_id,
                   e.before_driver_load ? Effect::none : Effect::gpu_unusable};
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
