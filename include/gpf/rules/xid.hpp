#pragma once
// Which rule judges an Xid (`explain 79`) or any kernel-log event (`explain-log`).
#include "gpf/facts/log_facts.hpp"

#include <string_view>

namespace gpf {

// The rule that judges an Xid of this number in the kernel log ("xid.unknown" for one the catalog
// does not list).
std::string_view xid_rule_id(unsigned xid);
// The rule that judges this kernel-log event ("" for an event no rule judges on its own).
std::string_view log_event_rule_id(const LogEvent& event);

} // namespace gpf
