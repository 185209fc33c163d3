#pragma once
// The fixed pipeline of probes: each reads through the Host, parses, and records its status.
#include "gpf/facts/facts.hpp"
#include "gpf/host/host.hpp"

#include <optional>
#include <string>

namespace gpf {

struct ProbeOptions {
  std::optional<std::string> dmesg_file; // --dmesg FILE ("-" = stdin)
  std::optional<std::string> libcuda;    // --libcuda PATH
  bool no_cuda = false;                  // --no-cuda
  bool skip_busy = false;             // --skip-busy: no live CUDA probe while a process holds a GPU
  double cuda_timeout_s = 30;         // --timeout / --cuda-timeout (CUDA and NVML stages)
  std::optional<std::string> libnvml; // --libnvml PATH
  bool no_nvml = false;               // --no-nvml
  std::optional<std::string> expect_cuda; // --expect-cuda X.Y
};

// Runs every probe in order. Never throws for anything the host says; a probe that cannot read
// its input records ProbeState::error with the OS reason.
Facts collect_facts(const Host& host, const ProbeOptions& options);

// A probe's signature: read through host, fill facts, return its status (name, state, message).
// The pipeline times it.
using ProbeFn = ProbeStatus (*)(const Host& host, const ProbeOptions& options, Facts& facts);

} // namespace gpf
