#pragma once
// Which rule judges an Xid, for `explain 79`.
#include <string_view>

namespace gpf {

// The rule that judges an Xid of this number in the kernel log ("xid.unknown" for one the catalog
// does not list).
std::string_view xid_rule_id(unsigned xid);

} // namespace gpf
