#pragma once
// nccl.json: the NCCL facts as JSON (the same object as the report's facts.nccl). A snapshot
// records it, and the NCCL probe replays it under --root.
#include "gpf/facts/nccl_facts.hpp"
#include "gpf/util/result.hpp"

#include <nlohmann/json.hpp>

#include <string_view>

namespace gpf {

nlohmann::ordered_json nccl_facts_json(const NcclFacts& nccl);
// Reads nccl.json. Error (with the member at fault) on invalid JSON, a file wider than the caps
// or a mistyped member; missing members keep their defaults.
Result<NcclFacts> parse_nccl_json(std::string_view text);

} // namespace gpf
