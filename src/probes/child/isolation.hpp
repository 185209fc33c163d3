#pragma once
// Runs first in every driver child, before the library is loaded: shuts the doors through which
// NVIDIA's libraries change the host, and says whether it could (see isolation.cpp).
#include "gpf/facts/isolation.hpp"
#include "gpf/util/result.hpp"

#include <nlohmann/json.hpp>

#include <optional>

namespace gpf::child {

ChildIsolation isolate_from_host();

// The "isolation" member of cuda.json and nvml.json: {"isolated": bool, "detail": string} or
// null when not known. Reading: null or absent is nullopt; a mistyped member is an error.
nlohmann::ordered_json isolation_json(const std::optional<ChildIsolation>& iso);
Result<std::optional<ChildIsolation>> isolation_from_json(const nlohmann::json& parent);

} // namespace gpf::child
