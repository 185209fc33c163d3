#pragma once
// The "isolation" member of cuda.json and nvml.json: how a driver child was kept from changing the
// host, written and read.
#include "gpf/facts/isolation.hpp"
#include "gpf/util/result.hpp"

#include <nlohmann/json.hpp>

#include <optional>

namespace gpf::child {

// The "isolation" member of cuda.json and nvml.json: {"isolated": bool, "detail": string} or
// null when not known. Reading: null or absent is nullopt; a mistyped member is an error.
nlohmann::ordered_json isolation_json(const std::optional<ChildIsolation>& iso);
Result<std::optional<ChildIsolation>> isolation_from_json(const nlohmann::json& parent);

} // namespace gpf::child
