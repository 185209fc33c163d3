#pragma once
// The "log" member of the JSON facts: the kernel-log scanner's findings as data
// (docs/kernel-log.md).
#include "gpf/facts/log_facts.hpp"

#include <nlohmann/json.hpp>

namespace gpf {

nlohmann::ordered_json log_facts_json(const LogFacts& log);

} // namespace gpf
