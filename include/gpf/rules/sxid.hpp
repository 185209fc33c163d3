#pragma once
// The site's row for one NVSwitch SXid (`sxid.22003`).
#include "gpf/rules/rule.hpp"

#include <string_view>
#include <vector>

namespace gpf {

// Adds the row `id` ("sxid.N", stable storage) that judges SXid N alone, as the nvswitch.sxid-*
// rows judge it, and hides SXid N from those rows.
void add_sxid_code_rule(std::vector<Rule>& rules, std::string_view id, unsigned sxid);

} // namespace gpf
