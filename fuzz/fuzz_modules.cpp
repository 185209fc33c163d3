// libFuzzer target: proc/modules. Property: no crash.
#include "fuzz_support.hpp"

#include "gpf/probes/parsers.hpp"

GPF_FUZZ_TARGET(modules) {
  const auto modules = gpf::parse_modules(gpf::fuzz::as_text(data, size));
  gpf::fuzz::require(modules.loaded.size() <= size, "no more modules than bytes");
  return 0;
}
