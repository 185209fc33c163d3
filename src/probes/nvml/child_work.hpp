#pragma once
// The NVML children (forked by probes/child/runner.hpp; never called in the parent). Each emits
// one JSON object per line: {"e":"begin","step":…} before every call, then "library",
// "load_error", "missing", "system" (init and system values), "gpu" (one GPU's facts), "traffic"
// (its counters around the CUDA stage), "done".
#include "gpf/probes/nvml_probe.hpp"
#include "probes/child/runner.hpp"

#include <string>

namespace gpf::nvml {

// The processes of one GPU a child reports (NVML's first ones): a GPU's facts are one line, whose
// protocol cap (64 KiB) 1,600 processes passed, and the child was then killed as a hung GPU. A
// list this long is named in probes[].cut.
inline constexpr std::size_t k_max_processes = 512;

// The most GPU instances asked for under one profile: the buffer nvmlDeviceGetGpuInstances fills
// must hold the profile's instanceCount (7 at most on the GPUs MIG runs on today).
inline constexpr unsigned k_max_gpu_instances = 64;

// Load, NVML version, init, driver version, device count; with query_every_gpu (the driver's GPU
// list is unknown) also every GPU by NVML index, one after another.
void system_child(const std::string& library, bool query_every_gpu, child::LineWriter& out);

// One GPU by PCI bus id: load, init, handle, then every health query ("gpu"); then the window
// around the CUDA stage ("traffic"): the counters before, clock samples until the gate is released
// (or give_up passes), the counters after.
void gpu_child(const std::string& library, const std::string& bus_id, const child::Gate& gate,
               child::Clock::time_point give_up, child::LineWriter& out);

} // namespace gpf::nvml
