#pragma once
// What the three kinds of CUDA children do. Each runs in its own forked process
// (probes/child/runner.hpp), loads the library itself and reports every step as it begins and ends
// (protocol.hpp); none of these functions may run in the parent.
#include "probes/cuda/protocol.hpp"

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
// allocation, memset, host -> device -> host round trip checked byte for byte, then (when asked)
// the "bandwidth" step and its "bandwidth" event, the active step's "module_load", "first_kernel",
// "memory_test" steps and its "active" event, release.
void gpu_child(const std::string& library, const BandwidthRequest& bandwidth,
               const ActiveRequest& active, LineWriter& out);

// Every GPU CUDA_VISIBLE_DEVICES shows it, labelled with their CUDA indices `cuda_indices`:
// contexts and buffers on all of them (in parallel threads), then for every ordered pair peer
// access where cuDeviceCanAccessPeer allows it and a verified cuMemcpyPeer; then, when asked and
// until `timing_until`, timed cuMemcpyPeerAsync copies between every pair ("peer_timing" steps and
// "peer_bandwidth" events), unless either GPU's `measure` entry is 0 (busy).
void multi_gpu_child(const std::string& library, const std::vector<int>& cuda_indices,
                     const BandwidthRequest& bandwidth, const std::vector<char>& measure,
                     TimingUntil timing_until, LineWriter& out);

} // namespace gpf::cuda
