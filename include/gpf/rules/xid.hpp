#pragma once
// Which rule judges an Xid (`explain 79`) or any kernel-log event (`explain-log`), and the site's
// row for one Xid (`xid.13`).
#include "gpf/facts/log_facts.hpp"
#include "gpf/rules/rule.hpp"

#include <string_view>
#include <vector>

namespace gpf {

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
