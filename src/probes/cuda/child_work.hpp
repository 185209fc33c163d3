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

// Enumeration: load, cuDriverGetVersion, cuInit, device count, then one "device" event per
// device in CUDA's order (name, UUID, PCI bus id, compute capability, memory, compute mode).
void enumeration_child(const std::string& library, LineWriter& out);

// One GPU (the only one CUDA_VISIBLE_DEVICES shows it): cuInit, primary context, 1 MiB
// allocation, memset, host -> device -> host round trip checked byte for byte, release.
void gpu_child(const std::string& library, LineWriter& out);

// Every GPU CUDA_VISIBLE_DEVICES shows it, labelled with their CUDA indices `cuda_indices`:
// contexts and buffers on all of them (in parallel threads), then for every ordered pair peer
// access where cuDeviceCanAccessPeer allows it and a verified cuMemcpyPeer.
void multi_gpu_child(const std::string& library, const std::vector<int>& cuda_indices,
                     LineWriter& out);

} // namespace gpf::cuda
