// The multi-GPU child cut short in its cuInit (multi_gpu_cut.hpp): every process pays cuInit, and
// the multi-GPU child starts only after enumeration, so a slow cuInit alone can use up its time.
#include "gpf/facts/multi_gpu_cut.hpp"

#include <algorithm>

namespace gpf {

std::optional<MultiGpuCut> multi_gpu_cut_in_init(const CudaFacts& cuda) {
  if (!cuda.multi_gpu_ran || cuda.multi_gpu_ok != false || !cuda.peers.empty()) {
    return std::nullopt;
  }
  const auto bad = std::find_if(cuda.multi_gpu_steps.begin(), cuda.multi_gpu_steps.end(),
                                [](const CudaStep& s) { return !s.ok; });
  if (bad == cuda.multi_gpu_steps.end() || !bad->timed_out || bad->name != "cuInit") {
    return std::nullopt;
  }
  double slowest = 0;
  bool measured = false;
  for (int i : cuda.multi_gpu_devices) {
    const auto d = std::find_if(cuda.devices.begin(), cuda.devices.end(),
                                [&](const CudaDevice& x) { return x.index == i; });
    if (d == cuda.devices.end()) {
      continue;
    }
    for (const auto& s : d->steps) {
      if (s.name == "cuInit" && s.ok) {
        slowest = std::max(slowest, s.duration_ms);
        measured = true;
      }
    }
  }
  if (!measured || bad->duration_ms >= slowest) {
    return std::nullopt; // longer in cuInit than any GPU needed alone: that is a hang
  }
  return MultiGpuCut{bad->duration_ms, slowest};
}

} // namespace gpf
