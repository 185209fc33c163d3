#pragma once
// How a driver child (CUDA, NVML) was kept from changing the host. NVIDIA's libraries repair what
// they find missing: they re-create /dev/char links, and run the set-user-ID nvidia-modprobe to
// load modules and create device nodes. A checker must not do either, so each child first shuts
// those doors (src/probes/child/isolation.cpp) and says whether it could.
#include <string>

namespace gpf {

struct ChildIsolation {
  bool isolated = false; // nothing the child does can create, remove or load anything on the host
  std::string detail;    // what was done, or the step that failed with its error

  // Every member (the JSON round-trip tests compare whole facts).
  bool operator==(const ChildIsolation&) const = default;
};

} // namespace gpf
