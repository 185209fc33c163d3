#pragma once
// A subset of the built-in rules by id, for tests that judge one concern in isolation (the rows
// live in files by id prefix, so a concern such as "what the kernel log says" spans several).
#include "gpf/rules/rule.hpp"

#include <initializer_list>
#include <string_view>
#include <vector>

namespace gpf::test {

inline std::vector<Rule> rule_subset(std::initializer_list<std::string_view> ids) {
  std::vector<Rule> out;
  for (const auto& r : builtin_rules()) {
    for (auto id : ids) {
      if (r.id == id) {
        out.push_back(r);
      }
    }
  }
  return out;
}

// The rules that judge the kernel log's events.
inline const std::vector<Rule>& kernel_log_rules() {
  static const auto rules = rule_subset({"xid.reset-required",
                                         "xid.reboot-required",
                                         "xid.update-required",
                                         "xid.warning",
                                         "xid.application",
                                         "xid.informational",
                                         "xid.unknown",
                                         "xid.recovery-action",
                                         "rminit.adapter-failed",
                                         "gpu.fallen-off-bus",
                                         "gpu.bar-invalid",
                                         "gpu.not-supported",
                                         "gpu.not-supported-open-module",
                                         "gpu.power-cables",
                                         "gsp.firmware-load-failed",
                                         "driver.api-mismatch",
                                         "driver.probe-not-called",
                                         "driver.probe-failed",
                                         "driver.no-gpu-initialized",
                                         "gpu.crash-dump",
                                         "log.gpu-missing-from-driver",
                                         "log.not-readable",
                                         "log.earlier-boot",
                                         "log.damaged-input"});
  return rules;
}

// The rules that judge versions and architectures against the compatibility matrix.
inline const std::vector<Rule>& compat_rules() {
  static const auto rules = rule_subset({"cuda.driver-too-old",
                                         "cuda.minor-version-compat",
                                         "cuda.forward-compat",
                                         "cuda.version-not-in-matrix",
                                         "cuda.no-expected-version",
                                         "gpu.cuda-arch-unsupported",
                                         "gpu.open-module-unsupported",
                                         "gpu.needs-open-module",
                                         "gpu.driver-branch-unsupported",
                                         "gpu.forward-compat-unsupported",
                                         "gpu.model-not-in-matrix",
                                         "kernel.below-driver-floor",
                                         "kernel.release-not-judged",
                                         "driver.end-of-life",
                                         "driver.module-version-mismatch",
                                         "driver.library-version-mismatch",
                                         "driver.libcuda-stub-first",
                                         "driver.libraries-not-checked",
                                         "driver.libcuda-not-found",
                                         "driver.newer-than-data",
                                         "gpu.newer-than-data"});
  return rules;
}

} // namespace gpf::test
