#pragma once
// Whether the multi-GPU child was stopped by the deadline before it could start, rather than hung:
// a fact about the CUDA stage that the probe's summary and the rules both read.
#include "gpf/facts/cuda_facts.hpp"

#include <optional>

namespace gpf {

struct MultiGpuCut {
  double in_init_ms = 0;      // how long the multi-GPU child had been in cuInit when killed
  double per_gpu_init_ms = 0; // the slowest cuInit among the per-GPU children of its GPUs
};

// The multi-GPU child was killed at the deadline inside its own cuInit, after less time than the
// per-GPU children of its GPUs needed for theirs: "not completed in time", never a hang. Nullopt
// otherwise (it ran, passed, failed, or hung past that time or in a later step).
std::optional<MultiGpuCut> multi_gpu_cut_in_init(const CudaFacts& cuda);

} // namespace gpf
