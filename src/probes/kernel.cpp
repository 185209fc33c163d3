// Probe "kernel": the kernel release (uname -r live, proc/sys/kernel/osrelease in a snapshot).
#include "gpf/probes/parsers.hpp"
#include "gpf/probes/probes.hpp"

namespace gpf {

ProbeStatus probe_kernel(const Host& host, const ProbeOptions&, Facts& facts) {
  ProbeStatus status;
  if (!host.is_live() && host.absent("proc/sys/kernel/osrelease")) {
    return status.skip("the snapshot records no kernel release (/proc/sys/kernel/osrelease)");
  }
  auto release = host.kernel_release();
  if (!release) {
    return status.fail("cannot read the kernel release: " + release.error().message);
  }
  facts.kernel = parse_kernel_release(*release);
  if (!facts.kernel.version) {
    status.fail("kernel release not understood: \"" + facts.kernel.release + "\"");
  }
  return status;
}

namespace {
const ProbeRegistration k_row{{"kernel", "kernel release", 100, probe_kernel}};
} // namespace

} // namespace gpf
