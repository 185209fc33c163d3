#pragma once
// The "compat" member of the facts JSON (probe "compat"): null when the probe did not run.
#include "gpf/facts/compat_facts.hpp"

#include <nlohmann/json.hpp>

namespace gpf {
nlohmann::ordered_json compat_json(const CompatFacts& compat);
} // namespace gpf
