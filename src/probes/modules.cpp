// Probe "modules": which kernel modules are loaded (proc/modules).
#include "gpf/probes/parsers.hpp"
#include "gpf/probes/probes.hpp"

namespace gpf {

ProbeStatus probe_modules(const Host& host, const ProbeOptions&, Facts& facts) {
  ProbeStatus status;
  auto content = host.read_file("proc/modules");
  if (!content) {
    return status.fail("proc/modules: " + content.error().message);
  }
  facts.modules = parse_modules(content->data);
  return status;
}

} // namespace gpf
