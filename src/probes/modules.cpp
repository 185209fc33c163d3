// Probe "modules": which kernel modules are loaded (proc/modules).
#include "gpf/probes/parsers.hpp"
#include "gpf/probes/probes.hpp"

namespace gpf {

ProbeStatus probe_modules(const Host& host, const ProbeOptions&, Facts& facts) {
  ProbeStatus status;
  // Absent is not unreadable: gVisor and some containers have no /proc/modules at all.
  if (host.absent("proc/modules")) {
    return status.skip(host.is_live() ? "this host has no /proc/modules (gVisor and some "
                                        "sandboxes): the module checks do not apply"
                                      : "the snapshot has no /proc/modules: the module checks do "
                                        "not apply");
  }
  auto content = host.read_file("proc/modules");
  if (!content) {
    return status.fail("could not read /proc/modules: " + content.error().message);
  }
  facts.modules = parse_modules(content->data);
  return status;
}

namespace {
const ProbeRegistration k_row{{"modules", "kernel modules", 200, probe_modules}};
} // namespace

} // namespace gpf
