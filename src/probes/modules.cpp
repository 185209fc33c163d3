// Probe "modules": which kernel modules are loaded (proc/modules).
#include "gpf/probes/parsers.hpp"
#include "gpf/probes/probes.hpp"

namespace gpf {

ProbeStatus probe_modules(const Host& host, const ProbeOptions&, Facts& facts) {
  ProbeStatus status{"modules", ProbeState::ok, {}, 0};
  auto content = host.read_file("proc/modules");
  if (!content) {
    status.state = ProbeState::error;
    status.message = "proc/modules: " + content.error().message;
    return status;
  }
  facts.modules = parse_modules(content->data);
  return status;
}

} // namespace gpf
