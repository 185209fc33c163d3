// Which row judges a kernel-log event: derived from the rows' own `.events` (include/gpf/rules/
// rule.hpp), never from a table beside them.
#include "log_events.hpp"

#include <fmt/format.h>

namespace gpf {

bool EventSet::judges(const LogEvent& e) const {
  switch (e.kind) {
  case LogEventKind::xid:
    if (!e.xid) {
      return false;
    }
    if (!find_xid(*e.xid) && !e.line_fatal.value_or(false)) {
      return xid_unlisted;
    }
    return (xid_classes >> static_cast<unsigned>(xid_class(e)) & 1u) != 0;
  case LogEventKind::sxid: {
    // The catalog decides; a code it does not list follows its line's own Fatal / Non-fatal word.
    const SxidInfo* info = e.sxid ? find_sxid(*e.sxid) : nullptr;
    const bool fatal = info ? info->cls == SxidClass::fatal : e.line_fatal.value_or(false);
    return (sxid & (fatal ? k_sxid_fatal : k_sxid_nonfatal)) != 0;
  }
  default:
    return (kinds >> static_cast<unsigned>(e.kind) & 1u) != 0;
  }
}

LogEvent code_event(LogEventKind kind, unsigned code, std::optional<bool> fatal) {
  LogEvent e;
  e.kind = kind;
  (kind == LogEventKind::sxid ? e.sxid : e.xid) = code;
  e.line_fatal = fatal;
  return e;
}

std::vector<LogEvent> code_samples(LogEventKind kind, unsigned code) {
  return {code_event(kind, code, true), code_event(kind, code, false), code_event(kind, code)};
}

std::vector<LogEvent> every_event_shape() {
  std::vector<LogEvent> out;
  for (unsigned k = 0; k <= static_cast<unsigned>(k_last_log_event_kind); ++k) {
    LogEvent e;
    e.kind = static_cast<LogEventKind>(k);
    if (e.kind != LogEventKind::xid && e.kind != LogEventKind::sxid) {
      out.push_back(e);
    }
  }
  std::vector<unsigned> xids{99999}; // one the catalog does not list
  for (const auto& x : xid_table()) {
    xids.push_back(x.code);
  }
  std::vector<unsigned> sxids{99999};
  for (const auto& x : sxid_table()) {
    sxids.push_back(x.code);
  }
  for (const auto& [kind, codes] :
       {std::pair{LogEventKind::xid, &xids}, std::pair{LogEventKind::sxid, &sxids}}) {
    for (const unsigned code : *codes) {
      const auto samples = code_samples(kind, code);
      out.insert(out.end(), samples.begin(), samples.end());
    }
  }
  return out;
}

std::vector<std::string> event_routing_problems(std::span<const Rule> rows) {
  std::vector<std::string> problems;
  for (const auto& e : every_event_shape()) {
    std::vector<std::string_view> judges;
    for (const auto& r : rows) {
      if (r.events.judges(e)) {
        judges.push_back(r.id);
      }
    }
    const bool evidence_only = k_evidence_only_events.judges(e);
    const std::string what =
        e.kind == LogEventKind::xid
            ? fmt::format("Xid {} (line word {})", *e.xid,
                          e.line_fatal ? (*e.line_fatal ? "Fatal" : "Nonfatal") : "none")
        : e.kind == LogEventKind::sxid
            ? fmt::format("SXid {} (line word {})", *e.sxid,
                          e.line_fatal ? (*e.line_fatal ? "Fatal" : "Non-fatal") : "none")
            : fmt::format("event kind {}", static_cast<unsigned>(e.kind));
    if (evidence_only && !judges.empty()) {
      problems.push_back(
          fmt::format("{} is evidence only but judged by {}", what, fmt::join(judges, ", ")));
    } else if (!evidence_only && judges.size() != 1) {
      problems.push_back(fmt::format("{} is judged by {} rows{}{}", what, judges.size(),
                                     judges.empty() ? "" : ": ", fmt::join(judges, ", ")));
    }
  }
  return problems;
}

std::string_view log_event_rule_id(const LogEvent& event) {
  for (const Rule& r : builtin_rules()) {
    if (r.events.judges(event)) {
      return r.id;
    }
  }
  return {};
}

} // namespace gpf
