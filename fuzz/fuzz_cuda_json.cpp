// libFuzzer target: a snapshot's cuda.json (the CUDA probe's replay input).
// Properties: no crash; accepted facts render as JSON that parses again; a refusal says why.
#include "fuzz_support.hpp"

#include "gpf/facts/cuda_json.hpp"

GPF_FUZZ_TARGET(cuda_json) {
  const auto parsed = gpf::parse_cuda_json(gpf::fuzz::as_text(data, size));
  if (parsed) {
    const auto out = gpf::cuda_facts_json(*parsed).dump();
    gpf::fuzz::require(!nlohmann::json::parse(out, nullptr, false).is_discarded(),
                       "facts JSON parses");
  } else {
    gpf::fuzz::require(!parsed.error().message.empty(), "an error says what is wrong");
  }
  return 0;
}
