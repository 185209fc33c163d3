// The registry of probe rows: each probe adds its own row from its .cpp (ProbeRegistration), so a
// new probe touches no list elsewhere. Rows are kept sorted by order as they arrive.
#include "gpf/probes/probes.hpp"

#include <algorithm>

namespace gpf {
namespace {
// Function-local: registrations run during static initialisation, in no fixed order across files.
std::vector<ProbeRow>& rows() {
  static std::vector<ProbeRow> table;
  return table;
}
} // namespace

ProbeRegistration::ProbeRegistration(const ProbeRow& row) {
  auto& table = rows();
  const auto at =
      std::upper_bound(table.begin(), table.end(), row,
                       [](const ProbeRow& a, const ProbeRow& b) { return a.order < b.order; });
  table.insert(at, row);
}

const std::vector<ProbeRow>& probe_rows() {
  return rows();
}

} // namespace gpf
