// libFuzzer target: proc/driver/nvidia/params. Property: no crash.
#include "fuzz_support.hpp"

#include "gpf/probes/parsers.hpp"

GPF_FUZZ_TARGET(params) {
  const auto params = gpf::parse_params(gpf::fuzz::as_text(data, size));
  gpf::fuzz::require(params.size() <= size, "no more parameters than bytes");
  return 0;
}
