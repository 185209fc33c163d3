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

// Enumeration: load, cuDriverGetVersion, cuInit, device count, then one "device" event per
// device in CUDA's order (name, UUID, PCI bus id, compute capability, memory, compute mode).
void enumeration_child(const std::string& library, LineWriter& out);

// One GPU (the only one CUDA_VISIBLE_DEVICES shows it): cuInit, primary context, 1 MiB
// allocation, memset, host -> device -> host round trip checked byte for byte, then (when asked)
// the "bandwidth" step and its "bandwidth" event, release.
void gpu_child(const std::string& library, const BandwidthRequest& bandwidth, LineWriter& out);

// Every GPU CUDA_VISIBLE_DEVICES shows it, labelled with their CUDA indices `cuda_indices`:
// contexts and buffers on all of them (in parallel threads), then for every ordered pair peer
// access where cuDeviceCanAccessPeer allows it and a verified cuMemcpyPeer; when asked, a timed
// cuMemcpyPeerAsync between the pair too, unless either GPU's `measure` entry is 0 (busy).
void multi_gpu_child(const std::string& library, const std::vector<int>& cuda_indices,
                     const BandwidthRequest& bandwidth, const std::vector<char>& measure,
                     LineWriter& out);

} // namespace gpf::cuda
