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
       .explanation =
           "nouveau is the kernel's own open-source driver for NVIDIA GPUs. When it is loaded "
           "it takes the GPUs first, and the nvidia module cannot bind them or cannot load at "
           "all; CUDA works only with the nvidia driver. Confirm by hand: `lsmod | grep "
           "nouveau` and `lspci -nnk -d 10de:` (\"Kernel driver in use: nouveau\"). A "
           "host-level failure: the verdict is fail, no GPU is recommended, and it is named as "
           "the cause of driver.not-loaded.",
       .evidence = "The module names in proc/modules (a `nouveau` line).",
       .reads = {ProbeId::modules},
       .events = log_events({LogEventKind::nouveau}),
       .cases = {fires("nouveau"), silent("healthy-4gpu")},
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
