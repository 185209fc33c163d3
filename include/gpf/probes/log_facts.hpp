#pragma once
// Facts from the kernel-log scanner (see the kernel-log issue). Filled in by probes/kernel_log.
namespace gpf {
struct LogFacts {
  bool ran = false;
};
} // namespace gpf
