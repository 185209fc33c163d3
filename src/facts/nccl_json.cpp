// nccl.json: written from and read into NcclFacts through its one field list (nccl_facts.hpp).
#include "gpf/facts/nccl_json.hpp"

#include "gpf/util/json_bounded.hpp"
#include "gpf/util/json_fields.hpp"
#include "gpf/util/json_read.hpp"

namespace gpf {

nlohmann::ordered_json nccl_facts_json(const NcclFacts& nccl) {
  return json_fields::to_json(nccl);
}

Result<NcclFacts> parse_nccl_json(std::string_view text) {
  TRY_ASSIGN(auto parsed, parse_json_bounded(text, k_max_json_elements, k_max_json_members));
  if (parsed.skipped > 0) {
    return Error{too_wide(parsed.skipped)};
  }
  NcclFacts facts;
  facts.ran = true; // a recorded file says the probe ran unless it says otherwise
  TRY(json_fields::read_object(JsonIn(parsed.doc, "", json_fields::k_string_cap), facts));
  return facts;
}

} // namespace gpf
