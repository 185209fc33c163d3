#pragma once
// Which rule judges an Xid, for `explain 79`, and the site's row for one Xid (`xid.13`).
#include "gpf/rules/rule.hpp"

#include <string_view>
#include <vector>

namespace gpf {

// The rule that judges an Xid of this number in the kernel log ("xid.unknown" for one the catalog
// does not list).
std::string_view xid_rule_id(unsigned xid);

// Adds the row `id` ("xid.N", stable storage) that judges Xid N alone, as the xid.* rows judge it,
// and hides Xid N from those rows. Xids 54 and 79 are judged by gpu.* rows that read more than
// the log: false (nothing added) for them.
bool add_xid_code_rule(std::vector<Rule>& rules, std::string_view id, unsigned xid);

} // namespace gpf
