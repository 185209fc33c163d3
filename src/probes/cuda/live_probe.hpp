#pragma once
// The live CUDA stage: enumeration child, one child per GPU (all in parallel), then one
// multi-GPU child, all under one deadline. docs/cuda-probe.md describes the schedule.
#include "gpf/facts/cuda_facts.hpp"
#include "gpf/facts/visible_devices.hpp"
#include "gpf/util/result.hpp"
#include "probes/cuda/child_work.hpp"

#include <map>

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
  BandwidthRequest bandwidth;                     // the bandwidth step, for every GPU not busy
  std::string bandwidth_not_checked;              // why bandwidth.run is false ("" = not asked)
  ActiveRequest active;                           // the active step, for every GPU not busy
  std::string active_not_checked;                 // why active.run is false
  // GPUs other processes hold (bus id -> "PID (comm), …"): started and tested, never timed.
  std::map<std::string, std::string> busy;
};

// Share of the time left after enumeration that the per-GPU children may use when a multi-GPU
// test is to follow; the rest is kept for that test.
inline constexpr double k_per_gpu_share = 0.6;

// The bandwidth step's default sizes: 128 MiB per host copy, 64 MiB per peer copy, each direction
// timed 3 times (the best counts): large enough that a copy lasts milliseconds even on NVLink,
// small enough to pin and to fit beside a job's leftovers.
inline constexpr std::size_t k_bandwidth_bytes = 128u << 20;
inline constexpr std::size_t k_peer_bandwidth_bytes = 64u << 20;
// The smallest host copy the step still times when a memory cgroup leaves less than the default
// (memory_room.hpp): a copy of 32 MiB lasts over a millisecond on a PCIe 5.0 x16 link.
inline constexpr std::size_t k_bandwidth_min_bytes = 32u << 20;
inline constexpr int k_bandwidth_repeats = 3;
// The rate the budget's estimate of the step assumes, in GB/s: below any GPU's PCIe x16 link, so
// that the estimate errs long. An estimate of time, never a judgement of a figure.
inline constexpr double k_bandwidth_estimate_gbps = 2;

// Host memory (RAM, counted against a container's or cgroup's memory limit) the live stage may
// hold at once: what a memory limit must leave it (docs/cuda-probe.md#memory; the shipped
// Kubernetes manifests are checked against it by tests/unit/contrib_limits_test.cpp). The CUDA
// children run side by side (the enumeration, one per GPU, the multi-GPU one started beside them),
// and so do the NVML children (one for the system, one per GPU).
// The checker's own peak: bench/memory.sh fails above it.
inline constexpr std::size_t k_checker_host_bytes = 64u << 20;
// Per CUDA child: libcuda's private memory and a primary context's host-side state. Our allowance,
// on the generous side, not a figure NVIDIA publishes: measure a node with the cgroup's
// memory.peak (docs/cuda-probe.md#memory).
inline constexpr std::size_t k_cuda_child_host_bytes = 192u << 20;
// Per NVML child: libnvidia-ml and its queries (no context). Our allowance likewise.
inline constexpr std::size_t k_nvml_child_host_bytes = 32u << 20;

// Bytes of host memory the live CUDA and NVML stages may hold at once on `gpus` GPUs, with or
// without the bandwidth step (each per-GPU child pins k_bandwidth_bytes).
std::size_t host_memory_need_bytes(std::size_t gpus, bool bandwidth);
// The active step's memory bounds (docs/cuda-probe.md#active-step; its time per GPU is
// --active-time, default 2 s, the GPUs in parallel): a quarter of the free memory and at most
// 2 GiB. The patterns take milliseconds at HBM speed, so the time is mostly the driver's JIT.
inline constexpr double k_active_memory_fraction = 0.25;
inline constexpr std::size_t k_active_memory_cap = std::size_t{2} << 30;
// The active step starts no memory pattern later than this before the earliest per-GPU deadline.
inline constexpr double k_active_margin_s = 0.3;
// The multi-GPU child starts no timed copy later than this before the stage's deadline.
inline constexpr double k_timing_margin_s = 0.5;

// Seconds the bandwidth step may add to the live stage on `gpus` GPUs: the per-GPU children time
// their host copies side by side (and pin their buffers), the multi-GPU child every ordered pair
// one after the other.
double bandwidth_estimate_s(const BandwidthRequest& request, std::size_t gpus);

// Error only when no child process could be started (pipe/fork failed).
Result<CudaFacts> run_live_probe(const LiveProbeInput& input);

} // namespace gpf::cuda
