#pragma once
// The "topology" member of the JSON report's facts (docs/json-output.md, docs/report.schema.json).
#include "gpf/probes/topology_facts.hpp"

#include <nlohmann/json.hpp>

namespace gpf {
nlohmann::ordered_json topology_json(const TopologyFacts& topology);
} // namespace gpf
