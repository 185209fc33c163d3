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
#include "gpf/util/plural.hpp"
#include "gpf/util/text.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <functional>
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

// The judgement of one Xid event: the catalog's, except where the line's own word decides (Xids
// 144-150, and an Xid the tables do not list that says Fatal).
inline XidClass xid_class(const LogEvent& e) {
  const XidInfo* info = e.xid ? find_xid(*e.xid) : nullptr;
  if (!info || info->cls == XidClass::by_line_word) {
    return e.line_fatal.value_or(false) ? XidClass::reset : XidClass::warning;
  }
  return info->cls;
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
    if (!find_xid(*e.xid) && !e.line_fatal.value_or(false)) {
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
    case XidClass::by_line_word:
      break; // xid_class() resolved it
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
    // The catalog decides; a code it does not list follows its line's own Fatal / Non-fatal word.
    const SxidInfo* info = e.sxid ? find_sxid(*e.sxid) : nullptr;
    const bool fatal = info ? info->cls == SxidClass::fatal : e.line_fatal.value_or(false);
    return fatal ? "nvswitch.sxid-fatal" : "nvswitch.sxid-nonfatal";
  }
  case LogEventKind::hung_task:
    return "hang.driver-stuck";
  case LogEventKind::module_refused:
    return ""; // the reason driver.not-loaded names, not a finding of its own
  case LogEventKind::power_state:
  case LogEventKind::link_down:
    return ""; // causes linked to the GPU's failure (the cause table), not findings of their own
  case LogEventKind::module_symbol:
    return ""; // the reason the module's own rule names (driver.not-loaded, rdma.*)
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
  bool state_now_weighs = false; // a clean state now (clean_now) keeps the GPU with a warning
};

// NVML's nvmlEccCounterType_t: volatile counts reset at every driver load, and without persistence
// mode the driver unloads whenever no client is left, so a clean volatile count is evidence only
// with persistence mode on.
constexpr std::string_view k_nvml_volatile_ecc =
    "https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceEnumvs.html (nvmlEccCounterType_t)";

// The evidence that a GPU's state now is clean, or nullopt: NVML answers recovery action none, no
// pending row remap or page retirement, no volatile uncorrectable ECC error with persistence mode
// on (k_nvml_volatile_ecc), and the CUDA probe passed every step on it.
inline std::optional<std::vector<std::string>> clean_now(const Facts& f, const std::string& bus) {
  const NvmlGpu* n = f.nvml.ran ? f.nvml.gpu_by_bus(bus) : nullptr;
  const CudaDevice* d = f.cuda.enumerated() ? f.cuda.device_by_bus(bus) : nullptr;
  if (!n || !d || !d->usable || n->recovery_action != 0u || n->remap_pending == true ||
      n->retired_pages_pending == true || (!n->remap_pending && !n->retired_pages_pending) ||
      n->ecc_volatile_uncorrected != 0ull || n->persistence_mode != true) {
    return std::nullopt;
  }
  const auto known = [](const std::optional<bool>& b) {
    return b ? (*b ? "yes" : "no") : "not reported";
  };
  return std::vector<std::string>{
      fmt::format("NVML {}: recovery action 0 (none), row remap pending {}, retired pages pending "
                  "{}, volatile uncorrectable ECC errors 0 with persistence mode on",
                  bus, known(n->remap_pending), known(n->retired_pages_pending)),
      fmt::format("CUDA {}: every step passed on this GPU", bus)};
}

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
    if (const auto now =
            spec.state_now_weighs && !active.empty() ? clean_now(c.facts, bus) : std::nullopt) {
      Hit hit{fmt::format("{}: logged {}; its state now is clean (NVML and CUDA): was it reset?",
                          label, describe(active)),
              evidence_of(active), bus};
      hit.evidence.insert(hit.evidence.end(), now->begin(), now->end());
      hit.severity = Severity::warn;
      hit.remedy = fmt::format("The GPU is kept: NVML and the CUDA probe find it clean now. Check "
                               "that it was reset since (`nvidia-smi -q -i {}`); if the Xid "
                               "returns, drain and reset it",
                               bus);
      hits.push_back(std::move(hit));
      active.clear();
    }
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

using EventFilter = std::function<bool(const LogEvent&)>;

// The facts with only the current boot's kernel-log events that keep() accepts.
inline Facts with_log_events(const Facts& f, const EventFilter& keep) {
  Facts out = f;
  for (auto& [bus, events] : out.log.gpu_events) {
    std::erase_if(events, [&keep](const LogEvent& e) { return !keep(e); });
  }
  std::erase_if(out.log.host_events, [&keep](const LogEvent& e) { return !keep(e); });
  return out;
}

// Runs check on the facts with only the events keep() accepts.
inline std::vector<Hit> check_on_events(const CheckFn& check, const RuleContext& c,
                                        const EventFilter& keep) {
  const Facts some = with_log_events(c.facts, keep);
  const RuleContext view{
      some, c.job, c.options, c.usable_gpus, c.recommended, c.host_failed, c.recommended_devices};
  return check(view);
}

// Site policy for one code (xid.N, sxid.N): `row` judges only the events mine() accepts, with the
// checks of the rows named in judges (each hit at its own row's severity, a GPU dropped only at
// fail), and those rows no longer see them. context() keeps further events in the row's view (the
// Xid 154 that settles an Xid). An id in judges that rules lacks (disabled) is skipped.
inline void add_code_rule(std::vector<Rule>& rules, Rule row,
                          std::span<const std::string_view> judges, const EventFilter& mine,
                          const EventFilter& context) {
  std::vector<std::pair<CheckFn, Severity>> inner;
  for (auto& r : rules) {
    if (std::find(judges.begin(), judges.end(), r.id) == judges.end()) {
      continue;
    }
    inner.emplace_back(r.check, r.severity);
    r.check = [check = r.check, mine](const RuleContext& c) {
      return check_on_events(check, c, [&mine](const LogEvent& e) { return !mine(e); });
    };
  }
  row.check = [inner, mine, context](const RuleContext& c) {
    std::vector<Hit> hits;
    for (const auto& [check, severity] : inner) {
      for (auto& h :
           check_on_events(check, c, [&](const LogEvent& e) { return mine(e) || context(e); })) {
        h.severity = h.severity.value_or(severity);
        if (h.gpu) {
          h.effect = *h.severity == Severity::fail ? Effect::gpu_unusable : Effect::none;
        }
        hits.push_back(std::move(h));
      }
    }
    return hits;
  };
  rules.push_back(std::move(row));
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

// A list of GPUs or bridges in one line: the first 16, then how many more (2000 GPUs would make
// one finding's text 30 KB).
inline std::string join_some(const std::vector<std::string>& items) {
  constexpr std::size_t k_shown = 16;
  if (items.size() <= k_shown) {
    return join(items);
  }
  return fmt::format("{} and {} more", fmt::join(items.begin(), items.begin() + k_shown, ", "),
                     items.size() - k_shown);
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
