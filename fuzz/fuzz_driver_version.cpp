// libFuzzer target: proc/driver/nvidia/version and sys/module/nvidia/version.
// Properties: no crash; the version text and line kept are valid UTF-8.
#include "fuzz_support.hpp"

#include "gpf/probes/parsers.hpp"

GPF_FUZZ_TARGET(driver_version) {
  const auto text = gpf::fuzz::as_text(data, size);
  gpf::DriverFacts proc;
  if (gpf::parse_driver_version_file(text, proc)) {
    gpf::fuzz::require(gpf::fuzz::is_valid_utf8(proc.version_text), "version text is valid UTF-8");
    gpf::fuzz::require(gpf::fuzz::is_valid_utf8(proc.version_line), "version line is valid UTF-8");
  }
  gpf::DriverFacts module;
  if (gpf::parse_module_version_file(text, module)) {
    gpf::fuzz::require(gpf::fuzz::is_valid_utf8(module.version_text),
                       "module version is valid UTF-8");
  }
  return 0;
}
