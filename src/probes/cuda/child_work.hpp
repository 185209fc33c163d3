#pragma once
// What the three kinds of CUDA children do. Each runs in its own forked process
// (probes/child/runner.hpp), loads the library itself and reports every step as it begins and ends
// (protocol.hpp); none of these functions may run in the parent.
#include "probes/cuda/protocol.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpf::cuda {

// Bytes allocated, set and copied per GPU (1 MiB).
inline constexpr std::size_t k_test_bytes = 1 << 20;
// A step's error name when the child's own resources ran out (no thread): a checker error.
inline constexpr std::string_view k_checker_resources = "CHECKER_RESOURCES";

// The bandwidth step a child is asked for: copies of `bytes` between pinned host memory and the
// GPU (`peer_bytes` between GPUs), each direction timed `repeats` times with CUDA events on the
// default stream, the best counting. Nothing is timed unless run.
struct BandwidthRequest {
  bool run = false;
  std::size_t bytes = 0;
  std::size_t peer_bytes = 0;
  int repeats = 0;
};

// The active step a per-GPU child is asked for (docs/cuda-probe.md#active-step): at most
// `seconds` of kernels after the copies, on a region of min(memory_fraction x free memory,
// memory_cap) bytes. Nothing runs unless run.
// `not_after` bounds it by the stage's schedule: no memory pattern starts past it, so the step
// never runs a GPU's child into its deadline (a hang verdict) for want of time.
struct ActiveRequest {
  bool run = false;
  double seconds = 0;
  double memory_fraction = 0;
  std::size_t memory_cap = 0;
  child::Clock::time_point not_after = child::Clock::time_point::max();
};

// The multi-GPU child's timed copies stop being started after this point (the stage's deadline
// less a margin): correctness first for every pair, then timing while the deadline allows.
using TimingUntil = child::Clock::time_point;

// Enumeration: load, cuDriverGetVersion, cuInit, device count, then one "device" event per
// device in CUDA's order (name, UUID, PCI bus id, compute capability, memory, compute mode).
void enumeration_child(const std::string& library, LineWriter& out);

// One GPU (the only one CUDA_VISIBLE_DEVICES shows it): cuInit, primary context, 1 MiB
// allocation, memset, host -> device -> host round trip checked byte for byte, the fabric
// allocation probe (its "fabric_alloc" step where the GPU says it supports fabric handles, and its
// "fabric" event), then (when asked)
// the "bandwidth" step and its "bandwidth" event, the active step's "module_load", "first_kernel",
// "memory_test" steps and its "active" event, release.
void gpu_child(const std::string& library, const BandwidthRequest& bandwidth,
               const ActiveRequest& active, LineWriter& out);

// The GPUs a multi-GPU child tests, as the parent tells it once enumeration has ended (the child
// itself starts at time 0, so that its cuInit runs beside the others'): per GPU, its ordinal among
// the devices CUDA_VISIBLE_DEVICES shows the child, its CUDA index (the label of its results) and
// whether its copies are timed (0: busy). On the wire one line: "ordinal:index:measure ...".
struct MultiGpuPlan {
  struct Gpu {
    int ordinal = 0;
    int cuda_index = 0;
    bool measure = false;
    bool operator==(const Gpu&) const = default;
  };
  std::vector<Gpu> gpus;
};
std::string encode_plan(const MultiGpuPlan& plan);
// nullopt for anything but well-formed triples (at least two GPUs, no ordinal twice).
std::optional<MultiGpuPlan> decode_plan(std::string_view line);

// Load and cuInit, then wait (until `wait_until`) for the plan on `plan`; then, on the GPUs it
// names: contexts and buffers on all of them (in parallel threads), then for every ordered pair
// peer access where cuDeviceCanAccessPeer allows it and a verified cuMemcpyPeer; then, when asked
// and until `timing_until`, timed cuMemcpyPeerAsync copies between every pair ("peer_timing" steps
// and "peer_bandwidth" events) whose GPUs are both measured. No plan: a "plan" step failed with
// k_checker_resources (the checker's own failure; a child the parent stopped never gets there).
void multi_gpu_child(const std::string& library, child::Letter& plan,
                     child::Clock::time_point wait_until, const BandwidthRequest& bandwidth,
                     TimingUntil timing_until, LineWriter& out);

} // namespace gpf::cuda
