#pragma once
// The two shapes of a kernel-log row: one hit per GPU the driver lists (gpu_events_rule) or per
// host event (host_events_rule), each over the events the row being evaluated judges (its
// `.events`), with what settles an event (a driver reload, a later Xid 154, a clean state now).
// Internal to src/rules.
#include "gpf/knowledge/kernel_log_tables.hpp"
#include "gpf/rules/rule.hpp"

#include "evidence.hpp"
#include "log_events.hpp"

#include <fmt/format.h>

#include <cctype>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpf {

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

// One hit per GPU the driver lists: the events the row being evaluated judges (its `.events`).
// Events a later reload or Xid 154 settled become one info hit that says why they no longer count.
inline std::vector<Hit> gpu_events_rule(const RuleContext& c, const GpuRuleSpec& spec) {
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
      if (!c.rule->events.judges(e)) {
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

// Host-level events (naming no device) that the row being evaluated judges: one hit each, with
// remedy_of's remedy for an event that still counts (empty: the row's).
inline std::vector<Hit>
host_events_rule(const RuleContext& c, bool reload_clears,
                 const std::function<std::string(const LogEvent&)>& remedy_of = {}) {
  std::vector<Hit> hits;
  for (const auto& e : c.facts.log.host_events) {
    if (!c.rule->events.judges(e)) {
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
    } else if (remedy_of) {
      hit.remedy = remedy_of(e);
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

} // namespace gpf
