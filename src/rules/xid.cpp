// Rules whose id starts with "xid.": Xid errors of the current boot, judged by the class NVIDIA's
// Xid catalog gives them, and Xid 154 recovery actions.
#include "gpf/rules/xid.hpp"
#include "common.hpp"

namespace gpf {

std::string_view xid_rule_id(unsigned xid) {
  return log_rule_id(code_event(LogEventKind::xid, xid));
}

bool add_xid_code_rule(std::vector<Rule>& rules, std::string_view id, unsigned xid) {
  const auto judges = judges_of(builtin_rules(), code_samples(LogEventKind::xid, xid));
  // An Xid judged by a row that reads more than the log (gpu.* for 54 and 79) keeps its row.
  if (judges.empty() || std::any_of(judges.begin(), judges.end(),
                                    [](std::string_view j) { return !starts_with(j, "xid."); })) {
    return false;
  }
  const XidInfo* info = find_xid(xid);
  // The row's severity: that of the row that judges this Xid; fail where the line's word decides.
  Severity most = Severity::fail;
  if (info && info->cls != XidClass::by_line_word) {
    const auto judge = std::find_if(rules.begin(), rules.end(),
                                    [xid](const Rule& r) { return r.id == xid_rule_id(xid); });
    most = judge == rules.end() ? Severity::warn : judge->severity;
  }
  Rule row;
  row.id = id;
  row.stage = Stage::gpu;
  row.severity = most;
  row.reads = {ProbeId::kernel_log};
  row.severity_from = "as the built-in xid.* row that judges the event (site policy per Xid)";
  row.title = "No Xid of one code in the current boot (site policy per Xid)";
  row.remedy = "Follow the finding";
  row.source = info ? info->source : k_xid_catalog_url;
  row.explanation = "A site policy row for one Xid: its events are judged here instead of by the "
                    "xid.* row of its class; --severity, --disable and a rules row re-level or "
                    "silence this Xid alone.";
  const auto is_code = [xid](const LogEvent& e) { return is_xid(e) && *e.xid == xid; };
  add_code_rule(rules, std::move(row), judges, is_code,
                [](const LogEvent& e) { return is_xid(e) && *e.xid == 154; });
  return true;
}

std::span<const Rule> xid_rules() {
  static const Rule rows[] = {
      {.id = "xid.reset-required",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .severity_from =
           "info for an Xid logged before the last driver reload (which reset the GPU) or settled by a later Xid 154; "
           "warn, keeping the GPU, when NVML and the CUDA probe find the GPU clean now",
       .title = "No Xid in the current boot that leaves its GPU unusable until reset",
       .remedy =
           "Drain the GPU and reset it (`nvidia-smi -r -i <bus id>` with no process on it, or reload the driver) or reboot; "
           "if the Xid returns after the reset, take the GPU out of service and contact the vendor",
       .source = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html",
       .explanation =
           "The GPU logged an Xid that NVIDIA's catalog resolves with a GPU reset, for example "
           "Xid 48 (an uncorrectable double-bit ECC error), 64 (a row-remapping failure), 74 "
           "(an NVLink error), 95 (an uncontained memory error) or 119/120 (GSP errors). Until "
           "it is reset, work on it may fail or compute on corrupted memory: a job started "
           "there would crash or, worse, train on bad data. Confirm by hand: `dmesg | grep -i "
           "xid` for the number and the bus id, and `nvidia-smi -q -d ECC,ROW_REMAPPER`. The "
           "GPU is left out of the recommendation (the verdict is at least warn, fail when "
           "fewer than --min-gpus remain). An Xid logged before the last driver reload, which "
           "reset the GPU, or settled by a later Xid 154, counts as info. An old error is "
           "weighed against the GPU's state now: when NVML reports recovery action none, no "
           "pending row remap or page retirement and no volatile uncorrectable ECC error (with "
           "persistence mode on: NVML resets volatile counters at every driver load, and "
           "without persistence mode the driver unloads between jobs: NVML's "
           "nvmlEccCounterType_t, https://docs.nvidia.com/deploy/nvml-api/"
           "group__nvmlDeviceEnumvs.html) and the CUDA probe passed on that GPU, it is kept "
           "with a warning naming both.",
       .evidence =
           "The current boot's kernel-log lines `NVRM: Xid (PCI:<bus>): <n>, ...` on a GPU the "
           "driver lists whose Xid the Xid catalog (src/knowledge/xid_catalog.cpp) resolves "
           "with a GPU reset, or whose line says Fatal where the catalog leaves it to the line "
           "or does not list the Xid; the last `NVRM: loading` line and the GPU's later Xid "
           "154 lines, which settle earlier ones. The GPU's state now weighs an old one: "
           "NVML's recovery action, pending row remaps and page retirements, volatile "
           "uncorrectable ECC count and persistence mode, and the CUDA probe's result on it.",
       .reads = {ProbeId::kernel_log},
       .events = xid_events({XidClass::reset}),
       .cases = {fires("log-xid-nvlink5-words", "0000:2a:00.0"), silent("log-xid79-one-of-8")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         return gpu_events_rule(c, {Effect::gpu_unusable, true, true, nullptr, true});
       }},
      {.id = "xid.reboot-required",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .severity_from = "info for an Xid settled by a later Xid 154",
       .title = "No Xid in the current boot that needs a reboot (or VM restart)",
       .remedy = "Drain the node and reboot it (cold reboot / power-cycle for Xid 110; "
                 "restart the VM for Xid 151); if it returns, take the GPU out of service",
       .source = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html",
       .explanation =
           "The GPU logged an Xid that NVIDIA's catalog resolves only with a node reboot or a "
           "VM restart, such as Xid 110 (a security fault: cold reboot), 151 (a key-rotation "
           "error in a confidential-computing VM: restart it) or 167 (a fatal PCIe timeout). No "
           "GPU reset recovers it, and jobs placed on it fail. Confirm by hand: `dmesg | grep "
           "-i xid`. The GPU is left out of the recommendation; a later Xid 154 that settles it "
           "makes this info.",
       .evidence =
           "The current boot's kernel-log lines `NVRM: Xid (PCI:<bus>): <n>, ...` on a GPU the "
           "driver lists whose Xid the Xid catalog (src/knowledge/xid_catalog.cpp) resolves "
           "with a node reboot or VM restart; the GPU's later Xid 154 lines, which settle "
           "earlier ones.",
       .reads = {ProbeId::kernel_log},
       .events = xid_events({XidClass::reboot}),
       .cases = {fires("log-xid-classes", "0000:2a:00.0"), silent("log-app-xids")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         return gpu_events_rule(c, {Effect::gpu_unusable, false, true});
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
       .explanation =
           "The GPU logged an Xid whose catalog resolution is a driver or firmware update, such "
           "as Xid 78 (a vGPU start failure, usually mismatched guest and host vGPU software). "
           "The GPU will not run work until the software is brought to matching, supported "
           "versions. Confirm by hand: `dmesg | grep -i xid` and `cat "
           "/proc/driver/nvidia/version` (on vGPU, compare with the host's vGPU manager). The "
           "GPU is left out of the recommendation; before the last driver reload, or settled by "
           "a later Xid 154, it counts as info.",
       .evidence =
           "The current boot's kernel-log lines `NVRM: Xid (PCI:<bus>): <n>, ...` on a GPU the "
           "driver lists whose Xid the Xid catalog (src/knowledge/xid_catalog.cpp) resolves "
           "with a driver or firmware update; the last `NVRM: loading` line and the GPU's "
           "later Xid 154 lines, which settle earlier ones.",
       .reads = {ProbeId::kernel_log},
       .events = xid_events({XidClass::update_software}),
       .cases = {fires("log-xid-classes", "0000:3a:00.0"), silent("log-app-xids")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         return gpu_events_rule(c, {Effect::gpu_unusable, true, true});
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
       .explanation =
           "The GPU logged an Xid that leaves it working but calls for attention: for example "
           "Xid 63 (a memory row remap or page retirement was recorded and applies at the next "
           "reset), 94 (a contained ECC error: the affected process was stopped, the others "
           "continue), or 8 and 32 (a timeout or a PCIe push-buffer fault). Once on a large "
           "fleet is routine; repeats on the same GPU predict a failure. Confirm by hand: "
           "`dmesg | grep -i xid` and `nvidia-smi -q -d ECC,ROW_REMAPPER`. Warn: the GPU stays "
           "in the recommendation, and --strict makes the check not ready.",
       .evidence =
           "The current boot's kernel-log lines `NVRM: Xid (PCI:<bus>): <n>, ...` on a GPU the "
           "driver lists whose Xid the Xid catalog (src/knowledge/xid_catalog.cpp) classes as "
           "a warning, or whose line does not say Fatal where the catalog leaves it to the "
           "line; the last `NVRM: loading` line and the GPU's later Xid 154 lines, which "
           "settle earlier ones.",
       .reads = {ProbeId::kernel_log},
       .events = xid_events({XidClass::warning}),
       .cases = {fires("log-xid-nvlink5-words", "0000:3a:00.0"), silent("log-xid79-one-of-8")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         return gpu_events_rule(c, {Effect::none, true, true});
       }},
      {.id = "xid.application",
       .stage = Stage::gpu,
       .severity = Severity::info,
       .title = "Application-level Xids in the current boot (the GPU is fine)",
       .remedy =
           "Nothing to do for the GPU: the faulting application (see pid/name in the evidence) has a bug or was stopped; "
           "debug it with compute-sanitizer if it is yours",
       .source = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html",
       .explanation =
           "The GPU logged an Xid caused by a program, not by the hardware: 13 (an exception "
           "such as an out-of-bounds access or illegal instruction), 31 (a GPU memory page "
           "fault), 43 or 45 (the driver stopped or removed a faulting program's channels). The "
           "driver ended that program's work; the GPU is fine and the next job can use it. It "
           "is listed so that the previous job's crash is not taken for a hardware fault. "
           "Confirm by hand: `dmesg | grep -i xid` shows the pid and name of the program with "
           "the Xid. Info: no effect on the verdict or the recommendation.",
       .evidence =
           "The current boot's kernel-log lines `NVRM: Xid (PCI:<bus>): <n>, ...` on a GPU the "
           "driver lists whose Xid the Xid catalog (src/knowledge/xid_catalog.cpp) attributes "
           "to an application.",
       .reads = {ProbeId::kernel_log},
       .events = xid_events({XidClass::application}),
       .cases = {fires("log-app-xids", "0000:2a:00.0"), silent("log-api-mismatch")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         return gpu_events_rule(c, {Effect::none});
       }},
      {.id = "xid.informational",
       .stage = Stage::gpu,
       .severity = Severity::info,
       .title = "Informational Xids in the current boot",
       .remedy = "Nothing to do unless it repeats",
       .source = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html",
       .explanation =
           "The GPU logged an Xid that NVIDIA's catalog lists as informational or already "
           "handled by the driver, for example 37 or 38 (firmware method or watchdog notices), "
           "121 (corrected errors on the C2C link to a Grace CPU) or 160 to 165 (channel "
           "retirement and power-smoothing events). Nothing needs to be done for a job. Confirm "
           "by hand: `dmesg | grep -i xid`. Info: no effect on the verdict or the "
           "recommendation.",
       .evidence =
           "The current boot's kernel-log lines `NVRM: Xid (PCI:<bus>): <n>, ...` on a GPU the "
           "driver lists whose Xid the Xid catalog (src/knowledge/xid_catalog.cpp) classes as "
           "informational.",
       .reads = {ProbeId::kernel_log},
       .events = xid_events({XidClass::informational}),
       .cases = {fires("log-xid-classes", "0000:18:00.0"), silent("log-app-xids")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         return gpu_events_rule(c, {Effect::none});
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
       .explanation =
           "The GPU logged an Xid this build's catalog does not list: newer than the catalog, "
           "or specific to a platform. Not knowing what it means, the checker warns instead of "
           "passing silently. Confirm by hand: find the number in NVIDIA's Xid catalog "
           "(docs.nvidia.com/deploy/xid-errors) for the driver in `cat "
           "/proc/driver/nvidia/version`, and its text in `dmesg | grep -i xid`. Warn: the GPU "
           "stays in the recommendation and --strict makes the check not ready; before the last "
           "driver reload, or settled by a later Xid 154, it counts as info.",
       .evidence =
           "The current boot's kernel-log lines `NVRM: Xid (PCI:<bus>): <n>, ...` on a GPU the "
           "driver lists whose Xid the Xid catalog (src/knowledge/xid_catalog.cpp) does not "
           "list and whose line does not say Fatal; the last `NVRM: loading` line and the "
           "GPU's later Xid 154 lines, which settle earlier ones.",
       .reads = {ProbeId::kernel_log},
       .events = unlisted_xid_events(),
       .cases = {fires("log-xid-classes", "0000:5d:00.0"), silent("log-app-xids")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         return gpu_events_rule(c, {Effect::none, true, true});
       }},
      // Xid 154: the recovery action the driver last asked for decides for its GPU.
      {.id = "xid.recovery-action",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .severity_from =
           "the recovery action: info for none, warn for drain, an action this checker does not know or a line that names none, fail for reset or reboot",
       .title = "The driver's latest recovery action (Xid 154) for each GPU",
       .remedy = "Follow the recovery action named in the finding",
       .source = "docs/sources.md#xid-errors",
       .explanation =
           "Recent drivers announce what a GPU needs after an error with Xid 154 and a recovery "
           "action: None, GPU Reset Required, Node Reboot Required, Drain P2P, Drain and Reset, "
           "Recover IMEX Domain. The latest action for a GPU is authoritative and settles its "
           "earlier Xids. Confirm by hand: `dmesg | grep -i 'Xid.*154'`. What it does follows "
           "the action: none is info, a drain is a warning, a reset or a reboot leaves the GPU "
           "out of the recommendation.",
       .evidence =
           "The current boot's kernel-log lines `NVRM: Xid (PCI:<bus>): 154, ... GPU recovery "
           "action changed from 0x<a> (<name>) to 0x<b> (<name>)` on a GPU the driver lists: "
           "the latest since the last `NVRM: loading` line, its action looked up in the "
           "recovery-action table (src/knowledge/kernel_log_tables.cpp), and any Xid 154 line "
           "that names no action.",
       .reads = {ProbeId::kernel_log},
       .events = xid_events({XidClass::recovery_action}),
       .cases = {fires("log-xid154-reboot", "0000:2a:00.0"), silent("log-app-xids")},
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
         // An Xid 154 line without "GPU recovery action changed from ... to ..." names no action.
         for (const auto& [bus, events] : c.facts.log.gpu_events) {
           if (!listed(c.facts, bus)) {
             continue;
           }
           for (const auto& e : events) {
             if (!is_xid(e) || *e.xid != 154 || e.recovery_action || e.before_driver_load) {
               continue;
             }
             const EventPtrs one{&e};
             Hit hit{fmt::format("{}: {} — the line does not say which recovery action (no "
                                 "\"GPU recovery action changed from ... to ...\" text)",
                                 c.job.label(bus), describe(one)),
                     evidence_of(one), bus};
             hit.severity = Severity::warn;
             hit.remedy = fmt::format("Read the GPU's recovery action now: `nvidia-smi -q -i {}` "
                                      "(Recovery Action), and follow it",
                                      bus);
             hits.push_back(std::move(hit));
           }
         }
         return hits;
       }},
  };
  return rows;
}

} // namespace gpf
