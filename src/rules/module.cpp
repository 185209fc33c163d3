// Rules whose id starts with "module.": kernel modules that must not sit beside the NVIDIA driver.
#include "common.hpp"

namespace gpf {

std::span<const Rule> module_rules() {
  static const Rule rows[] = {
      {.id = "module.nouveau-loaded",
       .stage = Stage::host,
       .severity = Severity::fail,
       .title = "The nouveau driver is not loaded alongside NVIDIA GPUs",
       .remedy =
           "Blacklist nouveau (`blacklist nouveau` and `options nouveau modeset=0` in /etc/modprobe.d/), rebuild the initramfs and reboot",
       .source = "docs/sources.md#other-kernel-log-messages",
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         if (!c.facts.modules.has("nouveau")) {
           return {};
         }
         return {{"The nouveau driver is loaded; it takes NVIDIA GPUs away from the NVIDIA driver",
                  {"/proc/modules: nouveau"}}};
       }},
  };
  return rows;
}

} // namespace gpf
