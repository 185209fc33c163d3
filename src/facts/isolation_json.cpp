// The "isolation" member of cuda.json and nvml.json, written and read.
#include "gpf/facts/isolation_json.hpp"

#include "gpf/util/json_read.hpp"
#include "gpf/util/text.hpp"

namespace gpf::child {

nlohmann::ordered_json isolation_json(const std::optional<ChildIsolation>& iso) {
  if (!iso) {
    return nullptr;
  }
  return {{"isolated", iso->isolated}, {"detail", to_valid_utf8(iso->detail)}};
}

Result<std::optional<ChildIsolation>> isolation_from_json(const nlohmann::json& parent) {
  const JsonIn it = JsonIn(parent)["isolation"];
  if (it.absent()) {
    return std::optional<ChildIsolation>();
  }
  const auto isolated = it["isolated"].lenient<bool>();
  const auto detail = it["detail"].lenient<std::string>();
  if (!isolated || !detail) {
    return Error{"isolation is not {\"isolated\": true|false, \"detail\": \"...\"}"};
  }
  return std::optional<ChildIsolation>(ChildIsolation{*isolated, *detail});
}

} // namespace gpf::child
