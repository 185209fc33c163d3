#pragma once
// Helpers shared by the rule files of several id prefixes (src/rules/<prefix>.cpp): evidence and
// label formats, the kernel-log event selection, the bounded evidence lists. Internal to src/rules.
#include "gpf/facts/visible_devices.hpp"
#include "gpf/knowledge/kernel_log_tables.hpp"
#include "gpf/knowledge/matrix.hpp"
#include "gpf/rules/compat_view.hpp"
#include "gpf/rules/rule.hpp"
#include "gpf/rules/topology.hpp"
#include "gpf/rules/verdict.hpp"
#include "gpf/util/text.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>

namespace gpf {

inline std::string mode_text(const NodeInfo& info) {
  return info.mode ? fmt::format("mode {:04o}", *info.mode) : std::string("mode unknown");
}

inline std::string node_evidence(const DeviceNodeFact& node) {
  std::string type = node.info.stand_in                        ? "stand-in file"
                     : node.info.type == NodeType::char_device ? "char"
                                                               : "not a char device";
  std::string numbers = node.info.major && node.info.minor
                            ? fmt::format(" {}:{}", *node.info.major, *node.info.minor)
                            : "";
  return fmt::format("/{}: {}{}, {}", node.path, type, numbers, mode_text(node.info));
}

inline bool driver_expected(const Facts& f) {
  return !f.is_wsl2();
}

constexpr std::size_t k_max_evidence = 12;

using EventPtrs = std::vector<const LogEvent*>;

inline std::string when(const LogEvent& e) {
  const auto stamp = [](const std::string& t) {
    return t.empty() ? std::string() : fmt::format(" at [{}]", t);
  };
  if (e.count == 1) {
    return stamp(e.first_time);
  }
  if (e.first_time.empty()) {
    return fmt::format(", {} times", e.count);
  }
  return fmt::format(", {} times, first at [{}], last at [{}]", e.count, e.first_time, e.last_time);
}

inline std::string describe(const EventPtrs& events) {
  std::vector<std::string> parts;
  for (const auto* e : events) {
    parts.push_back(e->meaning + when(*e));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

inline std::vector<std::string> evidence_of(const EventPtrs& events) {
  std::vector<std::string> lines;
  for (const auto* e : events) {
    for (const auto& l : e->lines) {
      if (lines.size() < k_max_evidence) {
        lines.push_back(l);
      }
    }
    if (e->count > 1 && !e->last_line.empty() && e->last_line != e->lines.front() &&
        lines.size() < k_max_evidence) {
      lines.push_back(e->last_line);
    }
  }
  return lines;
}

inline bool listed(const Facts& f, const std::string& bus) {
  return f.gpu_by_bus(bus) != nullptr;
}

inline XidClass xid_class(const LogEvent& e) {
  const XidInfo* info = e.xid ? find_xid(*e.xid) : nullptr;
  return info ? info->cls : XidClass::warning;
}

inline bool is_xid(const LogEvent& e) {
  return e.kind == LogEventKind::xid && e.xid.has_value();
}

// The rule that judges a kernel-log event: the one place an event names its rule. The log rows
// select their events by it, and a GPU the driver does not list borrows that rule's remedy.
inline std::string_view log_rule_id(const LogEvent& e) {
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
  case LogEventKind::dma_setup:
    return ""; // evidence for rminit.adapter-failed, not a finding of its own
  case LogEventKind::sxid: {
    const SxidInfo* info = e.sxid ? find_sxid(*e.sxid) : nullptr;
    return info && info->cls == SxidClass::fatal ? "nvswitch.sxid-fatal" : "nvswitch.sxid-nonfatal";
  }
  case LogEventKind::hung_task:
    return "hang.driver-stuck";
  }
  return "";
}

// The GPU's latest Xid 154 after the last driver load: the driver's own verdict on its recovery.
inline const LogEvent* latest_recovery(const std::vector<LogEvent>& events) {
  const LogEvent* best = nullptr;
  for (const auto& e : events) {
    if (is_xid(e) && *e.xid == 154 && !e.before_driver_load && e.recovery_action &&
        (!best || e.last_seq > best->last_seq)) {
      best = &e;
    }
  }
  return best;
}

using RemedyFor = std::string (*)(const EventPtrs&);

struct GpuRuleSpec {
  Effect effect = Effect::gpu_unusable;
  bool reload_clears = false;  // a driver reload after the event resets the GPU
  bool xid154_decides = false; // a later Xid 154 on the GPU decides instead
  RemedyFor remedy = nullptr;
};

// One hit per GPU the driver lists: the events log_rule_id() gives to rule_id. Events a later
// reload or Xid 154 settled become one info hit that says why they no longer count.
inline std::vector<Hit> gpu_events_rule(const RuleContext& c, std::string_view rule_id,
                                        const GpuRuleSpec& spec) {
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
    const std::string label = c.job.label(bus);
    if (!active.empty()) {
      Hit hit{fmt::format("{}: {}", label, describe(active)), evidence_of(active), bus,
              spec.effect};
      if (spec.remedy) {
        hit.remedy = spec.remedy(active);
      }
      hits.push_back(std::move(hit));
    }
    if (!cleared.empty()) {
      Hit hit{fmt::format(
                  "{}: {} — before the last driver reload, which reset the GPU; no longer counted",
                  label, describe(cleared)),
              evidence_of(cleared), bus};
      hit.severity = Severity::info;
      hit.remedy = "Nothing to do unless it happens again after the reload";
      hits.push_back(std::move(hit));
    }
    if (!decided.empty()) {
      Hit hit{
          fmt::format("{}: {} — the later Xid 154 (recovery action \"{}\") decides for this GPU",
                      label, describe(decided), *decider->recovery_action),
          evidence_of(decided), bus};
      hit.severity = Severity::info;
      hit.remedy = "Follow the Xid 154 finding for this GPU";
      hits.push_back(std::move(hit));
    }
  }
  return hits;
}

// Host-level events (naming no device) of one kind: one hit each.
inline std::vector<Hit> host_events_rule(const RuleContext& c, std::string_view rule_id,
                                         bool reload_clears) {
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

inline std::string rm_init_remedy(const EventPtrs& events) {
  for (const auto* e : events) {
    if (const CodeInfo* stage = e->init_status ? find_rm_init(*e->init_status) : nullptr;
        stage && !stage->remedy.empty()) {
      return std::string(stage->remedy);
    }
  }
  return {};
}

inline std::string expected_evidence(const ExpectedCuda& e) {
  return fmt::format("expected CUDA {} ({})", e.text, e.source);
}

constexpr std::size_t k_max_lines = 8;

inline std::string bytes_text(std::uint64_t bytes) {
  constexpr std::pair<std::uint64_t, std::string_view> units[] = {
      {1ull << 30, "GiB"}, {1ull << 20, "MiB"}, {1ull << 10, "KiB"}};
  for (const auto& [size, name] : units) {
    if (bytes >= size) {
      const double v = static_cast<double>(bytes) / static_cast<double>(size);
      return bytes % size == 0 ? fmt::format("{} {}", bytes / size, name)
                               : fmt::format("{:.1f} {}", v, name);
    }
  }
  return fmt::format("{} bytes", bytes);
}

inline std::string join(const std::vector<std::string>& items) {
  return fmt::format("{}", fmt::join(items, ", "));
}

// At most k_max_lines lines, the rest counted.
inline void add_capped(std::vector<std::string>& evidence, std::string line, std::size_t& dropped) {
  if (evidence.size() < k_max_lines) {
    evidence.push_back(std::move(line));
  } else {
    ++dropped;
  }
}

inline bool sees_host_processes(const ServiceFacts& s) {
  return s.process_table && s.host_process_table();
}

inline std::string library_evidence(const CudaFacts& c) {
  return fmt::format("libcuda: {}", c.library_path.empty() ? c.library : c.library_path);
}

} // namespace gpf
