#pragma once
// Site policy rows for one code (xid.N, sxid.N): a row that takes one code's events from the rows
// that judge its class. Internal to src/rules.
#include "gpf/rules/rule.hpp"

#include <algorithm>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

namespace gpf {

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

// Runs check, as the row `rule`, on the facts with only the events keep() accepts.
inline std::vector<Hit> check_on_events(const CheckFn& check, const RuleContext& c,
                                        const Rule* rule, const EventFilter& keep) {
  const Facts some = with_log_events(c.facts, keep);
  RuleContext view{
      some, c.job, c.options, c.usable_gpus, c.recommended, c.host_failed, c.recommended_devices};
  view.rule = rule;
  return check(view);
}

// The rows of `rules` that judge at least one of these events (their `.events`).
inline std::vector<std::string_view> judges_of(std::span<const Rule> rules,
                                               std::span<const LogEvent> events) {
  std::vector<std::string_view> ids;
  for (const auto& r : rules) {
    if (std::any_of(events.begin(), events.end(),
                    [&r](const LogEvent& e) { return r.events.judges(e); })) {
      ids.push_back(r.id);
    }
  }
  return ids;
}

// Site policy for one code (xid.N, sxid.N): `row` judges only the events mine() accepts, with the
// checks of the rows named in judges (each hit at its own row's severity, a GPU dropped only at
// fail), and those rows no longer see them. context() keeps further events in the row's view (the
// Xid 154 that settles an Xid). An id in judges that rules lacks (disabled) is skipped.
inline void add_code_rule(std::vector<Rule>& rules, Rule row,
                          std::span<const std::string_view> judges, const EventFilter& mine,
                          const EventFilter& context) {
  std::vector<Rule> inner; // the judging rows as they were: their checks, severities, .events
  for (auto& r : rules) {
    if (std::find(judges.begin(), judges.end(), r.id) == judges.end()) {
      continue;
    }
    inner.push_back(r);
    r.check = [check = r.check, mine](const RuleContext& c) {
      return check_on_events(check, c, c.rule, [&mine](const LogEvent& e) { return !mine(e); });
    };
  }
  row.check = [inner, mine, context](const RuleContext& c) {
    std::vector<Hit> hits;
    for (const auto& judge : inner) {
      for (auto& h : check_on_events(judge.check, c, &judge,
                                     [&](const LogEvent& e) { return mine(e) || context(e); })) {
        h.severity = h.severity.value_or(judge.severity);
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

} // namespace gpf
