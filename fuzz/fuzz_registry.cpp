// libFuzzer target: proc/driver/nvidia/registry.
// Properties: no crash; the raw text and key names kept are valid UTF-8.
#include "fuzz_support.hpp"

#include "gpf/probes/parsers.hpp"

GPF_FUZZ_TARGET(registry) {
  const auto registry = gpf::parse_registry(gpf::fuzz::as_text(data, size));
  gpf::fuzz::require(gpf::fuzz::is_valid_utf8(registry.raw), "raw is valid UTF-8");
  for (const auto& key : registry.binary_keys) {
    gpf::fuzz::require(gpf::fuzz::is_valid_utf8(key), "key is valid UTF-8");
  }
  return 0;
}
