#pragma once
// Kernel-log events as the rows judge them: the class of an Xid, the rows' `.events` and which
// row judges an event (routed by log_event_rule_id). The two shapes of a log row are in
// log_rows.hpp. Internal to src/rules.
#include "gpf/knowledge/sxid_catalog.hpp"
#include "gpf/knowledge/xid_catalog.hpp"
#include "gpf/rules/rule.hpp"
#include "gpf/rules/xid.hpp"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace gpf {

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

// `.events` of a row: these event kinds (neither Xid nor SXid).
constexpr EventSet log_events(std::initializer_list<LogEventKind> kinds) {
  EventSet s;
  for (const auto k : kinds) {
    s.kinds |= std::uint64_t{1} << static_cast<unsigned>(k);
  }
  return s;
}

// `.events` of a row: Xids of these classes, and these event kinds.
constexpr EventSet xid_events(std::initializer_list<XidClass> classes,
                              std::initializer_list<LogEventKind> kinds = {}) {
  EventSet s = log_events(kinds);
  for (const auto c : classes) {
    s.xid_classes |= std::uint32_t{1} << static_cast<unsigned>(c);
  }
  return s;
}

// `.events` of a row: the Xids the catalog does not list.
constexpr EventSet unlisted_xid_events() {
  EventSet s;
  s.xid_unlisted = true;
  return s;
}

// `.events` of a row: SXids, fatal ones or the others.
constexpr EventSet sxid_events(bool fatal) {
  EventSet s;
  s.sxid = fatal ? EventSet::k_sxid_fatal : EventSet::k_sxid_nonfatal;
  return s;
}

// Events no row judges on its own: evidence that other findings quote (why a DMA set-up failed,
// a refused module, a link that went down, a module's symbols, a device that did not power up).
constexpr EventSet k_evidence_only_events =
    log_events({LogEventKind::dma_setup, LogEventKind::module_refused, LogEventKind::power_state,
                LogEventKind::link_down, LogEventKind::module_symbol});

// The last LogEventKind (as the kind names of src/report/log_json.cpp end): the routing test covers
// every kind up to it.
inline constexpr LogEventKind k_last_log_event_kind = LogEventKind::driver_failure;

// An event of one Xid or SXid code with each word its line may carry (Fatal, Nonfatal, none):
// whichever row judges any of them judges that code somewhere.
std::vector<LogEvent> code_samples(LogEventKind kind, unsigned code);

// One event of every kind, of every Xid and SXid the catalogs list (and one they do not), with
// each word a line can carry: what the routing must cover.
std::vector<LogEvent> every_event_shape();

// Where rows' `.events` fail "exactly one row per event, or evidence only": one line each.
std::vector<std::string> event_routing_problems(std::span<const Rule> rows);

// The rule that judges a kernel-log event: the row whose `.events` holds it ("" for evidence only).
inline std::string_view log_rule_id(const LogEvent& e) {
  return log_event_rule_id(e);
}

} // namespace gpf
