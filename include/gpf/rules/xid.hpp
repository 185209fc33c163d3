#pragma once
// Which rule judges an Xid (`explain 79`) or any kernel-log event (`explain-log`), and the site's
// row for one Xid (`xid.13`).
#include "gpf/facts/log_facts.hpp"
#include "gpf/rules/rule.hpp"

#include <optional>
#include <string_view>
#include <vector>

namespace gpf {

// An event of one Xid or SXid code (kind xid or sxid) as its line may put it: saying Fatal (true),
// Nonfatal (false) or neither. What the rows' `.events` are asked about where no log is at hand
// (explain, the site's rows for one code, the routing test).
LogEvent code_event(LogEventKind kind, unsigned code, std::optional<bool> fatal = std::nullopt);

// The rule that judges an Xid of this number in the kernel log (the row of unlisted Xids for one
// the catalog does not list).
std::string_view xid_rule_id(unsigned xid);
// The rule that judges this kernel-log event ("" for an event no rule judges on its own).
std::string_view log_event_rule_id(const LogEvent& event);

// Adds the row `id` ("xid.N", stable storage) that judges Xid N alone, as the xid.* rows judge it,
// and hides Xid N from those rows. Xids 54 and 79 are judged by gpu.* rows that read more than
// the log: false (nothing added) for them.
bool add_xid_code_rule(std::vector<Rule>& rules, std::string_view id, unsigned xid);

} // namespace gpf
