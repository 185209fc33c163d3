// The kernel log's rows: Xids by class, RmInitAdapter, API mismatch, fallen off the bus, BAR,
// probe failures, unsupported GPUs, power cables, GSP firmware, crash dumps, GPUs missing from the
// driver, an unreadable log and earlier boots. Only the current boot counts; events before the
// last driver reload count only where a reload does not help. Facts: ../shared/reference/
// nvidia-facts.md §3–§5, tables in src/probes/kernel_log/tables.cpp; docs/kernel-log.md.
#include "gpf/probes/kernel_log_tables.hpp"
#include "gpf/rules/rule.hpp"
#include "gpf/rules/verdict.hpp"
#include "gpf/util/text.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpf {
namespace {

constexpr std::size_t k_max_evidence = 12; // lines quoted per finding

using EventPtrs = std::vector<const LogEvent*>;

// "GPU 3 (0000:3b:00.0, GPU-…)": index in the recommendation's index space, bus id, UUID if known.
std::string gpu_label(const Facts& f, const std::string& bus) {
  const auto space = gpu_index_space(f);
  const auto it = std::find_if(space.begin(), space.end(), [&](const GpuRef& g) { return g.bus_id == bus; });
  std::optional<std::string> uuid = it != space.end() ? it->uuid : std::nullopt;
  if (!uuid) {
    if (auto u = f.log.gpu_uuids.find(bus); u != f.log.gpu_uuids.end()) {
      uuid = u->second;
    }
  }
  const std::string where = uuid ? fmt::format("{}, {}", bus, *uuid) : bus;
  return it != space.end() ? fmt::format("GPU {} ({})", it - space.begin(), where) : fmt::format("GPU {}", where);
}

std::string when(const LogEvent& e) {
  const auto stamp = [](const std::string& t) { return t.empty() ? std::string() : fmt::format(" at [{}]", t); };
  if (e.count == 1) {
    return stamp(e.first_time);
  }
  if (e.first_time.empty()) {
    return fmt::format(", {} times", e.count);
  }
  return fmt::format(", {} times, first at [{}], last at [{}]", e.count, e.first_time, e.last_time);
}

std::string describe(const EventPtrs& events) {
  std::vector<std::string> parts;
  for (const auto* e : events) {
    parts.push_back(e->meaning + when(*e));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::vector<std::string> evidence_of(const EventPtrs& events) {
  std::vector<std::string> lines;
  for (const auto* e : events) {
    for (const auto& l : e->lines) {
      if (lines.size() < k_max_evidence) {
        lines.push_back(l);
      }
    }
    if (e->count > 1 && !e->last_line.empty() && e->last_line != e->lines.front() && lines.size() < k_max_evidence) {
      lines.push_back(e->last_line);
    }
  }
  return lines;
}

bool listed(const Facts& f, const std::string& bus) { return f.gpu_by_bus(bus) != nullptr; }

XidClass xid_class(const LogEvent& e) {
  const XidInfo* info = e.xid ? find_xid(*e.xid) : nullptr;
  return info ? info->cls : XidClass::warning;
}

bool is_xid(const LogEvent& e) { return e.kind == LogEventKind::xid && e.xid.has_value(); }

// The rule that judges a kernel-log event: the one place an event names its rule. The log rows
// select their events by it, and a GPU the driver does not list borrows that rule's remedy.
std::string_view log_rule_id(const LogEvent& e) {
  switch (e.kind) {
  case LogEventKind::xid:
    if (!e.xid) {
      return "";
    }
    if (!find_xid(*e.xid)) {
      return "xid.unknown";
    }
    switch (xid_class(e)) {
    case XidClass::application:
      return "xid.application";
    case XidClass::informational:
      return "xid.informational";
    case XidClass::warning:
      return "xid.warning";
    case XidClass::reset:
      return "xid.reset-required";
    case XidClass::reboot:
      return "xid.reboot-required";
    case XidClass::fallen_off_bus:
      return "gpu.fallen-off-bus";
    case XidClass::power:
      return "gpu.power-cables";
    case XidClass::update_software:
      return "xid.update-required";
    case XidClass::recovery_action:
      return "xid.recovery-action";
    }
    return "xid.unknown";
  case LogEventKind::rm_init_failed:
  case LogEventKind::rm_init_minor:
    return "rminit.adapter-failed";
  case LogEventKind::api_mismatch:
    return "driver.api-mismatch";
  case LogEventKind::fallen_off_bus:
    return "gpu.fallen-off-bus";
  case LogEventKind::bar_invalid:
    return "gpu.bar-invalid";
  case LogEventKind::probe_not_called:
    return "driver.probe-not-called";
  case LogEventKind::probe_failed:
    return "driver.probe-failed";
  case LogEventKind::no_gpu_initialized:
    return "driver.no-gpu-initialized";
  case LogEventKind::not_supported:
    return "gpu.not-supported";
  case LogEventKind::not_supported_open:
    return "gpu.not-supported-open-module";
  case LogEventKind::power_cables:
    return "gpu.power-cables";
  case LogEventKind::gsp_firmware:
    return "gsp.firmware-load-failed";
  case LogEventKind::crash_dump:
    return "gpu.crash-dump";
  case LogEventKind::nouveau:
    return "module.nouveau-loaded";
  }
  return "";
}

// The GPU's latest Xid 154 after the last driver load: the driver's own verdict on its recovery.
const LogEvent* latest_recovery(const std::vector<LogEvent>& events) {
  const LogEvent* best = nullptr;
  for (const auto& e : events) {
    if (is_xid(e) && *e.xid == 154 && !e.before_driver_load && e.recovery_action && (!best || e.last_seq > best->last_seq)) {
      best = &e;
    }
  }
  return best;
}

using RemedyFor = std::string (*)(const EventPtrs&);

struct GpuRuleSpec {
  Effect effect = Effect::gpu_unusable;
  bool reload_clears = false; // a driver reload after the event resets the GPU
  bool xid154_decides = false; // a later Xid 154 on the GPU decides instead
  RemedyFor remedy = nullptr;
};

// One hit per GPU the driver lists: the events log_rule_id() gives to rule_id. Events a later reload or Xid 154
// settled become one info hit that says why they no longer count.
std::vector<Hit> gpu_events_rule(const RuleContext& c, std::string_view rule_id, const GpuRuleSpec& spec) {
  std::vector<Hit> hits;
  for (const auto& [bus, events] : c.facts.log.gpu_events) {
    if (!listed(c.facts, bus)) {
      continue; // log.gpu-missing-from-driver reports those
    }
    const LogEvent* decider = spec.xid154_decides ? latest_recovery(events) : nullptr;
    EventPtrs active;
    EventPtrs cleared;
    EventPtrs decided;
    for (const auto& e : events) {
      if (log_rule_id(e) != rule_id) {
        continue;
      }
      if (spec.reload_clears && e.before_driver_load) {
        cleared.push_back(&e);
      } else if (decider && decider->last_seq > e.last_seq) {
        decided.push_back(&e);
      } else {
        active.push_back(&e);
      }
    }
    const std::string label = gpu_label(c.facts, bus);
    if (!active.empty()) {
      Hit hit{fmt::format("{}: {}", label, describe(active)), evidence_of(active), bus, spec.effect};
      if (spec.remedy) {
        hit.remedy = spec.remedy(active);
      }
      hits.push_back(std::move(hit));
    }
    if (!cleared.empty()) {
      Hit hit{fmt::format("{}: {} — before the last driver reload, which reset the GPU; no longer counted", label,
                          describe(cleared)),
              evidence_of(cleared), bus};
      hit.severity = Severity::info;
      hit.remedy = "Nothing to do unless it happens again after the reload";
      hits.push_back(std::move(hit));
    }
    if (!decided.empty()) {
      Hit hit{fmt::format("{}: {} — the later Xid 154 (recovery action \"{}\") decides for this GPU", label,
                          describe(decided), *decider->recovery_action),
              evidence_of(decided), bus};
      hit.severity = Severity::info;
      hit.remedy = "Follow the Xid 154 finding for this GPU";
      hits.push_back(std::move(hit));
    }
  }
  return hits;
}

// Host-level events (naming no device) of one kind: one hit each.
std::vector<Hit> host_events_rule(const RuleContext& c, std::string_view rule_id, bool reload_clears) {
  std::vector<Hit> hits;
  for (const auto& e : c.facts.log.host_events) {
    if (log_rule_id(e) != rule_id) {
      continue;
    }
    const EventPtrs one{&e};
    Hit hit{describe(one), evidence_of(one)};
    if (!hit.message.empty()) {
      hit.message[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(hit.message[0])));
    }
    if (reload_clears && e.before_driver_load) {
      hit.message += " — before the last driver reload; no longer counted";
      hit.severity = Severity::info;
      hit.remedy = "Nothing to do unless it happens again after the reload";
    }
    hits.push_back(std::move(hit));
  }
  return hits;
}

// --- Xid rows ---------------------------------------------------------------------------------


std::vector<Hit> xid_reset(const RuleContext& c) {
  return gpu_events_rule(c, "xid.reset-required", {Effect::gpu_unusable, true, true});
}
std::vector<Hit> xid_reboot(const RuleContext& c) {
  return gpu_events_rule(c, "xid.reboot-required", {Effect::gpu_unusable, false, true});
}
std::vector<Hit> xid_update(const RuleContext& c) {
  return gpu_events_rule(c, "xid.update-required", {Effect::gpu_unusable, true, true});
}
std::vector<Hit> xid_warning(const RuleContext& c) {
  return gpu_events_rule(c, "xid.warning", {Effect::none, true, true});
}
std::vector<Hit> xid_application(const RuleContext& c) {
  return gpu_events_rule(c, "xid.application", {Effect::none});
}
std::vector<Hit> xid_informational(const RuleContext& c) {
  return gpu_events_rule(c, "xid.informational", {Effect::none});
}
std::vector<Hit> xid_unknown(const RuleContext& c) {
  return gpu_events_rule(c, "xid.unknown", {Effect::none, true, true});
}

// Xid 154: the recovery action the driver last asked for decides for its GPU.
std::vector<Hit> xid_recovery(const RuleContext& c) {
  std::vector<Hit> hits;
  for (const auto& [bus, events] : c.facts.log.gpu_events) {
    const LogEvent* e = latest_recovery(events);
    if (!e || !listed(c.facts, bus)) {
      continue;
    }
    const RecoveryActionInfo* action = find_recovery_action(*e->recovery_action);
    const EventPtrs one{e};
    Hit hit{fmt::format("{}: {}", gpu_label(c.facts, bus), describe(one)), evidence_of(one), bus};
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
}

// --- other GPU-level rows -----------------------------------------------------------------------

std::string rm_init_remedy(const EventPtrs& events) {
  for (const auto* e : events) {
    if (const CodeInfo* stage = e->init_status ? find_rm_init(*e->init_status) : nullptr; stage && !stage->remedy.empty()) {
      return std::string(stage->remedy);
    }
  }
  return {};
}

std::vector<Hit> rm_init_failed(const RuleContext& c) {
  auto hits = gpu_events_rule(c, "rminit.adapter-failed", {Effect::gpu_unusable, true, false, rm_init_remedy});
  // "rm_init_adapter failed, device minor number N" without a bus id: the GPU with that minor.
  for (const auto& e : c.facts.log.host_events) {
    if (e.kind != LogEventKind::rm_init_minor || !e.device_minor) {
      continue;
    }
    const auto gpu = std::find_if(c.facts.gpus.begin(), c.facts.gpus.end(),
                                  [&](const GpuFacts& g) { return g.device_minor == e.device_minor; });
    if (gpu == c.facts.gpus.end()) {
      continue;
    }
    const EventPtrs one{&e};
    Hit hit{fmt::format("{}: {}", gpu_label(c.facts, gpu->bus_id), describe(one)), evidence_of(one), gpu->bus_id,
            e.before_driver_load ? Effect::none : Effect::gpu_unusable};
    if (e.before_driver_load) {
      hit.severity = Severity::info;
      hit.message += " — before the last driver reload; no longer counted";
    }
    hits.push_back(std::move(hit));
  }
  return hits;
}

std::vector<Hit> fallen_off_bus(const RuleContext& c) {
  return gpu_events_rule(c, "gpu.fallen-off-bus", {});
}
std::vector<Hit> bar_invalid(const RuleContext& c) {
  return gpu_events_rule(c, "gpu.bar-invalid", {});
}
std::vector<Hit> not_supported(const RuleContext& c) {
  return gpu_events_rule(c, "gpu.not-supported", {});
}
std::vector<Hit> not_supported_open(const RuleContext& c) {
  return gpu_events_rule(c, "gpu.not-supported-open-module", {});
}
std::vector<Hit> power_cables(const RuleContext& c) {
  return gpu_events_rule(c, "gpu.power-cables", {});
}
std::vector<Hit> gsp_firmware(const RuleContext& c) {
  auto hits = gpu_events_rule(c, "gsp.firmware-load-failed", {Effect::gpu_unusable, true});
  for (auto& hit : host_events_rule(c, "gsp.firmware-load-failed", true)) {
    hit.severity = hit.severity.value_or(Severity::warn); // names no GPU: the GPUs' own findings decide
    hits.push_back(std::move(hit));
  }
  return hits;
}

// --- host-level rows ---------------------------------------------------------------------------

std::vector<Hit> api_mismatch(const RuleContext& c) {
  std::vector<Hit> hits;
  const DriverFacts& driver = c.facts.driver;
  for (const auto& e : c.facts.log.host_events) {
    if (e.kind != LogEventKind::api_mismatch) {
      continue;
    }
    const EventPtrs one{&e};
    Hit hit{fmt::format("Driver/library version mismatch: {}{}", e.meaning, when(e)), evidence_of(one)};
    if (!driver.version_line.empty()) {
      hit.evidence.push_back("/proc/driver/nvidia/version: " + driver.version_line);
    }
    const bool reloaded_since = !driver.version_text.empty() && !e.kernel_version.empty() && driver.version_text != e.kernel_version;
    if (e.before_driver_load || reloaded_since) {
      hit.severity = Severity::info;
      hit.message += fmt::format(" — the driver was reloaded since{}; no longer counted",
                                 driver.version_text.empty() ? "" : " (now " + driver.version_text + ")");
      hit.remedy = "Nothing to do unless the mismatch is logged again";
    }
    hits.push_back(std::move(hit));
  }
  return hits;
}

std::vector<Hit> probe_not_called(const RuleContext& c) { return host_events_rule(c, "driver.probe-not-called", true); }
std::vector<Hit> probe_failed(const RuleContext& c) { return host_events_rule(c, "driver.probe-failed", true); }
std::vector<Hit> no_gpu_initialized(const RuleContext& c) {
  return host_events_rule(c, "driver.no-gpu-initialized", true);
}
std::vector<Hit> crash_dump(const RuleContext& c) { return host_events_rule(c, "gpu.crash-dump", true); }


// A PCI device the log blames but the driver does not list (it failed to probe or was never bound).
std::vector<Hit> missing_from_driver(const RuleContext& c) {
  std::vector<Hit> hits;
  for (const auto& [bus, events] : c.facts.log.gpu_events) {
    if (listed(c.facts, bus)) {
      continue;
    }
    EventPtrs serious;
    for (const auto& e : events) {
      const bool harmless = is_xid(e) && (xid_class(e) == XidClass::application || xid_class(e) == XidClass::informational ||
                                          (*e.xid == 154 && e.recovery_action == "None"));
      if (!harmless) {
        serious.push_back(&e);
      }
    }
    if (serious.empty()) {
      continue;
    }
    Hit hit{fmt::format("{} is not listed by the NVIDIA driver (/proc/driver/nvidia/gpus); the kernel log says: {}",
                        gpu_label(c.facts, bus), describe(serious)),
            evidence_of(serious), bus};
    if (const Rule* rule = find_rule(log_rule_id(*serious.front()))) {
      hit.remedy = serious.front()->kind == LogEventKind::rm_init_failed ? rm_init_remedy(serious) : std::string(rule->remedy);
    }
    hits.push_back(std::move(hit));
  }
  return hits;
}

std::vector<Hit> log_not_readable(const RuleContext& c) {
  const LogFacts& log = c.facts.log;
  if (log.read_error.empty()) {
    return {};
  }
  // The error names what could not be read (/dev/kmsg and klogctl, dmesg.txt, the --dmesg file).
  return {{fmt::format("Kernel log {}: {}", log.ran ? "only partly checked, reading stopped" : "not checked", log.read_error),
           {log.read_error}}};
}

std::vector<Hit> earlier_boot(const RuleContext& c) {
  const LogFacts& log = c.facts.log;
  if (log.earlier_boot_events.empty()) {
    return {};
  }
  std::vector<std::string> what;
  EventPtrs events;
  for (const auto& e : log.earlier_boot_events) {
    what.push_back(fmt::format("{}{} ({}×)", e.xid ? fmt::format("Xid {}", *e.xid) : e.meaning,
                               e.bus_id ? " on " + *e.bus_id : "", e.count));
    events.push_back(&e);
  }
  Hit hit{fmt::format("{} event(s) from {} earlier boot(s) ignored: {}", log.earlier_boot_events.size(),
                      log.boots_seen > 0 ? log.boots_seen - 1 : 0, fmt::join(what, ", ")),
          {}};
  if (log.boundary) {
    hit.evidence.push_back(log.boundary->line);
  }
  for (auto& line : evidence_of(events)) {
    hit.evidence.push_back(std::move(line));
  }
  return {hit};
}

std::vector<Hit> damaged_input(const RuleContext& c) {
  const LogFacts& log = c.facts.log;
  std::vector<std::string> what;
  if (log.lines_cut > 0) {
    what.push_back(fmt::format("{} line(s) longer than 64 KiB were cut (the rest of each was not examined)", log.lines_cut));
  }
  if (log.nul_bytes) {
    what.push_back("the log contains NUL bytes");
  }
  if (log.events_dropped > 0) {
    what.push_back(fmt::format("{} occurrence(s) of events past the cap of distinct events were only counted", log.events_dropped));
  }
  if (what.empty()) {
    return {};
  }
  return {{fmt::format("The kernel log ({}) has damaged or unusual input: {}", log.source, fmt::join(what, "; ")), what}};
}

constexpr std::string_view k_src_xid = "nvidia-facts.md §3b (NVIDIA Xid catalog; table in src/probes/kernel_log/tables.cpp)";
constexpr std::string_view k_reset_remedy =
    "Drain the GPU and reset it (`nvidia-smi -r -i <bus id>` with no process on it, or reload the driver) or reboot; "
    "if the Xid returns after the reset, take the GPU out of service and contact the vendor";

const Rule k_rules[] = {
    {"xid.reset-required", Severity::fail, Stage::gpu, "No Xid in the current boot that leaves its GPU unusable until reset",
     k_reset_remedy, k_src_xid, xid_reset},
    {"xid.reboot-required", Severity::fail, Stage::gpu, "No Xid in the current boot that needs a reboot (or VM restart)",
     "Drain the node and reboot it (cold reboot / power-cycle for Xid 110; restart the VM for Xid 151); if it "
     "returns, take the GPU out of service",
     k_src_xid, xid_reboot},
    {"xid.update-required", Severity::fail, Stage::gpu, "No Xid in the current boot that asks for a driver/firmware update",
     "Update the NVIDIA driver (and the vGPU manager / firmware for vGPU) to a supported matching version", k_src_xid,
     xid_update},
    {"xid.warning", Severity::warn, Stage::gpu, "No Xid in the current boot that calls for attention",
     "The GPU still works: reset it when convenient (pending row remaps and contained errors apply at reset); if the "
     "Xid repeats, check the GPU's health (nvidia-smi -q -d ECC,ROW_REMAPPER, NVLink status) and contact the vendor",
     k_src_xid, xid_warning},
    {"xid.application", Severity::info, Stage::gpu, "Application-level Xids in the current boot (the GPU is fine)",
     "Nothing to do for the GPU: the faulting application (see pid/name in the evidence) has a bug or was stopped; "
     "debug it with compute-sanitizer if it is yours",
     k_src_xid, xid_application},
    {"xid.informational", Severity::info, Stage::gpu, "Informational Xids in the current boot",
     "Nothing to do unless it repeats", k_src_xid, xid_informational},
    {"xid.unknown", Severity::warn, Stage::gpu, "No Xid in the current boot that the catalog does not list",
     "Look the Xid up in NVIDIA's Xid catalog for this driver version (docs.nvidia.com/deploy/xid-errors) and reset "
     "the GPU if in doubt",
     k_src_xid, xid_unknown},
    {"xid.recovery-action", Severity::fail, Stage::gpu, "The driver's latest recovery action (Xid 154) for each GPU",
     "Follow the recovery action named in the finding", "nvidia-facts.md §3a, §11 (gpu.c, Xid 154)", xid_recovery},
    {"rminit.adapter-failed", Severity::fail, Stage::gpu, "No GPU failed to initialise (RmInitAdapter failed)",
     "Reset the GPU or reboot; if it fails again, the stage named in the finding says where to look",
     "nvidia-facts.md §4 (osinit.c RM_INIT_* and nvstatuscodes.h NV_STATUS)", rm_init_failed},
    {"gpu.fallen-off-bus", Severity::fail, Stage::gpu, "No GPU has fallen off the bus (Xid 79 and its companions)",
     "Drain the node and reboot it (a GPU off the bus does not come back without one); check its power and seating "
     "if it recurs and contact the vendor",
     "nvidia-facts.md §3b (Xid 79: RESTART_BM), §5 (osinit.c, osapi.c)", fallen_off_bus},
    {"gpu.bar-invalid", Severity::fail, Stage::gpu, "Every GPU's PCI I/O regions (BARs) are assigned",
     "Enable \"Above 4G decoding\" (and Resizable BAR where used) in the BIOS, or boot with pci=realloc; in a VM give "
     "the guest enough MMIO space for the GPU's BARs",
     "nvidia-facts.md §5 (nv-pci.c)", bar_invalid},
    {"gpu.not-supported", Severity::fail, Stage::gpu, "Every GPU is supported by the installed driver release",
     "Install a driver branch that supports this GPU (newer GPUs need newer branches, old GPUs a legacy branch)",
     "nvidia-facts.md §5 (osapi.c), §2b", not_supported},
    {"gpu.not-supported-open-module", Severity::fail, Stage::gpu, "No pre-Turing GPU is driven by the open kernel module",
     "Install the proprietary kernel module flavour (R580 or older for Maxwell/Pascal/Volta): the open module needs GSP",
     "nvidia-facts.md §5 (osapi.c), §2b", not_supported_open},
    {"gpu.power-cables", Severity::fail, Stage::gpu, "Every GPU has its power cables connected (incl. Xid 54)",
     "Power the node down and connect the GPU's auxiliary power cables; check the PSU and cabling",
     "nvidia-facts.md §5 (osinit.c), §3b (Xid 54: CHECK_MECHANICALS)", power_cables},
    {"gsp.firmware-load-failed", Severity::fail, Stage::gpu, "The GSP firmware loads and boots",
     "Install the GSP firmware files for exactly the loaded driver version (/lib/firmware/nvidia/<version>/gsp_*.bin, "
     "from the driver or the distribution's firmware package), then reload the driver; if the firmware is present "
     "and still fails to boot, reset or power-cycle the GPU",
     "nvidia-facts.md §4a, §5, §11 (osinit.c, nv-firmware.h)", gsp_firmware},
    {"driver.api-mismatch", Severity::fail, Stage::host, "The NVIDIA user-space components match the loaded kernel module",
     "Make the versions match: reboot (after a driver upgrade the old module stays loaded), or unload and reload the "
     "NVIDIA modules (`rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && modprobe nvidia`) with no GPU process "
     "running; in a container, use the host's driver libraries",
     "nvidia-facts.md §5, §9 (osapi.c)", api_mismatch},
    {"driver.probe-not-called", Severity::warn, Stage::host, "The NVIDIA driver probed every NVIDIA device",
     "Another driver owns the GPU(s): unbind it (nouveau: blacklist it and rebuild the initramfs; vfio-pci: remove the "
     "GPU from its ids) and reload the NVIDIA driver",
     "nvidia-facts.md §5 (nv.c)", probe_not_called},
    {"driver.probe-failed", Severity::warn, Stage::host, "The NVIDIA driver's probe of each device succeeded",
     "Check the messages before this one for the cause (unsupported GPU, BAR, power); reboot after fixing it",
     "nvidia-facts.md §5 (nv.c, kernel PCI core)", probe_failed},
    {"driver.no-gpu-initialized", Severity::warn, Stage::host, "The driver initialised its GPUs when it loaded",
     "Check the messages before this one for the cause and reload the driver; with no NVIDIA GPU present, check "
     "lspci and the instance type",
     "nvidia-facts.md §5 (nv.c)", no_gpu_initialized},
    {"gpu.crash-dump", Severity::warn, Stage::host, "No GPU crash dump was created since the driver loaded",
     "A fatal GPU event happened: run `nvidia-bug-report.sh` as root before unloading the driver and check the Xid "
     "findings",
     "nvidia-facts.md §5 (osapi.c)", crash_dump},
    {"log.gpu-missing-from-driver", Severity::warn, Stage::host,
     "Every PCI device the kernel log blames is a GPU the driver lists",
     "The GPU failed to come up: fix the cause in the finding, then reboot or reload the driver",
     "nvidia-facts.md §4a, §5 (a GPU that fails to probe is not in /proc/driver/nvidia/gpus)", missing_from_driver},
    {"log.not-readable", Severity::warn, Stage::host, "The kernel log was read",
     "Run as root (reading the kernel log needs CAP_SYSLOG when kernel.dmesg_restrict=1), or `sysctl "
     "kernel.dmesg_restrict=0`, or pass the log with --dmesg FILE (`journalctl -k -b > kern.txt`, or the host's "
     "/var/log/kern.log); in a container, run the check on the host",
     "gpu-preflight design: a log that could not be read is never a pass", log_not_readable},
    {"log.earlier-boot", Severity::info, Stage::host, "Events from earlier boots in the log (not counted)",
     "Nothing to do: only the current boot counts", "docs/kernel-log.md (boot rule)", earlier_boot},
    {"log.damaged-input", Severity::info, Stage::host, "The kernel log is well-formed text",
     "Nothing to do unless the log was expected to be clean; check how it was captured",
     "docs/kernel-log.md (bounded scanning)", damaged_input},
};

} // namespace

std::span<const Rule> log_rules() { return k_rules; }

} // namespace gpf
