#pragma once
// A small JSON Schema validator for the subset docs/report.schema.json uses: type, properties,
// required, additionalProperties, items, enum, const, minimum, minLength, $ref to "#/$defs/...".
// Returns the list of violations (empty = valid), each with its JSON pointer.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpf::test {
std::vector<std::string> validate_schema(const nlohmann::json& schema, const nlohmann::json& doc);
nlohmann::json load_json_file(const std::string& path);
} // namespace gpf::test
