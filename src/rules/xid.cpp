// Rules whose id starts with "xid.": Xid errors of the current boot, judged by the class NVIDIA's
// Xid catalog gives them, and Xid 154 recovery actions.
#include "common.hpp"

namespace gpf {

std::span<const Rule> xid_rules() {
  static const Rule rows[] = {
      {.id = "xid.reset-required",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .severity_from =
           "info for an Xid logged before the last driver reload (which reset the GPU) or settled by a later Xid 154",
       .title = "No Xid in the current boot that leaves its GPU unusable until reset",
       .remedy =
           "Drain the GPU and reset it (`nvidia-smi -r -i <bus id>` with no process on it, or reload the driver) or reboot; "
           "if the Xid returns after the reset, take the GPU out of service and contact the vendor",
       .source = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html",
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         return gpu_events_rule(c, "xid.reset-required", {Effect::gpu_unusable, true, true});
       }},
      {.id = "xid.reboot-required",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .severity_from = "info for an Xid settled by a later Xid 154",
       .title = "No Xid in the current boot that needs a reboot (or VM restart)",
       .remedy = "Drain the node and reboot it (cold reboot / power-cycle for Xid 110; "
                 "restart the VM for Xid 151); if it returns, take the GPU out of service",
       .source = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html",
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         return gpu_events_rule(c, "xid.reboot-required", {Effect::gpu_unusable, false, true});
       }},
      {.id = "xid.update-required",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .severity_from =
           "info for an Xid logged before the last driver reload (which reset the GPU) or settled by a later Xid 154",
       .title = "No Xid in the current boot that asks for a driver/firmware update",
       .remedy =
           "Update the NVIDIA driver (and the vGPU manager / firmware for vGPU) to a supported matching version",
       .source = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html",
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         return gpu_events_rule(c, "xid.update-required", {Effect::gpu_unusable, true, true});
       }},
      {.id = "xid.warning",
       .stage = Stage::gpu,
       .severity = Severity::warn,
       .severity_from =
           "info for an Xid logged before the last driver reload (which reset the GPU) or settled by a later Xid 154",
       .title = "No Xid in the current boot that calls for attention",
       .remedy =
           "The GPU still works: reset it when convenient (pending row remaps and contained errors apply at reset); "
           "if the Xid repeats, check the GPU's health (nvidia-smi -q -d ECC,ROW_REMAPPER, NVLink status) and contact the vendor",
       .source = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html",
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         return gpu_events_rule(c, "xid.warning", {Effect::none, true, true});
       }},
      {.id = "xid.application",
       .stage = Stage::gpu,
       .severity = Severity::info,
       .title = "Application-level Xids in the current boot (the GPU is fine)",
       .remedy =
           "Nothing to do for the GPU: the faulting application (see pid/name in the evidence) has a bug or was stopped; "
           "debug it with compute-sanitizer if it is yours",
       .source = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html",
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         return gpu_events_rule(c, "xid.application", {Effect::none});
       }},
      {.id = "xid.informational",
       .stage = Stage::gpu,
       .severity = Severity::info,
       .title = "Informational Xids in the current boot",
       .remedy = "Nothing to do unless it repeats",
       .source = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html",
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         return gpu_events_rule(c, "xid.informational", {Effect::none});
       }},
      {.id = "xid.unknown",
       .stage = Stage::gpu,
       .severity = Severity::warn,
       .severity_from =
           "info for an Xid logged before the last driver reload (which reset the GPU) or settled by a later Xid 154",
       .title = "No Xid in the current boot that the catalog does not list",
       .remedy =
           "Look the Xid up in NVIDIA's Xid catalog for this driver version (docs.nvidia.com/deploy/xid-errors) and reset the GPU if in doubt",
       .source = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html",
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         return gpu_events_rule(c, "xid.unknown", {Effect::none, true, true});
       }},
      // Xid 154: the recovery action the driver last asked for decides for its GPU.
      {.id = "xid.recovery-action",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .severity_from =
           "the recovery action: info for none, warn for drain or an action this checker does not know, fail for reset or reboot",
       .title = "The driver's latest recovery action (Xid 154) for each GPU",
       .remedy = "Follow the recovery action named in the finding",
       .source = "docs/sources.md#xid-errors",
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         std::vector<Hit> hits;
         for (const auto& [bus, events] : c.facts.log.gpu_events) {
           const LogEvent* e = latest_recovery(events);
           if (!e || !listed(c.facts, bus)) {
             continue;
           }
           const RecoveryActionInfo* action = find_recovery_action(*e->recovery_action);
           const EventPtrs one{e};
           Hit hit{fmt::format("{}: {}", c.job.label(bus), describe(one)), evidence_of(one), bus};
           if (!action) {
             hit.severity = Severity::warn;
             hit.message += " (an action this checker does not know)";
           } else if (action->effect == RecoveryEffect::none) {
             hit.severity = Severity::info;
             hit.remedy = std::string(action->remedy);
           } else if (action->effect == RecoveryEffect::drain) {
             hit.severity = Severity::warn;
             hit.remedy = std::string(action->remedy);
           } else {
             hit.effect = Effect::gpu_unusable;
             hit.remedy = std::string(action->remedy);
           }
           hits.push_back(std::move(hit));
         }
         return hits;
       }},
  };
  return rows;
}

} // namespace gpf
