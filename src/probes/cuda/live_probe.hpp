#pragma once
// The live CUDA stage: enumeration child, one child per GPU (all in parallel), then one
// multi-GPU child, all under one deadline. docs/cuda-probe.md describes the schedule.
#include "gpf/facts/cuda_facts.hpp"
#include "gpf/facts/visible_devices.hpp"
#include "gpf/util/result.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpf::cuda {

struct LiveProbeInput {
  std::string library = "libcuda.so.1";           // soname (loader search) or a path
  double timeout_s = 30;                          // the whole stage
  std::optional<std::string> job_visible_devices; // the job's CUDA_VISIBLE_DEVICES
  std::optional<std::string> job_device_order;    // the job's CUDA_DEVICE_ORDER
  std::vector<GpuRef> driver_gpus;                // GPUs the driver lists; those with a UUID are
                                                  // tested while enumeration still runs
};

// Share of the time left after enumeration that the per-GPU children may use when a multi-GPU
// test is to follow; the rest is kept for that test.
inline constexpr double k_per_gpu_share = 0.6;

// Error only when no child process could be started (pipe/fork failed).
Result<CudaFacts> run_live_probe(const LiveProbeInput& input);

} // namespace gpf::cuda
