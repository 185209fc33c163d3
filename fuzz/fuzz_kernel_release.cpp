// libFuzzer target: the kernel release (uname -r, proc/sys/kernel/osrelease).
// Properties: no crash; the release kept is valid UTF-8.
#include "fuzz_support.hpp"

#include "gpf/probes/parsers.hpp"

GPF_FUZZ_TARGET(kernel_release) {
  const auto facts = gpf::parse_kernel_release(gpf::fuzz::as_text(data, size));
  gpf::fuzz::require(gpf::fuzz::is_valid_utf8(facts.release), "release is valid UTF-8");
  return 0;
}
