#pragma once
// The "topology" member of the JSON report's facts (docs/json-output.md, docs/report.schema.json).
#include "gpf/facts/topology_facts.hpp"

#include <nlohmann/json.hpp>

namespace gpf {
nlohmann::ordered_json topology_json(const TopologyFacts& topology);
} // namespace gpf
